"""The time limit's mechanism (``time_limit.py``, ``stuck.py``): the session's limits, the
alarm that interrupts what a subject blocks on in the main thread, the thread a run is left
behind in elsewhere, and what a stuck run is said to be doing. The sessions that use them are in
``test_case_timeout.py``."""

from __future__ import annotations

import signal
import socket
import threading
import time
from types import SimpleNamespace

import pytest

from rag_core.evals.recording import stuck
from rag_core.evals.golden.case import GoldenCase
from rag_core.evals.golden.time_limit import CI_DEFAULT, CaseTimedOut, CaseTimeouts, Limit, session_timeouts, within
from tests.golden_project import silent_server  # noqa: F401  (a fixture)


def test_the_session_limit_is_off_locally_and_five_minutes_under_ci():
    assert session_timeouts(None, {}) == CaseTimeouts()
    assert session_timeouts(None, {"CI": "true"}).seconds == CI_DEFAULT == 300
    assert session_timeouts("2.5", {"CI": "true"}) == CaseTimeouts(2.5)
    case = GoldenCase(id="c", input="hi", timeout=9)
    assert session_timeouts(None, {}).of(GoldenCase(id="c", input="hi")) is None
    assert session_timeouts(None, {}).of(case).seconds == 9  # a case's own, with no session limit
    assert session_timeouts("2", {}).of(case).seconds == 9  # over the session's
    assert session_timeouts("off", {"CI": "1"}).of(case) is None  # off: none at all
    for bad in ("0", "-3", "nan", "inf", "1e999", "", "soon"):
        with pytest.raises(ValueError, match="give a number of seconds above 0, or off"):
            session_timeouts(bad, {})


def _subject() -> SimpleNamespace:
    return SimpleNamespace(name="t:run", spec="t:run")


def _stuck_in(wait) -> CaseTimedOut:
    """``wait()`` run as a subject within half a second; the CaseTimedOut it ends with."""
    def play() -> None:
        with stuck.running(_subject(), [0], 1):
            wait()

    started = time.monotonic()
    with pytest.raises(CaseTimedOut) as failure:
        within("c", Limit(0.5, "--case-timeout"), play)
    assert time.monotonic() - started < 10
    return failure.value


def test_the_alarm_interrupts_what_a_subject_blocks_on(silent_server):
    lock = threading.Lock()
    lock.acquire()
    waits = {"threading.Event().wait()": lambda: threading.Event().wait(),
             "time.sleep(10**6)": lambda: time.sleep(10**6),
             "lock.acquire()": lambda: lock.acquire(),
             "recv(1)": lambda: socket.create_connection(("127.0.0.1", silent_server)).recv(1)}
    for line, wait in waits.items():
        text = str(_stuck_in(wait))
        assert text.startswith("c: timed out after 0.5 s (--case-timeout) while running the target t:run (turn 1 of 1)")
        assert line in text and "test_time_limit.py" in text, text
    assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_subject_that_catches_the_interrupt_and_goes_on_is_interrupted_again():
    caught = []

    def stubborn() -> None:
        try:
            threading.Event().wait()
        except BaseException as exc:  # what no subject should do; the interrupt comes again
            caught.append(exc)
            threading.Event().wait()

    text = str(_stuck_in(stubborn))
    assert len(caught) == 1 and "threading.Event().wait()" in text


def test_the_alarm_puts_back_the_handler_and_timer_it_found():
    def other(signum, frame):
        raise AssertionError("the other timer fired during the case")

    previous = signal.signal(signal.SIGALRM, other)
    signal.setitimer(signal.ITIMER_REAL, 30)
    try:
        _stuck_in(lambda: threading.Event().wait())
        assert signal.getsignal(signal.SIGALRM) is other
        assert 25 < signal.getitimer(signal.ITIMER_REAL)[0] <= 30
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_outside_the_main_thread_the_run_is_left_behind_given_up(tmp_path):
    """In a worker thread no signal can stop the run: it goes in a thread of its own, and is given
    up at its limit; its recorder writes nothing after that, and its cassette refuses requests."""
    released = threading.Event()
    late: list[BaseException] = []
    recorder = SimpleNamespace(ended=threading.Event(), end=lambda: recorder.ended.set())
    cassette = SimpleNamespace(can_play_response_for=lambda request: True, play_response=lambda request: {},
                               append=lambda request, response: None)

    def play() -> None:
        stuck.watch_requests(recorder, cassette)
        with stuck.running(_subject(), [0], 1):
            released.wait()
        try:  # the run goes on once released, late: its request is refused
            cassette.can_play_response_for(SimpleNamespace(method="POST", uri="https://api.openai.com/v1/responses"))
        except stuck.RunEnded as exc:
            late.append(exc)

    failures: list[CaseTimedOut] = []

    def worker() -> None:
        try:
            within("c", Limit(0.5, "--case-timeout"), play)
        except CaseTimedOut as exc:
            failures.append(exc)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(10)
    assert not thread.is_alive() and failures
    text = str(failures[0])
    assert "while running the target t:run (turn 1 of 1); its thread is left behind, given up" in text
    assert "released.wait()" in text
    assert recorder.ended.is_set()
    released.set()
    deadline = time.monotonic() + 10
    while not late and time.monotonic() < deadline:
        time.sleep(0.01)
    assert "POST https://api.openai.com/v1/responses was sent after the case had overrun its time limit" in str(late[0])


