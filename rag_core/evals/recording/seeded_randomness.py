"""The random values a case's run makes, seeded from the case, as its clock is frozen: the same
program given the same answers sends the same ids and keys when it is recorded and when it is
replayed.

For the length of a run (``seeded``), the process-wide sources a program takes ids and keys from
give a sequence of the run's own, seeded from the case's id, the live repeat's number and the
part of the run (its target's import, or its turns):

- ``uuid.uuid4`` and ``uuid.uuid1`` (its time the case's clock, one tick further each call; its
  node made from the seed, with the multicast bit a random node carries);
- the ``random`` module's global generator: every function the module makes of it (``random``,
  ``randint``, ``choice``, ``getrandbits``, ``shuffle``, ``seed``, ``getstate``, ...);
- ``secrets.token_bytes`` (and so ``token_hex`` and ``token_urlsafe``, which call it),
  ``secrets.choice``, ``randbelow`` and ``randbits``.

Which run the calling code belongs to is its binding (``run_binding.py``): the run's thread, the
threads it starts, the jobs it submits to a pool and its ``asyncio`` tasks draw from their run's
sequence, and concurrent runs each from their own. Everything else (pytest, other tests, the
harness between runs, code a run left running after it ended) gets the real functions.

The module attributes are replaced by dispatchers once, for good (``install``), when the pytest
plugin is imported: before ``conftest.py`` and the project's modules, so that a name a module
binds at import (``from uuid import uuid4``) is the dispatcher. What is not covered: a name bound
before that (a module imported by a pytest plugin loaded earlier), ``random.Random()`` and
``SystemRandom`` instances a program makes itself, numpy's and other libraries' own generators,
``os.urandom`` called directly, and what TLS and the OS draw, which are left alone.
"""

from __future__ import annotations

import functools
import hashlib
import random
import secrets
import threading
import uuid
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Iterator

from rag_core.evals.recording import run_binding

# the time a version-1 uuid of a run counts from when the run has no clock (a retriever's)
DEFAULT_CLOCK = datetime(2026, 1, 15, 9, 30, 0)
_GREGORIAN = datetime(1582, 10, 15, tzinfo=timezone.utc)  # where a version-1 uuid's time begins

# the live repeat being made (``--live --repeat``): repeat 0 is the one recordings and replays make
_REPEAT: ContextVar[int] = ContextVar("rag_core_repeat", default=0)


class RunRandomness:
    """One run's sequence: a generator seeded from ``seed``, standing in for the random module's
    global one, from which its uuids and tokens are drawn too."""

    def __init__(self, seed: str, clock: datetime | None = None) -> None:
        self.seed = seed
        self.generator = random.Random(seed)  # a str seed is hashed (sha512): the same in every process
        self.open = True  # False once the run has ended: code it left behind draws real values
        self._lock = threading.Lock()
        self._ticks = _ticks_of(clock or DEFAULT_CLOCK)
        self._node = int.from_bytes(hashlib.sha256(f"{seed}:node".encode()).digest()[:6], "big") | 1 << 40

    def uuid4(self) -> uuid.UUID:
        return uuid.UUID(bytes=self.generator.randbytes(16), version=4)

    def uuid1(self, node: int | None = None, clock_seq: int | None = None) -> uuid.UUID:
        with self._lock:  # each call one tick later, as uuid1 guarantees its times never repeat
            timestamp, self._ticks = self._ticks, self._ticks + 1
        if clock_seq is None:
            clock_seq = self.generator.getrandbits(14)
        return uuid.UUID(fields=(timestamp & 0xFFFFFFFF, (timestamp >> 32) & 0xFFFF, (timestamp >> 48) & 0x0FFF,
                                 (clock_seq >> 8) & 0x3F, clock_seq & 0xFF, self._node if node is None else node),
                         version=1)

    def token_bytes(self, nbytes: int | None = None) -> bytes:
        return self.generator.randbytes(32 if nbytes is None else nbytes)  # secrets.DEFAULT_ENTROPY

    def randbelow(self, exclusive_upper_bound: int) -> int:
        if exclusive_upper_bound <= 0:
            raise ValueError("Upper bound must be positive.")
        return self.generator.randrange(exclusive_upper_bound)


def _ticks_of(clock: datetime) -> int:
    """A clock reading as a version-1 uuid counts time: 100 ns intervals since 1582-10-15 (a
    reading without a time zone is UTC's, as the case's ``clock:`` is)."""
    aware = clock if clock.tzinfo is not None else clock.replace(tzinfo=timezone.utc)
    return (aware - _GREGORIAN) // timedelta(microseconds=1) * 10


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.installed = False
        self.open = 0  # runs seeded now: with none, a dispatcher calls the real function at once


_STATE = _State()


def current() -> RunRandomness | None:
    """The sequence of the calling code's run, while the run lasts; None for code of no run."""
    if not _STATE.open:
        return None
    binding = run_binding.of_caller()
    source = binding.randomness if binding is not None else None
    return source if source is not None and source.open else None


def seed_of(name: str, repeat: int, part: str) -> str:
    return f"rag-core:{name}:repeat {repeat}:{part}"


@contextmanager
def seeded(name: str, clock: datetime | None = None, part: str = "turns") -> Iterator[RunRandomness]:
    """Until the block ends, the calling code's run (and what it starts) draws from a sequence
    seeded from ``name`` (the case's id), the live repeat being made and ``part``; uuid1's time
    counts from ``clock``."""
    install()
    source = RunRandomness(seed_of(name, _REPEAT.get(), part), clock)
    with _STATE.lock:
        _STATE.open += 1
    try:
        with run_binding.bound_to(randomness=source):
            yield source
    finally:
        source.open = False
        with _STATE.lock:
            _STATE.open -= 1


@contextmanager
def repeat(number: int) -> Iterator[None]:
    """The runs begun in the block are live repeat ``number`` (from 0) of their case: each repeat
    has a sequence of its own, and a retried run the same one again."""
    token = _REPEAT.set(number)
    try:
        yield
    finally:
        _REPEAT.reset(token)


def install() -> None:
    """Replace the covered functions with dispatchers, once and for good (never undone: other code
    may have bound the dispatchers since)."""
    with _STATE.lock:
        if _STATE.installed:
            return
        _STATE.installed = True
    for name in random.__all__:
        real = getattr(random, name)
        if getattr(real, "__self__", None) is random._inst:  # a function of the global generator
            setattr(random, name, _dispatcher(real, functools.partial(_of_generator, name)))
    uuid.uuid4 = _dispatcher(uuid.uuid4, lambda source: source.uuid4)
    uuid.uuid1 = _dispatcher(uuid.uuid1, lambda source: source.uuid1)
    secrets.token_bytes = _dispatcher(secrets.token_bytes, lambda source: source.token_bytes)
    secrets.randbelow = _dispatcher(secrets.randbelow, lambda source: source.randbelow)
    secrets.randbits = _dispatcher(secrets.randbits, lambda source: source.generator.getrandbits)
    secrets.choice = _dispatcher(secrets.choice, lambda source: source.generator.choice)


def _of_generator(name: str, source: RunRandomness) -> Callable[..., Any]:
    return getattr(source.generator, name)


def _dispatcher(real: Callable[..., Any], in_run: Callable[[RunRandomness], Callable[..., Any]]) -> Callable[..., Any]:
    """``real``, or within a run its sequence's counterpart (``in_run`` finds it)."""
    @functools.wraps(real)
    def dispatch(*args: Any, **kwargs: Any) -> Any:
        source = current()
        if source is None:
            return real(*args, **kwargs)
        return in_run(source)(*args, **kwargs)

    return dispatch
