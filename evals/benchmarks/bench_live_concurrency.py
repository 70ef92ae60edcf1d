"""Live runs at once against one at a time, with the emulator standing in for a provider (run by hand).

    python -m evals.benchmarks.bench_live_concurrency [--repeat 32] [--latency 0.2] [--concurrency 8] [--runs 3]

Builds a throwaway ``rag-core init`` project, records its example case against the emulator,
then runs ``pytest evals --live --emulator --repeat R --emulator-latency L`` with
``--concurrency 1`` and with ``--concurrency N``, each a fresh process, the two in turn, and
prints each one's median time and throughput (runs per second) and their ratio: of the runs (the
case's call phase, from ``--durations``), and of the whole process (the same start-up, imports
and collection are in both).
The latency is the emulator's: each answer takes that long, as a provider's would, so the ratio
shows how much of the waiting concurrency takes away.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from evals.benchmarks.bench_case_selection import project


def seconds(folder: Path, repeat: int, latency: float, concurrency: int) -> tuple[float, float]:
    """(the whole process's wall time, the case's runs: its test's call phase as pytest's
    ``--durations`` reports it, start-up, imports and collection left out) of one live session."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "evals", "-q", "-p", "no:cacheprovider", "--live",
                           "--emulator", "--repeat", str(repeat), "--emulator-latency", str(latency), "--concurrency",
                           str(concurrency), "--durations=1"], cwd=folder, capture_output=True, text=True)
    whole = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"the live session failed (exit {done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
    runs = re.search(r"([0-9.]+)s call ", done.stdout)
    assert runs is not None, done.stdout[-2000:]
    return whole, float(runs.group(1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="rag-core-bench-live-"))
    try:
        folder = project(scratch / "project", 0)
        subprocess.run([sys.executable, "-m", "pytest", "evals", "-q", "--record-mode=once", "--emulator",
                        "--update-goldens"], cwd=folder, check=True, capture_output=True)
        seconds(folder, 1, 0.0, 1)  # compile and cache the modules once, as a user's second run finds them
        modes = (1, args.concurrency)
        sessions = [{(mode, repeat): seconds(folder, repeat, args.latency, mode)
                     for mode in modes for repeat in (args.repeat, 2 * args.repeat)} for _ in range(args.runs)]

        def report(what: str, spent: Callable[[dict[tuple[int, int], tuple[float, float]], int], float]) -> None:
            serial = statistics.median(spent(s, 1) for s in sessions)
            concurrent = statistics.median(spent(s, args.concurrency) for s in sessions)
            ratio = statistics.median(spent(s, 1) / spent(s, args.concurrency) for s in sessions)
            print(f"{args.repeat} live runs, emulator latency {args.latency:g} s, {what}, medians of {args.runs}: "
                  f"--concurrency 1 {serial:.2f} s ({args.repeat / serial:.1f} runs/s); --concurrency "
                  f"{args.concurrency} {concurrent:.2f} s ({args.repeat / concurrent:.1f} runs/s); ratio {ratio:.2f}")

        report("the runs (the case's call phase)", lambda s, mode: s[mode, args.repeat][1])
        report("the whole process", lambda s, mode: s[mode, args.repeat][0])
        report(f"steady (the runs of a {2 * args.repeat}-run session less those of a {args.repeat}-run one)",
               lambda s, mode: s[mode, 2 * args.repeat][1] - s[mode, args.repeat][1])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
