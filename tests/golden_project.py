"""A throwaway user project for meta-tests of the golden harness (run through pytester)."""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import socket
import textwrap
import threading
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[1]

TOOLS = '''
def lookup(term: str) -> str:
    """Look a term up in the pantry list."""
    return "fish sauce, palm sugar, tamarind"
'''

CASES = {
    "with_markdown": """
        id: with_markdown
        agent: {markdown: true, instructions: [Be brief.]}
        knowledge: {corpus: thai_recipes}
        input: How do I make pad thai?
        emulate:
          - tool_calls: [{name: search_knowledge_base, arguments: {query: pad thai}}]
          - text: Soak the noodles.
    """,
    "with_tool": """
        id: with_tool
        agent: {tools: ["pantry_tools:lookup"]}
        input: What is in the pantry?
        emulate:
          - tool_calls: [{name: lookup, arguments: {term: pantry}}]
          - text: Fish sauce and palm sugar.
    """,
}


# pytest plugins installed beside rag-core (the dev and frameworks extras) that no throwaway
# project uses: every pytest process loads them as it starts, and hypothesis's and langsmith's
# import their whole libraries to do so, much of what a short session costs
UNUSED_PLUGINS = ("-p", "no:hypothesispytest", "-p", "no:langsmith_plugin")
UNUSED_PLUGINS_OPTIONS = " ".join(UNUSED_PLUGINS)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A user project: two cases, a corpus, a tool module, the two-line test file."""
    pytester.makeini(f"[pytest]\naddopts = -p no:cacheprovider {UNUSED_PLUGINS_OPTIONS}\npythonpath = .\n")
    (pytester.path / "fixtures" / "corpora").mkdir(parents=True)
    shutil.copy(ROOT / "fixtures" / "corpora" / "thai_recipes.yaml", pytester.path / "fixtures" / "corpora")
    goldens = pytester.path / "fixtures" / "goldens"
    goldens.mkdir()
    for name, body in CASES.items():
        (goldens / f"{name}.yaml").write_text(textwrap.dedent(body))
    (pytester.path / "pantry_tools.py").write_text(TOOLS)
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "test_goldens.py").write_text(
        "def test_golden_case(golden_case, golden_harness):\n    golden_harness.check(golden_case)\n"
    )
    return pytester


def run_hint(project: pytest.Pytester, result: pytest.RunResult, lead: str) -> pytest.RunResult:
    """Run the command a failure message printed after ``lead``, as printed; it must end green."""
    line = next(line for line in result.stdout.lines if lead in line)
    command = shlex.split(line.split(lead, 1)[1].split(" (set the provider")[0].split(", then review")[0])
    assert command[0] == "pytest", line
    fixed = project.runpytest(*command[1:])
    assert fixed.ret == 0, fixed.stdout.str()
    return fixed


# Recordings made in this process, by what they were made from. Most meta-tests start from a
# freshly recorded project, and recording the same files under the same environment writes the
# same files, so later tests copy what the first one recorded (each recording took ~0.4 s).
_RECORDED: dict[str, dict[str, bytes]] = {}
_NOT_INPUTS = {"__pycache__", ".pytest_cache"}


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not _NOT_INPUTS & set(p.relative_to(folder).parts)}


def _recording_key(files: dict[str, bytes], extra: tuple[str, ...]) -> str:
    digest = hashlib.sha256(repr(extra).encode())
    # the environment can change a recording (keys, endpoints, planted secrets); pytest's own
    # per-test variables cannot, nor the home folder pytester points at each test's own folder
    environment = sorted((k, v) for k, v in os.environ.items()
                         if not k.startswith("PYTEST_") and k not in ("HOME", "USERPROFILE"))
    digest.update(repr(environment).encode())
    for name, data in files.items():
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def record(project: pytest.Pytester, *extra: str) -> None:
    """Record the project's cases against the emulator (goldens too); every case must pass."""
    before = _files(project.path)
    key = _recording_key(before, extra)
    if key in _RECORDED:
        for name, data in _RECORDED[key].items():
            target = project.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        return
    result = project.runpytest("evals", "--record-mode=once", "--emulator", "--update-goldens", *extra)
    result.assert_outcomes(passed=len(CASES))
    _RECORDED[key] = {name: data for name, data in _files(project.path).items() if before.get(name) != data}


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A loopback server that takes connections and never answers; yields its port."""
    listener = socket.create_server(("127.0.0.1", 0))
    taken: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                taken.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield listener.getsockname()[1]
    listener.close()
    for connection in taken:
        connection.close()
