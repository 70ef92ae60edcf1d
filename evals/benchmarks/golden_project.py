"""Throwaway ``rag-core init`` projects with many golden cases, for the harness benchmarks.

Every copy is the init project's example case under another id; with ``recorded``, the example
is recorded once against the emulator and each copy gets that cassette and golden (neither
names the case's id), so every copy replays as the example does. Each copy's cassette starts
with a comment naming it: the harness parses a cassette text once per process, and copies of
one text would all share that parse, as real cassettes do not.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

EXAMPLE = "example_agentic_rag"
# as a user runs it: the project's own settings, pytest's cache and rag-core's run record on
PYTEST = [sys.executable, "-m", "pytest", "-q"]


def project(folder: Path, copies: int, recorded: bool = False, example: str | None = None,
            files: dict[str, str] | None = None) -> Path:
    """The init project with ``copies`` copies of its example case; ``example``, if given, is the
    case file written in the example's place (its id ``EXAMPLE``), and ``files`` more files of the
    project (a program the case names as its target), by path."""
    subprocess.run([sys.executable, "-c", "import sys; from rag_core.cli import main; sys.exit(main(sys.argv[1:]))",
                    "init", str(folder)], check=True, capture_output=True)
    goldens, cassettes = folder / "fixtures" / "goldens", folder / "cassettes"
    for name, text in (files or {}).items():
        (folder / name).write_text(text)
    if example is not None:
        (goldens / f"{EXAMPLE}.yaml").write_text(example)
    if recorded:
        run(folder, ["evals", "--record-mode=once", "--emulator"])
    example = (goldens / f"{EXAMPLE}.yaml").read_text()
    golden = (goldens / f"{EXAMPLE}.golden.yaml").read_text() if recorded else None
    cassette = (cassettes / f"{EXAMPLE}.yaml").read_text() if recorded else None
    for number in range(copies):
        name = f"copy_{number:05d}"
        (goldens / f"{name}.yaml").write_text(example.replace(f"id: {EXAMPLE}", f"id: {name}"))
        if recorded:
            (goldens / f"{name}.golden.yaml").write_text(golden)
            (cassettes / f"{name}.yaml").write_text(f"# {name}\n{cassette}")
    return folder


def trivial_project(folder: Path, tests: int) -> Path:
    """``tests`` tests that do nothing, in one module: pytest's own cost per test."""
    folder.mkdir(parents=True)
    (folder / "pytest.ini").write_text("[pytest]\n")
    (folder / "test_trivial.py").write_text(
        "import pytest\n\n\n"
        f"@pytest.mark.parametrize('number', range({tests}))\n"
        "def test_nothing(number):\n    pass\n")
    return folder


def run(folder: Path, args: list[str], plugins: bool = True, code: Path | None = None,
        env: dict[str, str] | None = None) -> tuple[float, float]:
    """One pytest session in a fresh process: (wall seconds, CPU seconds of it and its children,
    xdist workers included). Without ``plugins``, rag-core's own are not loaded; with ``code``, the
    ``rag_core`` package is imported from that source tree (another version, to compare); ``env``
    is added to the environment (its ``PYTHONPATH`` after ``code``)."""
    command = PYTEST + args + ([] if plugins else ["-p", "no:rag_core", "-p", "no:rag_core_retrieval"])
    added = env or {}
    paths = [str(code.resolve()) if code is not None else None,  # ahead of the installed package (and xdist workers inherit it)
             added.get("PYTHONPATH"), os.environ.get("PYTHONPATH")]
    env = {**os.environ, **added, "PYTHONPATH": os.pathsep.join(filter(None, paths))}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=env)  # bytecode cached, as users have it
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} in {folder} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


# a pytest session to time: (folder, args, with rag-core's plugins, the source tree to import rag_core from)
Session = tuple[Path, list[str], bool, Path | None]


def cpu_in_turns(sessions: dict[str, Session], runs: int, warm: int = 1) -> dict[str, list[float]]:
    """Each session's CPU seconds in ``runs`` rounds, the sessions taking turns in each round so
    that all of them see the same machine; ``warm`` unmeasured rounds first (the file cache and
    the bytecode)."""
    for _ in range(warm):
        for folder, args, plugins, code in sessions.values():
            run(folder, args, plugins, code)
    cpu: dict[str, list[float]] = {name: [] for name in sessions}
    for _ in range(runs):
        for name, (folder, args, plugins, code) in sessions.items():
            cpu[name].append(run(folder, args, plugins, code)[1])
    return cpu


def remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
