"""Meta-tests: a request belongs to its run, or to none. What a case leaves running (a thread it
started, a job it submitted to a pool made before any run) and that sends a request after the
case has ended, while another case runs, is never answered from nor written to the other case's
cassette: it is refused, and the session's warnings and run record name the case and the request.
"""

from __future__ import annotations

import json

import pytest

pytest_plugins = ["pytester"]

import openai  # noqa: E402,F401  (imported before pytester's in-process runs; see test_harness.py)
import vcr  # noqa: E402,F401

# the harness's modules too: a module first imported in one in-process run is imported again in the
# next, while its package keeps the first as an attribute, and the router and the plugin would
# read late requests from two different lists
import rag_core.evals.golden.concurrent_runs  # noqa: E402,F401
import rag_core.evals.golden.runner  # noqa: E402,F401

from tests.golden_project import project  # noqa: E402,F401  (a fixture)
import httpx  # noqa: E402

# HTTPX's transport as the library defines it, taken before any cassette patches it (vcrpy's
# stand-in copies its name and module: only identity tells them apart)
UNPATCHED = httpx.HTTPTransport.handle_request

# Case a leaves something running when a file ``late`` says so: ``thread`` or ``job`` (a job for
# a pool made at import), then, with runs at once, the file whose existence says that case a has
# ended (its committed cassette). What it left waits until case b runs, sends its request, and
# writes what became of it to ``late-outcome.txt``; case b waits for that before its own request.
LATE_AGENT = '''
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from openai import OpenAI

POOL = ThreadPoolExecutor(1)  # a framework's pool, made at import: before any run
b_running, late_sent = threading.Event(), threading.Event()


def _ask(text):
    return OpenAI(max_retries=0).responses.create(model="gpt-5.2", input=text).output_text


def _late(until):
    b_running.wait(30)
    deadline = time.monotonic() + 30
    while until and not os.path.exists(until[0]) and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        outcome = "answered: " + _ask("Sent by what case a left running.")
    except Exception as exc:
        outcome = f"{type(exc).__name__}: {exc}"
    with open("late-outcome.txt", "w") as out:
        out.write(outcome)
    late_sent.set()


def a(question, context=None):
    if os.path.exists("late"):
        how, *until = open("late").read().split()
        if how == "thread":
            threading.Thread(target=_late, args=(until,), daemon=True).start()
        else:
            POOL.submit(_late, until)
    return _ask(question)


def b(question, context=None):
    b_running.set()
    if os.path.exists("late"):
        assert late_sent.wait(30)
    return _ask(question)
'''

CASES = {
    "a_early": "id: a_early\ntarget: late_agent:a\ninput: First question.\nemulate: [{text: Answer of a.}]\n",
    # a second turn, which only a request of case a's would use: recorded with b's, it is no failure
    "b_later": "id: b_later\ntarget: late_agent:b\ninput: Second question.\nemulate: [{text: Answer of b.}, "
               "{text: Answer of b.}]\nallow_unused_turns: true\n",
}

WARNING = ("*after case a_early had ended, a thread or task it left running reached for the network: "
           "POST https://api.openai.com/v1/responses by * (refused)*")
LATE_TEXT = "Sent by what case a left running."


