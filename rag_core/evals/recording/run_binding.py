"""Which run the calling code belongs to: its cassette (``routing.py``), its network guard
(``network.py``) and its seeded randomness (``seeded_randomness.py``), bound together, so that
all three follow the run's code wherever it goes.

A run's binding is a context variable, so it goes where the run's context goes: its thread,
``asyncio`` tasks (a coroutine the run hands to an event loop another thread runs included),
``asyncio.to_thread``, and each job submitted to a thread pool, which runs bound as the run that
submitted it (the pool copies no context: ``ThreadPoolExecutor.submit`` is wrapped for that). A
plain thread inherits no context: the run's binding when it was started is kept for it, and for
what it starts and submits in turn (not for a pool's worker, which serves whoever submits).

A run (``Run``) begins with a block (``running``) and ends when the block does, or earlier, when
the harness gives up on it (``Run.end``: a run past its time limit, whose code may still be
running). Code of a run that has ended still carries its binding: a thread it started, a job it
submitted, a task it left on a loop. What such code sends belongs to that run and to no other:
``routing.py`` refuses it and ``network.py`` keeps it for the session's summary. A run begun
inside another (a case's cassette inside its run) is part of it, and has ended once it has.

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


class Run:
    """One run of a case: what reports name it by, and whether it has ended. A run begun inside
    another has ended once the outer one has."""

    def __init__(self, name: str, within: Run | None = None) -> None:
        self.name = name  # the case's id, as reports name the case
        self.within = within
        self._ended = threading.Event()

    @property
    def ended(self) -> bool:
        run: Run | None = self
        while run is not None:
            if run._ended.is_set():
                return True
            run = run.within
        return False

    def end(self) -> None:
        """From now on, what the run's code sends is late: refused, and reported naming the run
        (any thread may call it, the run's own code may still be running)."""
        self._ended.set()

    def __repr__(self) -> str:
        return f"Run({self.name!r}{', ended' if self.ended else ''})"


@dataclass(frozen=True, eq=False)
class Binding:
    """What one run's code is bound to at one moment (a new one each time either changes, so a
    job or a thread keeps what its run was bound to when it was handed on)."""

    cassette: Any = None  # the run's cassette (routing.NO_CASSETTE until it opens); None: no run's
    guard: Any = None  # the run's network guard scope; None: not guarded (recording live)
    run: Run | None = None  # the run the code belongs to; None: no run's
    randomness: Any = None  # the run's seeded random sequence (seeded_randomness.py); None: the real one


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


def of_caller() -> Binding | None:
    """The binding of the calling code: its context's, else that of the run that started its
    thread (a thread of a thread the run started is the run's too). What it hands on to a thread
    it starts or a job it submits."""
    binding = _BOUND.get()
    return binding if binding is not None else started_in(threading.current_thread())


def current_run() -> Run | None:
    """The run the calling code belongs to (ended or not), if any."""
    binding = of_caller()
    return binding.run if binding is not None else None


def late(binding: Binding | None) -> Run | None:
    """The run of code bound so, if that run has ended."""
    run = binding.run if binding is not None else None
    return run if run is not None and run.ended else None


def started_in(thread: threading.Thread) -> Binding | None:
    """The binding of the code that started ``thread`` (None for a pool's worker, or a thread
    started outside every run)."""
    with _HOOKS.lock:
        return _HOOKS.started_by.get(thread)


@contextmanager
def bound_to(fresh: bool = False, **changes: Any) -> Iterator[Binding]:
    """Bind the calling context to the calling code's binding with ``changes`` (to a new one if
    ``fresh``) until the block ends."""
    install()
    current = None if fresh else of_caller()
    binding = dataclasses.replace(current, **changes) if current is not None else Binding(**changes)
    token = _BOUND.set(binding)
    try:
        yield binding
    finally:
        _BOUND.reset(token)


@contextmanager
def running(name: str | None, fresh: bool = False, **changes: Any) -> Iterator[Run]:
    """A run, begun inside the calling code's run if it has one (named as that one when ``name``
    is None), its binding with ``changes`` (a new binding if ``fresh``: nothing of the caller's
    cassette or guard) bound to the calling context; it ends when the block does."""
    within = current_run()
    run = Run(name if name is not None else within.name if within is not None else "(a run)", within)
    try:
        with bound_to(fresh, run=run, **changes):
            yield run
    finally:
        run.end()


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
        binding = of_caller()
        if binding is not None and not _serves_a_pool(thread):
            with _HOOKS.lock:
                _HOOKS.started_by[thread] = binding
        original_start(thread)

    def submit(pool: ThreadPoolExecutor, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        binding = of_caller()
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
