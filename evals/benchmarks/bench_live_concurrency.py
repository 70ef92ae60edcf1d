"""Live runs at once against one at a time, with the emulator standing in for a provider (run by hand).

    python -m evals.benchmarks.bench_live_concurrency [--repeat 32] [--latency 0.2] [--concurrency 8] [--runs 3]
        [--old PATH]

Builds a throwaway ``rag-core init`` project, records its example case against the emulator,
then runs ``pytest evals --live --emulator --repeat R --emulator-latency L`` with
``--concurrency 1`` and with ``--concurrency N``, each a fresh process, the two in turn, and
prints each one's median time and throughput (runs per second) and their ratio: of the runs (the
case's call phase, from ``--durations``), and of the whole process (the same start-up, imports
and collection are in both).
The latency is the emulator's: each answer takes that long, as a provider's would, so the ratio
shows how much of the waiting concurrency takes away. With ``--old``, the sessions of another
source tree of rag-core (a worktree of an earlier commit) are run too, the two trees' sessions
taking turns, and each tree's numbers printed.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from evals.benchmarks.bench_case_selection import project


Measured = tuple[float, float, float]  # (the whole process's wall, the runs' wall, the process's CPU) seconds


def seconds(folder: Path, repeat: int, latency: float, concurrency: int, code: Path | None = None) -> Measured:
    """(the whole process's wall time, the case's runs: its test's call phase as pytest's
    ``--durations`` reports it, start-up, imports and collection left out, the whole process's CPU
    time) of one live session; with ``code``, rag_core imported from that source tree."""
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(code.resolve()), *filter(None, [env.get("PYTHONPATH")])])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "evals", "-q", "-p", "no:cacheprovider", "--live",
                           "--emulator", "--repeat", str(repeat), "--emulator-latency", str(latency), "--concurrency",
                           str(concurrency), "--durations=1"], cwd=folder, capture_output=True, text=True, env=env)
    whole = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"the live session failed (exit {done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
    runs = re.search(r"([0-9.]+)s call ", done.stdout)
    assert runs is not None, done.stdout[-2000:]
    return whole, float(runs.group(1)), (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--old", type=Path, help="another rag-core source tree, measured in turns with this one")
    args = parser.parse_args()
    trees: dict[str, Path | None] = {"this tree": None, **({f"--old {args.old}": args.old} if args.old else {})}
    scratch = Path(tempfile.mkdtemp(prefix="rag-core-bench-live-"))
    try:
        folder = project(scratch / "project", 0)
        subprocess.run([sys.executable, "-m", "pytest", "evals", "-q", "--record-mode=once", "--emulator",
                        "--update-goldens"], cwd=folder, check=True, capture_output=True)
        for code in trees.values():  # compile and cache the modules once, as a user's second run finds them
            seconds(folder, 1, 0.0, 1, code)
        modes = (1, args.concurrency)
        sessions: dict[str, list[dict[tuple[int, int], Measured]]] = {name: [] for name in trees}
        for _ in range(args.runs):
            for name, code in trees.items():
                sessions[name].append({(mode, repeat): seconds(folder, repeat, args.latency, mode, code)
                                       for mode in modes for repeat in (args.repeat, 2 * args.repeat)})

        def report(name: str, what: str, spent: Callable[[dict[tuple[int, int], Measured], int], float]) -> None:
            runs = sessions[name]
            serial = statistics.median(spent(s, 1) for s in runs)
            concurrent = statistics.median(spent(s, args.concurrency) for s in runs)
            ratio = statistics.median(spent(s, 1) / spent(s, args.concurrency) for s in runs)
            print(f"{name}: {args.repeat} live runs, emulator latency {args.latency:g} s, {what}, medians of "
                  f"{args.runs}: --concurrency 1 {serial:.2f} s ({args.repeat / serial:.1f} runs/s); --concurrency "
                  f"{args.concurrency} {concurrent:.2f} s ({args.repeat / concurrent:.1f} runs/s); ratio {ratio:.2f}")

        for name in trees:
            report(name, "the runs (the case's call phase)", lambda s, mode: s[mode, args.repeat][1])
            report(name, "the whole process", lambda s, mode: s[mode, args.repeat][0])
            report(name, f"steady (the runs of a {2 * args.repeat}-run session less those of a {args.repeat}-run one)",
                   lambda s, mode: s[mode, 2 * args.repeat][1] - s[mode, args.repeat][1])
            for mode in modes:
                cpu = statistics.median(s[mode, args.repeat][2] for s in sessions[name])
                print(f"{name}: the whole process's CPU, --concurrency {mode}: {cpu:.2f} s (median of {args.runs})")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
