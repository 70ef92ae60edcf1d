"""A golden case's time limit (``--case-timeout``, a case's ``timeout:``): a case that hangs fails
in bounded time naming the case, what it was doing and where it was stuck; the session goes on
with the next case; nothing of the hung run is written.

Each session that may hang runs in a process of its own, under a timeout of its own: a harness
without the limit fails these tests instead of hanging the test run."""

from __future__ import annotations

import time

import pytest

pytest_plugins = ["pytester"]

import openai  # noqa: E402,F401  (imported before pytester's in-process runs; see test_harness.py)
import vcr  # noqa: E402,F401

from tests.golden_project import project, silent_server  # noqa: E402,F401  (fixtures)

# a target that hangs where hang.txt says (nothing there: it answers as written)
HANGING_TARGET = '''
import asyncio
import signal
import socket
import threading
import time
from pathlib import Path

from openai import OpenAI

if Path("hang.txt").exists() and Path("hang.txt").read_text().split()[0] == "import":
    threading.Event().wait()  # at import

def agent(question):
    mode = Path("hang.txt").read_text().split() if Path("hang.txt").exists() else [""]
    if mode[0] == "event":
        threading.Event().wait()
    elif mode[0] == "sleep":
        time.sleep(float(mode[1]) if len(mode) > 1 else 10**6)
    elif mode[0] == "socket":
        with socket.create_connection(("127.0.0.1", int(mode[1]))) as connection:
            connection.recv(1)  # the server never answers
    elif mode[0] == "block":
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})  # no interrupt reaches this thread
        time.sleep(10**6)
    elif mode[0] == "async":
        return waits_forever()
    elif mode[0] == "provider":
        return OpenAI(base_url=mode[1], max_retries=0).responses.create(model="gpt-5.2", input=question).output_text
    return OpenAI(max_retries=0).responses.create(model="gpt-5.2", input=question).output_text


async def waits_forever():
    await asyncio.Event().wait()
'''

HANGS_CASE = """
id: hangs
target: "hanging:agent"
input: Anything in the pantry?
emulate:
  - text: Nothing today.
"""

# what a project with many cases has imported by the time its later cases run: the hanging case
# must not spend its second importing the HTTP stack before it reaches its hang
WARM = "import openai, httpx, httpx2, vcr.patch, rag_core.agent, rag_core.evals.recording.recorder\n"

_RECORDED: dict[str, bytes] = {}


@pytest.fixture
def hanging(project: pytest.Pytester) -> pytest.Pytester:
    """The throwaway project with a third case, ``hangs`` (first in order), whose target hangs
    once hang.txt says how; all three recorded against the emulator, cassettes and goldens."""
    (project.path / "hanging.py").write_text(HANGING_TARGET)
    (project.path / "fixtures" / "goldens" / "hangs.yaml").write_text(HANGS_CASE.lstrip())
    (project.path / "conftest.py").write_text(WARM)
    if not _RECORDED:
        project.runpytest("evals", "--record-mode=once", "--emulator", "--update-goldens").assert_outcomes(passed=3)
        _RECORDED.update(_files(project))
    for name, data in _RECORDED.items():
        (project.path / name).parent.mkdir(parents=True, exist_ok=True)
        (project.path / name).write_bytes(data)
    return project


