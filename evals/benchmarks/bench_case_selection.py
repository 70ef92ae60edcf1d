"""What selecting one case costs in a project with many (run by hand).

    python -m evals.benchmarks.bench_case_selection [--cases 3000] [--runs 5] [--warm 1]

Builds a throwaway ``rag-core init`` project, copies its example case ``--cases`` times
(``golden_project.py``), and times ``pytest evals --case <one> --collect-only`` there and in the
same project with the example alone: each a fresh process, the two in turn, the CPU time of each
(user + system, the child's own accounting: a busy machine does not inflate it). Under ``--case``
the other files are only skimmed (``harness/discovery.py``), and pytest still makes a deselected
test of each, so this is the per-file cost of skimming a case file and of pytest's own item.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from evals.benchmarks.golden_project import project


def cpu_seconds(folder: Path) -> float:
    """One collection in a fresh process, its CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "pytest", "evals", "--case", "example_agentic_rag", "--collect-only", "-q"],
                   cwd=folder, check=True, capture_output=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--warm", type=int, default=1, help="unmeasured runs first, to warm the file cache (0: none)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="rag-core-bench-selection-"))
    try:
        many, alone = project(scratch / "many", args.cases), project(scratch / "alone", 0)
        for _ in range(args.warm):  # the file cache and pytest's own caches
            cpu_seconds(many), cpu_seconds(alone)
        pairs = [(cpu_seconds(many), cpu_seconds(alone)) for _ in range(args.runs)]
        many_s = statistics.median(m for m, _ in pairs)
        alone_s = statistics.median(a for _, a in pairs)
        ratio = statistics.median(m / a for m, a in pairs)
        print(f"--case X among {args.cases + 1} cases: {many_s:.2f} s CPU (median of {args.runs}); the case alone: "
              f"{alone_s:.2f} s; ratio {ratio:.2f} (per extra case file: {(many_s - alone_s) / args.cases * 1e3:.2f} ms)")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
