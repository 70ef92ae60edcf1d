"""Which run the calling code belongs to: its cassette (``routing.py``) and its network guard
(``network.py``), bound together, so that both follow the run's code wherever it goes.

A run's binding is a context variable, so it goes where the run's context goes: its thread,
``asyncio`` tasks (a coroutine the run hands to an event loop another thread runs included),
``asyncio.to_thread``, and each job submitted to a thread pool, which runs bound as the run that
submitted it (the pool copies no context: ``ThreadPoolExecutor.submit`` is wrapped for that). A
plain thread inherits no context: the run's binding when it was started is kept for it, and for
what it starts and submits in turn (not for a pool's worker, which serves whoever submits).

Both wrappers are installed for good, the first time a cassette or a guard opens.
"""

from __future__ import annotations

import contextvars
import dataclasses
import threading
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator


@dataclass(frozen=True, eq=False)
class Binding:
    """What one run's code is bound to at one moment (a new one each time either changes, so a
    job or a thread keeps what its run was bound to when it was handed on)."""

    cassette: Any = None  # the run's cassette (routing.NO_CASSETTE until it opens); None: no run's
    guard: Any = None  # the run's network guard scope; None: not guarded (recording live)


_BOUND: contextvars.ContextVar[Binding | None] = contextvars.ContextVar("rag_core_run", default=None)


class _Hooks:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started_by: weakref.WeakKeyDictionary[threading.Thread, Binding] = weakref.WeakKeyDictionary()
        self.installed = False


_HOOKS = _Hooks()


def bound() -> Binding | None:
    """The binding of the calling context, if any."""
    return _BOUND.get()


def _handed_on() -> Binding | None:
    """What the calling code hands on to a thread it starts or a job it submits: its context's
    binding, else that of the run that started its thread (a thread of a thread the run started
    is the run's too)."""
    binding = _BOUND.get()
    return binding if binding is not None else started_in(threading.current_thread())


def started_in(thread: threading.Thread) -> Binding | None:
    """The binding of the code that started ``thread`` (None for a pool's worker, or a thread
    started outside every run)."""
    with _HOOKS.lock:
        return _HOOKS.started_by.get(thread)


@contextmanager
def bound_to(fresh: bool = False, **changes: Any) -> Iterator[Binding]:
    """Bind the calling context to its binding with ``changes`` (to a new one if ``fresh``)
    until the block ends."""
    install()
    current = None if fresh else _BOUND.get()
    binding = dataclasses.replace(current, **changes) if current is not None else Binding(**changes)
    token = _BOUND.set(binding)
    try:
        yield binding
    finally:
        _BOUND.reset(token)


def install() -> None:
    """Wrap Thread.start and ThreadPoolExecutor.submit, once and for good (never undone: other
    code may have wrapped them since, and undoing one wrapper under another would drop it)."""
    with _HOOKS.lock:
        if _HOOKS.installed:
            return
        _HOOKS.installed = True
    from concurrent.futures import ThreadPoolExecutor

    original_start = threading.Thread.start
    original_submit = ThreadPoolExecutor.submit

    def start(thread: threading.Thread) -> None:
        binding = _handed_on()
        if binding is not None and not _serves_a_pool(thread):
            with _HOOKS.lock:
                _HOOKS.started_by[thread] = binding
        original_start(thread)

    def submit(pool: ThreadPoolExecutor, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        binding = _handed_on()
        if binding is None:
            return original_submit(pool, fn, *args, **kwargs)
        return original_submit(pool, _as_bound, binding, fn, *args, **kwargs)

    threading.Thread.start = start  # type: ignore[method-assign]
    ThreadPoolExecutor.submit = submit  # type: ignore[method-assign]


def _serves_a_pool(thread: threading.Thread) -> bool:
    """A thread pool's worker: it runs the jobs of whoever submits, so the run that happened to
    start it says nothing of what it does later."""
    from concurrent.futures import thread as pool_threads

    return getattr(thread, "_target", None) is getattr(pool_threads, "_worker", object())


def _as_bound(binding: Binding, fn: Any, *args: Any, **kwargs: Any) -> Any:
    token = _BOUND.set(binding)
    try:
        return fn(*args, **kwargs)
    finally:
        _BOUND.reset(token)
