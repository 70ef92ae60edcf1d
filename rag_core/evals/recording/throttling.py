"""When a provider pushes back: which answers say "try again later", and how much later.

Pure functions of a response's status and headers (and the time, given), shared by the recorder
(which keeps a retried-away answer out of the cassette) and the live runner (which retries a run
and slows its provider down).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any, Hashable, Mapping, Sequence

# too many requests, a server error or overload (Anthropic's 529): worth another try
RETRYABLE = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


@dataclass(frozen=True)
class Pushback:
    """A retryable answer a run got: what was asked, the status, and the wait the provider asked for."""

    method: str
    path: str
    status: int
    retry_after: float | None = None  # seconds; None when the provider named no wait

    def __str__(self) -> str:
        wait = f", asked to wait {self.retry_after:g} s" if self.retry_after is not None else ""
        return f"{self.method} {self.path} answered HTTP {self.status}{wait}"


def _header(headers: Mapping[str, Any], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            if isinstance(value, (list, tuple)):
                value = value[0] if value else None
            if isinstance(value, bytes):
                value = value.decode("latin-1")
            return None if value is None else str(value).strip()
    return None


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _duration(text: str) -> float | None:
    """OpenAI's reset durations: ``1s``, ``6m0s``, ``20ms``, ``1h2m3.5s``."""
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(number) * _UNIT[unit] for number, unit in parts)


def _seconds_until(text: str, now: datetime) -> float | None:
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - now).total_seconds())


def retry_after(headers: Mapping[str, Any], now: datetime) -> float | None:
    """The wait, in seconds, a response asks for: ``retry-after-ms``, ``retry-after`` (seconds or
    an HTTP date), else the reset of a rate limit that is used up (OpenAI's
    ``x-ratelimit-reset-*`` durations, Anthropic's ``anthropic-ratelimit-*-reset`` times)."""
    value = _header(headers, "retry-after-ms")
    if value is not None:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = _header(headers, "retry-after")
    if value is not None:
        try:
            return max(0.0, float(value))
        except ValueError:
            waited = _seconds_until(value, now)
            if waited is not None:
                return waited
    waits = []
    for kind in ("requests", "tokens"):
        if _header(headers, f"x-ratelimit-remaining-{kind}") == "0":
            reset = _header(headers, f"x-ratelimit-reset-{kind}")
            waits.append(_duration(reset) if reset else None)
        if _header(headers, f"anthropic-ratelimit-{kind}-remaining") == "0":
            reset = _header(headers, f"anthropic-ratelimit-{kind}-reset")
            waits.append(_seconds_until(reset, now) if reset else None)
    found = [wait for wait in waits if wait is not None]
    return max(found) if found else None


def retried_away(items: Sequence[tuple[Hashable, int]]) -> list[bool]:
    """For each (request, status) in the order sent: whether it is a retryable failure that the
    client sent again, identically, with success later on. Such an answer is the provider's
    weather, not the program's behaviour: a replay would make the client wait and retry for
    nothing."""
    succeeded_after: set[Hashable] = set()
    dropped = [False] * len(items)
    for index in range(len(items) - 1, -1, -1):
        request, status = items[index]
        if status < 400:
            succeeded_after.add(request)
        elif status in RETRYABLE and request in succeeded_after:
            dropped[index] = True
    return dropped


def backoff(attempt: int, asked: float | None, base: float = 0.5, ceiling: float = 30.0,
            jitter: float = 0.0) -> float:
    """Seconds before retry ``attempt`` (from 1): what the provider asked for, or an exponential
    backoff (``jitter`` from 0 to 1 spreads retries that would otherwise arrive together)."""
    if asked is not None:
        return min(asked, 120.0)
    return min(ceiling, base * 2 ** (attempt - 1)) * (1.0 + jitter)
