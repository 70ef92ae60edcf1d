"""One set of HTTP-library patches for the whole process, each request handed to its run's cassette.

vcrpy patches the HTTP libraries for one cassette at a time, process-wide: two cassettes open at
once in two threads would take each other's requests. Live runs (``--concurrency``) play many
cases and repeats at once, so the libraries are patched once, for a router that vcrpy's stubs
hold in place of a cassette; each request goes to the cassette of the run it belongs to:

1. the cassette bound to the calling context (the run's thread, and what inherits its context:
   ``asyncio`` tasks, ``asyncio.to_thread``, and each job submitted to a thread pool, which
   runs as the run that submitted it: a pool the runs share, ``run_in_executor`` included);
2. else the cassette of the run whose thread started the calling thread, while that run is open
   (a client's own worker thread; not a pool's worker, which serves whoever submits);
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
        self.pool_hook = False  # ThreadPoolExecutor.submit binds each job to its submitter's run (likewise)

    def cassette(self) -> Any:
        bound = _BOUND.get()
        if bound is NO_CASSETTE:
            return bound
        with self.lock:
            # a pool's job runs bound to the run that submitted it, which may have ended since:
            # then it is taken as any thread of no open run is
            if bound is not None and any(c is bound for c in self.open):
                return bound
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
        if bound is not None and bound is not NO_CASSETTE and not _serves_a_pool(thread):
            with _ROUTES.lock:
                _ROUTES.started_by[thread] = bound
        original(thread)

    threading.Thread.start = start  # type: ignore[method-assign]


def _serves_a_pool(thread: threading.Thread) -> bool:
    """A thread pool's worker: it runs the jobs of whoever submits, so the run that happened to
    start it says nothing of the requests it makes later."""
    from concurrent.futures import thread as pool_threads

    return getattr(thread, "_target", None) is getattr(pool_threads, "_worker", object())


def _hook_pool_submit() -> None:
    """Wrap ThreadPoolExecutor.submit, for good, so that a job runs bound to the cassette of the
    run that submitted it (the pool copies no context). A submission from outside every run is
    left as it was."""
    if _ROUTES.pool_hook:
        return
    _ROUTES.pool_hook = True
    from concurrent.futures import ThreadPoolExecutor

    original = ThreadPoolExecutor.submit

    def submit(pool: ThreadPoolExecutor, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        bound = _BOUND.get()
        if bound is None:
            return original(pool, fn, *args, **kwargs)
        return original(pool, _as_run, bound, fn, *args, **kwargs)

    ThreadPoolExecutor.submit = submit  # type: ignore[method-assign]


def _as_run(bound: Any, fn: Any, *args: Any, **kwargs: Any) -> Any:
    token = _BOUND.set(bound)
    try:
        return fn(*args, **kwargs)
    finally:
        _BOUND.reset(token)


def _install(stack: ExitStack) -> None:
    from vcr.patch import CassettePatcherBuilder

    _hook_thread_start()
    _hook_pool_submit()
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
    token = _BOUND.set(cassette)
    try:
        with _ROUTES.lock:
            _ROUTES.open.append(cassette)  # first: building vcrpy's patches reads the cassette's path
            if _ROUTES.stack is None:
                _ROUTES.stack = ExitStack()
                _install(_ROUTES.stack)
            _patch_socket_clients(_ROUTES.stack)
    except BaseException:
        _BOUND.reset(token)
        _close(cassette)
        raise
    try:
        yield cassette
    finally:
        _BOUND.reset(token)
        _close(cassette)


def _close(cassette: Any) -> None:
    """The cassette is no longer open; with the last one, the patches are undone."""
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
