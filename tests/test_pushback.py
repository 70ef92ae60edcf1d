"""A provider's pushback read right (``pushback.py``), a provider's limit that adapts to it
(``live_limits.py``), and a 429 the client retried with success kept out of the recording."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from datetime import datetime, timezone

import httpx
import openai
import pytest

from rag_core.evals.emulator.conditions import Conditions, _refusal
from rag_core.evals.emulator.provider import ScriptedProvider
from rag_core.evals.recording import cassette_format
from rag_core.evals.recording.provider_limits import AdaptiveLimit
from rag_core.evals.recording.throttling import backoff, retried_away, retry_after
from rag_core.evals.recording.recorder import CaseRecorder

NOW = datetime(2026, 11, 25, 12, 0, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize("headers, wait", [
    ({"retry-after-ms": ["1500"]}, 1.5),
    ({"Retry-After": ["7"]}, 7.0),
    ({"retry-after": "Wed, 25 Nov 2026 12:00:30 GMT"}, 30.0),
    # OpenAI: a used-up limit and when it resets
    ({"x-ratelimit-remaining-requests": ["0"], "x-ratelimit-reset-requests": ["6m0s"]}, 360.0),
    ({"x-ratelimit-remaining-tokens": ["0"], "x-ratelimit-reset-tokens": ["20ms"]}, 0.02),
    ({"x-ratelimit-remaining-requests": ["12"], "x-ratelimit-reset-requests": ["6m0s"]}, None),  # not used up
    # Anthropic: the reset as a time
    ({"anthropic-ratelimit-requests-remaining": ["0"], "anthropic-ratelimit-requests-reset": ["2026-11-25T12:00:04Z"]}, 4.0),
    ({"retry-after": ["soon"]}, None),
    ({}, None),
])
def test_the_wait_a_provider_asks_for(headers, wait):
    assert retry_after(headers, NOW) == wait


def test_only_a_retryable_failure_followed_by_the_same_request_succeeding_is_retried_away():
    sent = [("a", 429), ("a", 429), ("a", 200), ("b", 400), ("b", 200), ("c", 503), ("d", 200), ("c", 500)]
    assert retried_away(sent) == [True, True, False, False, False, False, False, False]


def test_backoff_takes_the_providers_word_else_doubles():
    assert backoff(1, 3.0) == 3.0
    assert [backoff(n, None) for n in (1, 2, 3)] == [0.5, 1.0, 2.0]
    assert backoff(20, None) == 30.0


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_limit_halves_on_pushback_holds_new_runs_for_the_wait_and_earns_its_way_back():
    clock = _Clock()
    limit = AdaptiveLimit(8, clock)
    limit.pushed_back(2.0)
    assert limit.limit == 4
    started = threading.Event()

    def run() -> None:
        with limit.slot():
            started.set()

    worker = threading.Thread(target=run)
    worker.start()
    assert not started.wait(0.2)  # paused: the provider asked for 2 s
    clock.now = 2.5
    with limit._changed:
        limit._changed.notify_all()
    assert started.wait(5)
    worker.join()
    for _ in range(40):
        limit.succeeded()
    assert limit.limit == 8  # never above --concurrency


def test_a_limit_of_one_is_never_lowered_below_one():
    limit = AdaptiveLimit(1)
    limit.pushed_back(None)
    assert limit.limit == 1


class _RefuseFirst(Conditions):
    """The first request is answered 429, as a provider under load would."""

    @contextmanager
    def admitted(self):
        with self._lock:
            self.refused += 1
            first = self.refused == 1
        yield _refusal(0.01) if first else None


def test_a_429_the_client_retried_with_success_is_not_recorded(tmp_path):
    recorder = CaseRecorder(tmp_path / "case.yaml", "all")
    with recorder.use("sdk", ScriptedProvider([{"text": "Hello."}]), _RefuseFirst()) as replay:
        client = openai.OpenAI(api_key="rag-core-test", max_retries=2, http_client=httpx.Client())
        answer = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "Hi"}])
    recorder.commit()
    assert answer.choices[0].message.content == "Hello."
    # the run saw the pushback (the live runner slows the provider down for it) ...
    assert [(p.status, p.path, p.retry_after) for p in replay.pushbacks] == [(429, "/v1/chat/completions", 0.01)]
    # ... but the recording and what the run observed hold the answer alone: a replay waits for nothing
    assert [(e.status, e.path) for e in replay.exchanges] == [(200, "/v1/chat/completions")]
    assert replay.recorded == [("POST", "/v1/chat/completions", 200)]
    assert len(cassette_format.read_cassette(tmp_path / "case.yaml")["interactions"]) == 1
