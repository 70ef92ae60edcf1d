"""Making a live run, or a recording, again while its provider pushes back: one loop for both.

Each try runs under the provider's adaptive limit (``live_limits.py``). A try the provider
pushed back (a 429 or 5xx, even one its client retried with success) lowers that limit and
holds the provider's new runs for the wait it asked for; a try that met none earns a little of
the limit back; a try that timed out does neither (it says nothing of the provider's capacity).
A try that failed because of the provider is made again after that wait, or a doubling backoff,
``retries`` times at most, unless the session is stopping; the caller decides what giving up
means (a failed run, or a recording that fails writing nothing).
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass
from typing import Callable, Generic, Sequence, TypeVar

from rag_core.evals.recording.provider_limits import AdaptiveLimit
from rag_core.evals.recording.throttling import Pushback, backoff

T = TypeVar("T")


@dataclass
class Tried(Generic[T]):
    """One try: what it made (or raised), the pushbacks it met, and whether the provider failed it."""

    value: T | None = None
    error: BaseException | None = None
    pushbacks: Sequence[Pushback] = ()
    pushed_back: bool = False  # the provider answered a retryable status (its client may have got past it)
    provider_failed: bool = False  # a retryable status the client did not get past, or a timeout
    asked: float | None = None  # the wait the provider asked for, when it named one
    tries: int = 1  # counting this one
    # when the provider failed the last try, why no further one was made ("gave up after ...")
    gave_up: str | None = None

    @property
    def retries(self) -> int:
        return self.tries - 1


def asked_wait(pushbacks: Sequence[Pushback]) -> float | None:
    """The longest wait the provider asked for, None when it named none (then a backoff applies)."""
    return max((p.retry_after for p in pushbacks if p.retry_after is not None), default=None)


def retried(make: Callable[[], Tried[T]], limit: AdaptiveLimit, retries: int, stop: threading.Event,
            pause: Callable[[float], bool] | None = None, jitter: Callable[[], float] = random.random) -> Tried[T]:
    """The last try of ``make``: the first the provider did not fail, or the one after which
    trying stopped (``gave_up`` says why). ``pause(seconds)`` waits, and says False when the
    session began stopping meanwhile (default: ``stop.wait``); ``jitter()`` (0 to 1) spreads a
    backoff's wait (see ``pushback.backoff``)."""
    pause = pause or (lambda seconds: not stop.wait(seconds))
    for attempt in range(retries + 1):
        with limit.slot(stop):
            tried = make()
        tried.tries = attempt + 1
        if tried.pushed_back:
            limit.pushed_back(tried.asked)
        elif not tried.provider_failed:
            limit.succeeded()
        if not tried.provider_failed:
            return tried
        if attempt == retries:
            tried.gave_up = f"gave up after {attempt} retr{'y' if attempt == 1 else 'ies'} (--retries {retries})"
            return tried
        if stop.is_set() or not pause(backoff(attempt + 1, tried.asked, jitter=jitter())):
            tried.gave_up = "was not made again (the session ended)"
            return tried
    raise AssertionError("unreachable")
