"""Golden cases at scale: replaying thousands, and spreading them over xdist workers (run by hand).

    python -m evals.benchmarks.bench_golden_scale [--cases 3000] [--runs 3] [--warm 1] [--xdist-cases 1000] [--code OLD,.]

Throwaway ``rag-core init`` projects (``golden_project.py``): the example recorded once against
the emulator, and ``--cases`` copies of it with its cassette and golden. Each pytest session is a
fresh process; the sessions compared take turns, and each number is a median of ``--runs``.

* replay, per case: the CPU seconds of ``pytest evals`` over the copies, less those of the
  example alone, per copy; against pytest's own cost per test, measured the same way in the same
  run on a module of trivial parametrized tests (``-p no:rag_core``: pytest alone);
* ``-n 2`` against serial: ``pytest evals -n 2`` and ``pytest evals`` over ``--xdist-cases``
  copies, wall seconds (and CPU seconds, all processes together), and where each process (the
  serial session, the controller, each worker) spends its CPU: start-up (pytest and every
  plugin), collection, its first test (which imports the program's libraries), the other
  tests, the end (``process_cpu.py``).

``--code`` names source trees whose ``rag_core`` the sessions import (``.``: this one; another,
e.g. ``git archive HEAD | tar -x -C /tmp/old``: the committed code), each measured in the same
run, taking turns, against the same projects (made and recorded with this tree's code).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
from pathlib import Path

from evals.benchmarks import process_cpu
from evals.benchmarks.golden_project import cpu_in_turns, project, remove, run, trivial_project


def replay_per_case(scratch: Path, cases: int, runs: int, codes: list[Path], warm: int = 1) -> None:
    many, alone = project(scratch / "many", cases, recorded=True), project(scratch / "alone", 0, recorded=True)
    tests, one = trivial_project(scratch / "trivial", cases), trivial_project(scratch / "trivial-one", 1)
    pytest_alone = {"tests": (tests, [], False, None), "one": (one, [], False, None)}
    sessions = {**pytest_alone, **{f"{name} {code}": (folder, ["evals"], True, code)
                                   for code in codes for name, folder in (("many", many), ("alone", alone))}}
    cpu = cpu_in_turns(sessions, runs, warm)
    test = [(t - o) / cases * 1000 for t, o in zip(cpu["tests"], cpu["one"])]
    print(f"{cases} trivial tests: {statistics.median(cpu['tests']):.2f} s CPU, one {statistics.median(cpu['one']):.2f} s: "
          f"pytest's own per test {statistics.median(test):.2f} ms CPU (median of {runs})")
    for code in codes:
        many_cpu, alone_cpu = cpu[f"many {code}"], cpu[f"alone {code}"]
        case = [(m - a) / cases * 1000 for m, a in zip(many_cpu, alone_cpu)]
        print(f"[{code}] replay of {cases + 1} cases: {statistics.median(many_cpu):.2f} s CPU, the example alone "
              f"{statistics.median(alone_cpu):.2f} s: per case {statistics.median(case):.2f} ms CPU; ratio per case / "
              f"per test {statistics.median(c / t for c, t in zip(case, test)):.1f}")


# each process's CPU at the points of its session (process_cpu.py), as phases: (name, from, to)
PHASES = {"serial": [("start", None, "configured"), ("collection", "configured", "collected"),
                     ("first test", "collected", "first_test"), ("other tests", "first_test", "finished"),
                     ("end", "finished", "exited")],
          "controller": [("start", None, "configured"), ("while the workers run", "configured", "finished"),
                         ("end", "finished", "exited")]}
PHASES["worker"] = PHASES["serial"]


def xdist_against_serial(scratch: Path, cases: int, runs: int, codes: list[Path], warm: int = 1) -> None:
    folder = project(scratch / "xdist", cases, recorded=True)
    plugins = scratch / "plugins"  # the CPU plugin, importable whichever source tree is measured
    plugins.mkdir()
    shutil.copy(process_cpu.__file__, plugins / "rag_core_bench_cpu.py")
    marks = scratch / "cpu.jsonl"

    def session(code: Path, args: list[str]) -> tuple[tuple[float, float], dict[str, list[dict[str, float]]]]:
        marks.unlink(missing_ok=True)
        timed = run(folder, ["evals", *args, "-p", "rag_core_bench_cpu"], code=code,
                    env={"PYTHONPATH": str(plugins), process_cpu.ENVIRONMENT: str(marks)})
        processes: dict[str, list[dict[str, float]]] = {}
        for line in marks.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            kind = entry["process"] if entry["process"] in ("serial", "controller") else "worker"
            processes.setdefault(kind, []).append(entry["cpu"])
        return timed, processes

    for _ in range(warm):  # the file cache and the bytecode
        for code in codes:
            session(code, ["-n", "2"]), session(code, [])
    pairs: dict[Path, list[tuple[tuple[float, float], tuple[float, float]]]] = {code: [] for code in codes}
    phases: dict[Path, dict[str, dict[str, list[float]]]] = {code: {} for code in codes}
    for _ in range(runs):
        for code in codes:
            (spread, spread_processes), (serial, serial_processes) = session(code, ["-n", "2"]), session(code, [])
            pairs[code].append((spread, serial))
            for kind, entries in {**spread_processes, **serial_processes}.items():
                for cpu in entries:
                    for name, start, end in PHASES[kind]:
                        phases[code].setdefault(kind, {}).setdefault(name, []).append(
                            cpu[end] - (cpu[start] if start else 0.0))
    for code in codes:
        spread, serial = [p for p, _ in pairs[code]], [s for _, s in pairs[code]]
        print(f"[{code}] {cases + 1} cases, -n 2: median {statistics.median(w for w, _ in spread):.2f} s wall, "
              f"{statistics.median(c for _, c in spread):.2f} s CPU; serial: median "
              f"{statistics.median(w for w, _ in serial):.2f} s wall, {statistics.median(c for _, c in serial):.2f} s CPU; "
              f"wall ratio -n 2 / serial {statistics.median(p[0] / s[0] for p, s in pairs[code]):.2f} (median of {runs})")
        for kind in ("serial", "controller", "worker"):
            shown = ", ".join(f"{name} {statistics.median(values):.2f}" for name, values in phases[code][kind].items())
            print(f"[{code}]   CPU s of {'each ' if kind == 'worker' else 'the '}{kind} process (medians): {shown}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=3000, help="copies replayed serially (0: skip)")
    parser.add_argument("--xdist-cases", type=int, default=1000, help="copies run with -n 2 and serially (0: skip)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warm", type=int, default=1, help="unmeasured rounds first, to warm the file cache (0: none)")
    parser.add_argument("--code", default=".", help="comma-separated source trees to import rag_core from (default .)")
    args = parser.parse_args()
    codes = [Path(code) for code in args.code.split(",")]
    scratch = Path(tempfile.mkdtemp(prefix="rag-core-bench-golden-scale-"))
    try:
        if args.cases:
            replay_per_case(scratch, args.cases, args.runs, codes, args.warm)
        if args.xdist_cases:
            xdist_against_serial(scratch, args.xdist_cases, args.runs, codes, args.warm)
    finally:
        remove(scratch)


if __name__ == "__main__":
    main()
