"""``--record-timeout`` for clients the harness does not build: while a case records live, no
blocking socket operation waits longer than the bound.

The harness gives its own models the bound as their HTTP timeout. A target's clients come with
their own (the OpenAI SDK waits 600 s per attempt, then retries), so a provider that accepts a
request and never answers would hang the recording until it is killed. Every client over Python
sockets sets its socket's timeout before it waits (``settimeout``, ``create_connection``) or
inherits the default timeout: both are clamped to the bound for the duration of the recording,
so the wait ends with the ``TimeoutError`` the client already handles, and the case fails naming
``--record-timeout``. Non-blocking sockets (asyncio's) keep their mode: an async client's waits
are bounded by its own timeouts.
"""

from __future__ import annotations

import socket
import threading
from contextlib import contextmanager
from typing import Any, Iterator


class _Clamp:
    """The process's one clamp: installed by the first recording that needs it, removed by the
    last (live runs record in several threads at once, each inside ``bounded_waits``)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0
        self.saved: tuple[Any, float | None] | None = None


_CLAMP = _Clamp()


@contextmanager
def bounded_waits(seconds: float) -> Iterator[None]:
    """Clamp every blocking socket timeout set (or defaulted) while the context is open (the
    first bound given holds while several are open)."""
    with _CLAMP.lock:
        if _CLAMP.users == 0:
            settimeout = socket.socket.settimeout
            default = socket.getdefaulttimeout()
            _CLAMP.saved = (settimeout, default)

            def clamped(sock: Any, value: float | None) -> None:
                # 0 is non-blocking mode (asyncio's sockets): not a wait, left as it is
                settimeout(sock, seconds if value is None or value > seconds else value)

            socket.socket.settimeout = clamped  # type: ignore[method-assign]
            socket.setdefaulttimeout(seconds if default is None else min(default, seconds))
        _CLAMP.users += 1
    try:
        yield
    finally:
        with _CLAMP.lock:
            _CLAMP.users -= 1
            if _CLAMP.users == 0 and _CLAMP.saved is not None:
                settimeout, default = _CLAMP.saved
                socket.socket.settimeout = settimeout  # type: ignore[method-assign]
                socket.setdefaulttimeout(default)
                _CLAMP.saved = None
