"""One loop makes a live run or a recording again while its provider fails it (``retrying.py``),
under the provider's adaptive limit (``live_limits.py``), and stops when the session does."""

from __future__ import annotations

import threading
import time

import pytest

from rag_core.evals.recording.provider_limits import MAX_PAUSE, AdaptiveLimit, LiveRunsStopped
from rag_core.evals.recording.throttling import Pushback
from rag_core.evals.recording.retrying import Tried, asked_wait, retried

PUSHED = Pushback("POST", "/v1/responses", 503)  # no Retry-After: the provider named no wait


def tries(*outcomes: Tried) -> tuple[list[Tried], callable]:
    made: list[Tried] = []

    def make() -> Tried:
        made.append(outcomes[len(made)])
        return made[-1]

    return made, make


def test_a_503_that_names_no_wait_is_retried_after_a_backoff_not_at_once():
    """The wait asked for was 0.0 where the provider named none: three retries in a row, at once."""
    waits: list[float] = []
    failed = Tried("first", pushbacks=[PUSHED], pushed_back=True, provider_failed=True, asked=asked_wait([PUSHED]))
    for spread, expected in ((0.0, [0.5, 1.0]), (1.0, [1.0, 2.0])):  # the backoff doubles; jitter adds up to as much
        waits.clear()
        _, make = tries(failed, failed, Tried("made"))
        tried = retried(make, AdaptiveLimit(4), 2, threading.Event(), pause=lambda s: waits.append(s) or True,
                        jitter=lambda: spread)
        assert tried.value == "made" and tried.retries == 2
        assert asked_wait([PUSHED]) is None and waits == expected


def test_the_wait_a_provider_asked_for_is_the_longest_it_named():
    asked = [Pushback("POST", "/v1/x", 429, 2.0), PUSHED, Pushback("POST", "/v1/x", 429, 5.0)]
    waits: list[float] = []
    made, make = tries(Tried("a", pushbacks=asked, pushed_back=True, provider_failed=True, asked=asked_wait(asked)),
                       Tried("b"))
    retried(make, AdaptiveLimit(4), 1, threading.Event(), pause=lambda s: waits.append(s) or True)
    assert waits == [5.0]


def test_a_timeout_neither_lowers_nor_raises_the_providers_limit():
    limit = AdaptiveLimit(8)
    limit.pushed_back(None)
    made, make = tries(Tried("timed out", provider_failed=True), Tried("timed out", provider_failed=True))
    tried = retried(make, limit, 1, threading.Event(), pause=lambda s: True)
    assert limit.limit == 4 and tried.gave_up == "gave up after 1 retry (--retries 1)"


def test_a_run_waiting_for_its_providers_pause_stops_when_the_session_does():
    """A provider's pause held every waiting run to its end (OpenAI's token reset can say 6m0s),
    and the process with them after Ctrl-C."""
    limit, stop = AdaptiveLimit(2), threading.Event()
    limit.pushed_back(3600.0)
    assert limit.paused_until - limit.clock() <= MAX_PAUSE
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            with limit.slot(stop):
                pass
        except LiveRunsStopped as exc:
            outcome.append(exc)

    waiting = threading.Thread(target=run)
    waiting.start()
    time.sleep(0.1)
    stop.set()
    waiting.join(timeout=5)
    assert not waiting.is_alive() and len(outcome) == 1


def test_a_run_the_session_stops_during_its_backoff_is_not_made_again():
    stop = threading.Event()
    made, make = tries(Tried("a", pushbacks=[PUSHED], pushed_back=True, provider_failed=True), Tried("b"))
    tried = retried(make, AdaptiveLimit(2), 3, stop, pause=lambda s: stop.set() or False)
    assert len(made) == 1 and tried.gave_up == "was not made again (the session ended)"
    with pytest.raises(LiveRunsStopped):
        retried(make, AdaptiveLimit(2), 3, stop)
