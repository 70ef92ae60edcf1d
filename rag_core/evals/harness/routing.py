"""One set of HTTP-library patches for the whole process, each request handed to its run's cassette.

vcrpy patches the HTTP libraries for one cassette at a time, process-wide: two cassettes open at
once in two threads would take each other's requests. Live runs (``--concurrency``) play many
cases and repeats at once, so the libraries are patched once, for a router that vcrpy's stubs
hold in place of a cassette; each request goes to the cassette of the run it belongs to:

1. the cassette bound to the calling context (the run's thread, and what inherits its context:
   ``asyncio`` tasks, ``asyncio.to_thread``, executors that copy the context);
2. else the cassette of the run whose thread started the calling thread, while that run is open
   (a client's own worker thread);
3. else the only cassette open (one run at a time: exactly vcrpy's own behaviour, a framework's
   thread pool from before the run included);
4. else nothing: with several runs open, a request no run can be told from is an error naming
   ``--concurrency``, never a guess that would record it into another case's cassette.

A run's thread is bound to "no cassette" until its cassette opens, so what the run does before
(importing a target, building its clients) is not taken for another run's traffic: it reaches
the network guard, as it does when runs go one at a time.
"""

from __future__ import annotations

import contextvars
import threading
import weakref
from contextlib import ExitStack, contextmanager
from typing import Any, Iterator

from rag_core.evals.harness.errors import HarnessError

# what the patched libraries see as "the cassette" of the request being made
_BOUND: contextvars.ContextVar[Any] = contextvars.ContextVar("rag_core_cassette", default=None)


class AmbiguousRequestError(HarnessError):
    """A request made while several runs were open, from code no run can be told from."""


class _Passthrough:
    """The cassette of a thread that belongs to a run whose cassette is not open: nothing is
    played or recorded, the request goes where it was sent (the network guard decides)."""

    _path = "(no cassette)"
    write_protected = False
    record_mode = "all"

    def can_play_response_for(self, request: Any) -> bool:
        return False

    def filter_request(self, request: Any) -> None:
        return None

    def append(self, request: Any, response: Any) -> None:
        return None


NO_CASSETTE = _Passthrough()


class _Routes:
    def __init__(self) -> None:
        self.lock = threading.RLock()  # the router reads the routes while patches are built
        self.open: list[Any] = []  # cassettes open now, in the order they opened
        self.stack: ExitStack | None = None  # the installed patches, while any cassette is open
        self.socket_packages: set[str] = set()  # lm15 installations patched so far
        self.started_by: weakref.WeakKeyDictionary[threading.Thread, Any] = weakref.WeakKeyDictionary()
        self.thread_hook = False  # Thread.start notes who started each thread (once, for good)

    def cassette(self) -> Any:
        bound = _BOUND.get()
        if bound is not None:
            return bound
        with self.lock:
            parent = self.started_by.get(threading.current_thread())
            if parent is not None and any(c is parent for c in self.open):
                return parent
            if len(self.open) == 1:
                return self.open[0]
            if not self.open:
                return NO_CASSETTE
            count = len(self.open)
        raise AmbiguousRequestError(
            f"a request was made from a thread that no run can be told from while {count} runs were open "
            "(the program hands its requests to a thread it shares between runs); run with --concurrency 1")


_ROUTES = _Routes()


class _Router:
    """What vcrpy's stubs hold as their cassette: every attribute is the routed cassette's."""

    def __getattr__(self, name: str) -> Any:
        return getattr(_ROUTES.cassette(), name)

    def __len__(self) -> int:
        return len(_ROUTES.cassette())

    def __contains__(self, request: Any) -> bool:
        return request in _ROUTES.cassette()


ROUTER = _Router()


def _hook_thread_start() -> None:
    """Wrap Thread.start, for good, to note which run's cassette each new thread's starter was
    bound to. Never undone: the network guard wraps it too, and undoing one wrapper while the
    other sits on top would drop that one."""
    if _ROUTES.thread_hook:
        return
    _ROUTES.thread_hook = True
    original = threading.Thread.start

    def start(thread: threading.Thread) -> None:
        bound = _BOUND.get()
        if bound is not None and bound is not NO_CASSETTE:
            with _ROUTES.lock:
                _ROUTES.started_by[thread] = bound
        original(thread)

    threading.Thread.start = start  # type: ignore[method-assign]


def _install(stack: ExitStack) -> None:
    from vcr.patch import CassettePatcherBuilder

    _hook_thread_start()
    for patcher in CassettePatcherBuilder(ROUTER).build():
        stack.enter_context(patcher)


def _patch_socket_clients(stack: ExitStack) -> None:
    """The socket-level clients imported by now (a target imported since the first run opened
    its cassette included)."""
    from rag_core.evals.harness import socket_clients

    for package, patch in socket_clients.stubs(ROUTER, exclude=_ROUTES.socket_packages):
        _ROUTES.socket_packages.add(package)
        stack.enter_context(patch)


@contextmanager
def routed(cassette: Any) -> Iterator[Any]:
    """Route the calling context's requests (and its threads') to ``cassette`` while open."""
    token = _BOUND.set(cassette)  # first: building vcrpy's patches reads the cassette's path
    try:
        with _ROUTES.lock:
            if _ROUTES.stack is None:
                stack = ExitStack()
                try:
                    _install(stack)
                except BaseException:
                    stack.close()
                    raise
                _ROUTES.stack = stack
            _patch_socket_clients(_ROUTES.stack)
            _ROUTES.open.append(cassette)
    except BaseException:
        _BOUND.reset(token)
        raise
    try:
        yield cassette
    finally:
        _BOUND.reset(token)
        with _ROUTES.lock:
            del _ROUTES.open[next(i for i, c in enumerate(_ROUTES.open) if c is cassette)]
            if not _ROUTES.open and _ROUTES.stack is not None:
                stack, _ROUTES.stack = _ROUTES.stack, None
                _ROUTES.socket_packages.clear()
                stack.close()


@contextmanager
def own_run() -> Iterator[None]:
    """Mark the calling thread as one run's: until its cassette opens, its requests are no other
    run's (see the module docstring)."""
    token = _BOUND.set(NO_CASSETTE)
    try:
        yield
    finally:
        _BOUND.reset(token)


def open_count() -> int:
    with _ROUTES.lock:
        return len(_ROUTES.open)
