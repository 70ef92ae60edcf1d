"""How many live runs a provider gets at once: at most ``--concurrency``, fewer while it pushes back.

Additive increase, multiplicative decrease, as TCP does: a pushback (a 429 or 5xx, even one the
client retried with success) halves the provider's limit and holds every new run until the wait
the provider asked for has passed; each run that met no pushback earns a little of the limit
back, up to ``--concurrency``. The clock and the wait are injected, so tests need no sleeping.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

# the longest a provider's pushback holds its runs (OpenAI's token reset can say 6m0s)
MAX_PAUSE = 120.0
# how often a run waiting for room looks whether the session is stopping
STOP_POLL = 0.25


class LiveRunsStopped(Exception):
    """The session ended (an interrupt, or -x) before a run began."""


class AdaptiveLimit:
    def __init__(self, ceiling: int, clock: Callable[[], float] = time.monotonic) -> None:
        if ceiling < 1:
            raise ValueError(f"a concurrency limit is at least 1, not {ceiling}")
        self.ceiling = ceiling
        self.limit = float(ceiling)
        self.clock = clock
        self.in_flight = 0
        self.paused_until = 0.0
        self.peak = 0  # most runs in flight at once
        self._changed = threading.Condition()

    @contextmanager
    def slot(self, stop: threading.Event | None = None) -> Iterator[None]:
        """Wait for room under the limit (and for the end of a pause), then hold it; raises
        LiveRunsStopped if ``stop`` is set first."""
        with self._changed:
            while True:
                if stop is not None and stop.is_set():
                    raise LiveRunsStopped("the session ended before the run began")
                wait = self.paused_until - self.clock()
                if wait <= 0 and self.in_flight < int(self.limit):
                    break
                timeout = wait if wait > 0 else None
                if stop is not None:
                    timeout = min(timeout or STOP_POLL, STOP_POLL)
                self._changed.wait(timeout=timeout)
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            yield
        finally:
            with self._changed:
                self.in_flight -= 1
                self._changed.notify_all()

    def pushed_back(self, wait: float | None) -> None:
        with self._changed:
            self.limit = max(1.0, self.limit / 2)
            if wait:
                self.paused_until = max(self.paused_until, self.clock() + min(wait, MAX_PAUSE))
            self._changed.notify_all()

    def succeeded(self) -> None:
        with self._changed:
            self.limit = min(float(self.ceiling), self.limit + 1 / max(1.0, self.limit))
            self._changed.notify_all()


class ProviderLimits:
    """One adaptive limit per provider (a target's runs, whose provider the harness cannot know,
    share one of their own)."""

    def __init__(self, ceiling: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.ceiling, self.clock = ceiling, clock
        self._limits: dict[str, AdaptiveLimit] = {}
        self._lock = threading.Lock()

    def of(self, provider: str | None) -> AdaptiveLimit:
        with self._lock:
            key = provider or "target"
            if key not in self._limits:
                self._limits[key] = AdaptiveLimit(self.ceiling, self.clock)
            return self._limits[key]