def test_a_run_left_behind_has_ended_for_routing_and_the_network_guard_too():
    """The runs begun inside a run given up (a case's cassette and guard, what its threads
    carry) have ended with it: whatever its code sends later, through any client, is late
    (``run_binding``), not only what goes through the cassettes it opened."""
    from rag_core.evals.recording import run_binding

    released, seen = threading.Event(), []

    def play() -> None:
        with run_binding.running("c") as inner, stuck.running(_subject(), [0], 1):
            released.wait()
            seen.append((inner.ended, run_binding.current_run() is inner))

    failures: list[CaseTimedOut] = []

    def worker() -> None:
        try:
            within("c", Limit(0.5, "--case-timeout"), play)
        except CaseTimedOut as exc:
            failures.append(exc)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(10)
    assert failures
    released.set()
    deadline = time.monotonic() + 10
    while not seen and time.monotonic() < deadline:
        time.sleep(0.01)
    assert seen == [(True, True)]


def test_a_request_in_flight_is_named_without_its_credentials():
    run = stuck.Whereabouts("c")
    cassette = SimpleNamespace(can_play_response_for=lambda request: False, play_response=lambda request: {},
                               append=lambda request, response: None)
    recorder = SimpleNamespace(end=lambda: None)
    request = SimpleNamespace(method="POST", uri="https://generativelanguage.googleapis.com/v1beta/models/x?key=AIza"
                                                 "SyA-not-a-real-key-0123456789abcdef")
    with stuck.tracking(run):
        stuck.watch_requests(recorder, cassette)
        cassette.can_play_response_for(request)
        [(_, _, flight)] = run.in_flight()
        assert flight.method == "POST" and flight.number == 1 and "AIzaSy" not in flight.url
        cassette.append(request, {})
        assert run.in_flight() == []


def test_a_timer_due_before_the_case_limit_is_left_to_fire():
    """pytest-timeout's timer, say, due first: the case's limit arms nothing, and that timer fires."""
    class Other(Exception):
        pass

    def other(signum, frame):
        raise Other

    previous = signal.signal(signal.SIGALRM, other)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        with pytest.raises(Other):
            within("c", Limit(30, "--case-timeout"), lambda: threading.Event().wait())
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("phase, says", [
    (lambda: stuck.preparing(SimpleNamespace(name="the agent", spec=None)), "preparing the agent (building its model)"),
    (lambda: stuck.preparing(SimpleNamespace(name="m:f", spec="m:f")), "importing and preparing the target m:f"),
    (lambda: stuck.running(SimpleNamespace(name="the agent", spec=None), [0, 3], 3), "running the agent (turn 2 of 3)"),
    (lambda: stuck.judging(SimpleNamespace(label="faithfulness")), "running the judges (the faithfulness judge)"),
])
def test_each_phase_is_named(phase, says):
    def play() -> None:
        with phase():
            threading.Event().wait()

    with pytest.raises(CaseTimedOut) as failure:
        within("c", Limit(0.3, "--case-timeout"), play)
    assert str(failure.value).startswith(f"c: timed out after 0.3 s (--case-timeout) while {says}\n")


def test_time_up_while_the_harness_works_stops_the_run_before_its_subject_begins():
    """The interrupt is not raised into the harness's own work (a cassette half opened); the run
    stops as it reaches the subject, or at its end."""
    began: list[bool] = []

    def play() -> None:
        deadline = time.monotonic() + 0.6
        while time.monotonic() < deadline:  # the harness's own work: not interrupted
            pass
        with stuck.running(_subject(), [0], 1):
            began.append(True)

    with pytest.raises(CaseTimedOut) as failure:
        within("c", Limit(0.2, "--case-timeout"), play)
    assert not began
    assert "while the harness's own work around the subject" in str(failure.value)