def _files(project: pytest.Pytester) -> dict[str, bytes]:
    """Every cassette and golden of the project, byte for byte."""
    folders = [project.path / "cassettes", project.path / "fixtures" / "goldens"]
    return {str(p.relative_to(project.path)): p.read_bytes() for folder in folders
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _limit_hangs(project: pytest.Pytester, seconds: float | None) -> None:
    path = project.path / "fixtures" / "goldens" / "hangs.yaml"
    text = "\n".join(line for line in path.read_text().splitlines() if not line.startswith("timeout:")) + "\n"
    path.write_text(text + (f"timeout: {seconds:g}\n" if seconds is not None else ""))


def _hang(project: pytest.Pytester, how: str) -> None:
    (project.path / "hang.txt").write_text(how)


STILL = "threading.Event().wait()"

# (the session's options, how the target hangs, the phase named, the line it was stuck at, left behind)
HANGS = {
    "replay-event": ([], "event", "running the target hanging:agent (turn 1 of 1)", STILL, False),
    "replay-event-in-an-xdist-worker": (["-n", "1"], "event", "running the target hanging:agent (turn 1 of 1)", STILL,
                                        False),
    "replay-async": ([], "async", "running the target hanging:agent (turn 1 of 1)", "await asyncio.Event().wait()",
                     False),
    "replay-import": ([], "import", "importing and preparing the target hanging:agent", STILL, False),
    "update-goldens-socket": (["--update-goldens"], "socket", "running the target hanging:agent (turn 1 of 1)",
                              "connection.recv(1)", False),
    "record-socket": (["--record-mode=all", "--emulator", "--update-goldens"], "socket",
                      "running the target hanging:agent (turn 1 of 1)", "connection.recv(1)", False),
    "record-at-once-event": (["--record-mode=all", "--emulator", "--update-goldens", "--concurrency", "2"], "event",
                             "running the target hanging:agent (turn 1 of 1)", STILL, True),
    "record-at-once-async": (["--record-mode=all", "--emulator", "--update-goldens", "--concurrency", "2"], "async",
                             "running the target hanging:agent (turn 1 of 1)", "await asyncio.Event().wait()", True),
    "live-sleep": (["--live", "--emulator"], "sleep", "running the target hanging:agent (turn 1 of 1)", "time.sleep(",
                   False),
    "live-at-once-event": (["--live", "--emulator", "--concurrency", "2"], "event",
                           "running the target hanging:agent (turn 1 of 1)", STILL, True),
}


@pytest.mark.parametrize("name", list(HANGS))
def test_a_case_that_hangs_fails_naming_case_phase_and_stack_and_the_next_cases_pass(hanging, silent_server, name):
    options, how, phase, line, left_behind = HANGS[name]
    _hang(hanging, f"{how} {silent_server}" if how == "socket" else how)
    _limit_hangs(hanging, 1)  # the case's own limit, under the session's longer one
    before = _files(hanging)
    started = time.monotonic()
    result = hanging.runpytest_subprocess("evals", "--case-timeout=60", *options, timeout=120)
    output = result.stdout.str()
    result.assert_outcomes(failed=1, passed=2)
    assert time.monotonic() - started < 60, output
    result.stdout.fnmatch_lines([f"*hangs: timed out after 1 s (timeout: in fixtures/goldens/hangs.yaml) while {phase}*"])
    stack = output[output.index("stuck at (innermost call last):"):output.index("short test summary")]
    assert 'File "hanging.py", line' in stack and line in stack, stack
    assert ("its thread is left behind, given up" in output) == left_behind
    writes = "--update-goldens" in options or "--record-mode=all" in options
    assert ("nothing was written (cassettes/hangs.yaml and fixtures/goldens/hangs.golden.yaml are as they were)"
            in output) == writes
    # nothing half-written: the cassettes and goldens as they were, no staging file left
    assert _files(hanging) == before
    assert not [p for p in hanging.path.rglob("*") if p.name.endswith((".recording", ".staged", ".tmp"))]
    if "--record-mode=all" in options:  # the hung case is not counted as recorded or updated
        result.stdout.fnmatch_lines(["*3 cases, 1 failed, 0 new goldens, 0 goldens updated, 2 recorded*"])


@pytest.mark.parametrize("live", [False, True], ids=["emulator", "live-provider"])
def test_a_case_stuck_on_a_provider_request_names_the_request(hanging, silent_server, live, monkeypatch):
    """--case-timeout alone (the case sets none), while recording: the request in flight is named,
    whether the emulator takes its time answering it or a live provider never answers (under a
    --record-timeout longer than the case's limit)."""
    _limit_hangs(hanging, None)
    if live:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
        url = f"http://127.0.0.1:{silent_server}/v1"
        _hang(hanging, f"provider {url}")
        options, request = ["--record-timeout", "5"], f"POST {url}/responses"
    else:
        options, request = ["--emulator", "--emulator-latency", "30"], "POST https://api.openai.com/v1/responses"
    before = _files(hanging)
    result = hanging.runpytest_subprocess("evals", "--case", "hangs", "--case-timeout", "1", "--record-mode=all",
                                          "--update-goldens", *options, timeout=120)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*hangs: timed out after 1 s (--case-timeout) while running the target hanging:agent (turn 1 of 1), waiting "
        f"on a provider request: {request} (request #1 of its cassette); nothing was written*",
        "*1 cases, 1 failed, 0 new goldens, 0 goldens updated, 0 recorded*"])
    assert _files(hanging) == before
    assert not [p for p in hanging.path.rglob("*") if p.name.endswith((".recording", ".staged", ".tmp"))]


