"""The emulator's weather: how slowly it answers and how much it takes before it pushes back.

A script says *what* the provider answers; conditions say *how*, the same for every case of a
session: each answer takes ``latency`` seconds, and with more than ``capacity`` requests in flight
the excess is answered ``429`` with a ``Retry-After`` (what a provider's rate limit does). Live
runs' concurrency, retries and backoff are tested against them, without sleeping in tests or
calling a provider. A refusal never reaches the script: it uses up no turn.
"""

from __future__ import annotations

import json
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterator

from rag_core.evals.emulator.provider import Reply

REFUSED_HEADER = "rag-core-emulator-refused"  # marks a refusal for the recorder (never recorded)


@dataclass
class Conditions:
    latency: float = 0.0  # seconds each answer takes
    capacity: int | None = None  # requests answered at once; the excess gets 429 (None: no limit)
    sleep: Callable[[float], None] = time.sleep
    in_flight: int = 0
    refused: int = 0  # 429s given so far
    peak: int = 0  # most requests in flight at once
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def active(self) -> bool:
        return self.latency > 0 or self.capacity is not None

    @property
    def retry_after(self) -> float:
        """What a refusal asks the client to wait: about one answer's time."""
        return max(self.latency, 0.05)

    @contextmanager
    def admitted(self) -> Iterator[Reply | None]:
        """One request's passage: yields None when it is to be answered (after the latency), or
        the refusal to send back instead."""
        with self._lock:
            if self.capacity is not None and self.in_flight >= self.capacity:
                self.refused += 1
                refusal: Reply | None = _refusal(self.retry_after)
            else:
                refusal = None
                self.in_flight += 1
                self.peak = max(self.peak, self.in_flight)
        if refusal is not None:
            yield refusal
            return
        try:
            if self.latency > 0:
                self.sleep(self.latency)
            yield None
        finally:
            with self._lock:
                self.in_flight -= 1


def _refusal(wait: float) -> Reply:
    body = {"error": {"message": "Rate limit reached for requests (rag-core emulator: more requests in flight than "
                                 "its --emulator-capacity)", "type": "requests", "code": "rate_limit_exceeded"}}
    return Reply(429, "application/json", json.dumps(body).encode(),
                 {"retry-after": f"{wait:g}", "retry-after-ms": f"{wait * 1000:g}", REFUSED_HEADER: "1"})