@pytest.fixture
def late(project, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for path in (project.path / "fixtures" / "goldens").glob("*.yaml"):
        path.unlink()  # only this file's cases
    (project.path / "late_agent.py").write_text(LATE_AGENT)
    for case_id, text in CASES.items():
        (project.path / "fixtures" / "goldens" / f"{case_id}.yaml").write_text(text)
    return project


def _leave(project, how: str) -> None:
    (project.path / "late").write_text(how)


def _refused(project) -> None:
    outcome = (project.path / "late-outcome.txt").read_text()
    assert outcome.startswith("NetworkBlockedError: network access blocked: case a_early has ended"), outcome


def _b_files(project) -> str:
    return ((project.path / "cassettes" / "b_later.yaml").read_text()
            + (project.path / "fixtures" / "goldens" / "b_later.golden.yaml").read_text())


def _record(project, *extra: str):
    return project.runpytest("evals", "--record-mode=rewrite", "--emulator", "--update-goldens", *extra)


def test_a_late_request_in_replay_is_refused_and_the_next_case_passes(late):
    """The request of a thread case a started, sent while case b replayed, was answered from b's
    cassette: b failed, told to record again (it passes alone)."""
    _record(late).assert_outcomes(passed=2)
    _leave(late, "thread")
    result = late.runpytest("evals")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([WARNING])
    _refused(late)
    record = json.loads(sorted((late.path / ".rag-core" / "runs").glob("*.json"))[-1].read_text())
    assert [each["case"] for each in record["late"]] == ["a_early"]
    assert "POST https://api.openai.com/v1/responses" in record["late"][0]["attempt"]


@pytest.mark.parametrize("how, extra", [
    ("thread", ()),
    ("job", ()),  # a job a_early submitted to a pool made before any run
    ("thread cassettes/a_early.yaml", ("--concurrency", "2")),
], ids=["thread", "pool-job", "at-once"])
def test_a_late_request_while_recording_is_written_into_no_other_cassette(late, how, extra):
    """Recording, the request was answered by the emulator as b's and written into b's cassette
    and golden."""
    _leave(late, how)
    result = _record(late, *extra)
    result.assert_outcomes(passed=2)
    assert LATE_TEXT not in _b_files(late)
    assert LATE_TEXT not in (late.path / "cassettes" / "a_early.yaml").read_text()
    result.stdout.fnmatch_lines([WARNING])
    _refused(late)
    (late.path / "late").unlink()
    late.runpytest("evals").assert_outcomes(passed=2)  # what was recorded replays


def test_a_late_request_of_a_live_run_is_refused(late):
    _leave(late, "thread")
    result = late.runpytest("evals", "--live", "--emulator")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([WARNING])
    _refused(late)


def test_a_run_the_harness_ends_while_its_thread_still_runs_takes_no_more_requests(tmp_path):
    """What a time limit does to a run: ended (``Run.end``) while its own thread is still inside
    its cassette, its requests from then on are refused and kept for the summary, and its cassette
    counts as open no longer: a request of no run goes to the one run still going."""
    import threading

    import httpx

    from rag_core.evals.emulator.provider import ScriptedProvider
    from rag_core.evals.recording import routing
    from rag_core.evals.recording.network import NetworkBlockedError, late_attempts
    from rag_core.evals.recording.recorder import CaseRecorder

    url = "https://api.openai.com/v1/chat/completions"
    a_open, a_ended, a_asked, b_open, b_asked, strays_asked = (threading.Event() for _ in range(6))
    outcomes: dict[str, object] = {}

    def ask(text: str) -> object:
        body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": text}]}
        try:
            return httpx.post(url, json=body).json()["choices"][0]["message"]["content"]
        except NetworkBlockedError as exc:
            return exc

    def run(name: str, opened: threading.Event, go: threading.Event, asked: threading.Event,
            answers: list[str]) -> None:
        with routing.own_run(name) as this:
            outcomes[f"{name} run"] = this
            recorder = CaseRecorder(tmp_path / f"{name}.yaml", "all")
            with recorder.use("sdk", ScriptedProvider([{"text": answer} for answer in answers], seed=name)):
                opened.set()
                assert go.wait(10)
                outcomes[name] = ask(f"From {name}.")
                asked.set()
                assert strays_asked.wait(10)

    slow = threading.Thread(target=run, args=("slow", a_open, a_ended, a_asked, ["slow"]))
    slow.start()
    assert a_open.wait(10)
    after = threading.Thread(target=run, args=("next", b_open, a_asked, b_asked, ["next", "stray"]))
    after.start()
    assert b_open.wait(10)
    outcomes["slow run"].end()  # the time limit: the run's thread is still inside its cassette
    a_ended.set()
    assert b_asked.wait(10)
    outcomes["no run's"] = ask("From no run.")  # this thread belongs to no run
    strays_asked.set()
    for thread in (slow, after):
        thread.join(20)
    assert "case slow has ended" in str(outcomes["slow"])
    assert (outcomes["next"], outcomes["no run's"]) == ("next", "stray")
    assert [(x.case, x.what, x.address) for x in late_attempts()] == [("slow", "POST", url)]
    import httpx

    assert httpx.HTTPTransport.handle_request is UNPATCHED  # no cassette open: patches undone


def test_late_attempts_round_trip_through_the_run_record():
    from rag_core.evals.runs.schema import LateAttempt, RunRecord

    record = RunRecord(id="x", started="2025-01-01T00:00:00Z",
                       late=[LateAttempt("a", "POST https://api.openai.com/v1/responses by httpx._client")])
    assert RunRecord.from_json(record.to_json()).late == record.late
    assert "late" not in RunRecord(id="x", started="").to_json()