def test_a_cases_own_timeout_gives_it_longer_than_the_session(hanging):
    _hang(hanging, "sleep 1")
    _limit_hangs(hanging, 30)
    hanging.runpytest("evals", "--case", "hangs", "--case-timeout", "0.5").assert_outcomes(passed=1)
    _limit_hangs(hanging, None)  # without its own, the session's limit holds
    result = hanging.runpytest("evals", "--case", "hangs", "--case-timeout", "0.5")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*hangs: timed out after 0.5 s (--case-timeout) while running the target*"])
    _limit_hangs(hanging, 0.5)  # and "off" lifts every limit, the case's own too (a debugging session)
    hanging.runpytest("evals", "--case", "hangs", "--case-timeout", "off").assert_outcomes(passed=1)


def test_a_case_the_interrupt_cannot_reach_ends_the_session_saying_where_it_was_stuck(hanging):
    """A run that blocks the signal (as a C call that never returns would ignore it): the session
    cannot go on, and stops once the limit has passed again (5 s at least) rather than hang, naming the
    case and the stack."""
    _hang(hanging, "block")
    _limit_hangs(hanging, 1)
    before = _files(hanging)
    result = hanging.runpytest_subprocess("evals", "--record-mode=all", "--emulator", "--update-goldens", timeout=120)
    assert result.ret == 1
    error = result.stderr.str()
    assert "rag-core: hangs: timed out after 1 s (timeout: in fixtures/goldens/hangs.yaml) while running the target " \
           "hanging:agent (turn 1 of 1), and the interrupt has not reached it since" in error, error
    assert "This process ends here, without pytest's summary" in error
    assert 'File "hanging.py", line' in error and "time.sleep(10**6)" in error
    assert _files(hanging) == before
    assert not [p for p in hanging.path.rglob("*") if p.name.endswith((".recording", ".staged", ".tmp"))]


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf", "soon"])
def test_a_case_timeout_that_is_no_number_of_seconds_is_a_usage_error(project, value):
    result = project.runpytest("evals", f"--case-timeout={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--case-timeout={value}: give a number of seconds above 0, or off*"])


@pytest.mark.parametrize("value, says", [
    ("0", "`timeout` must be more than 0, got 0"), (".inf", "`timeout` must be a finite number, got .inf"),
    ("soon", "`timeout` must be a number, got 'soon'"), ("true", "`timeout` must be a number, got true")])
def test_a_case_timeout_that_is_no_number_of_seconds_fails_its_case_naming_the_field(project, value, says):
    path = project.path / "fixtures" / "goldens" / "with_tool.yaml"
    path.write_text(path.read_text() + f"timeout: {value}\n")
    result = project.runpytest("evals", "-k", "with_tool")
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines([f"*fixtures/goldens/with_tool.yaml:*: {says}*"])
