"""Where a case's run is: the phase it is in, the provider requests it has in flight, and, once it
has overrun its time limit (``time_limit.py``), the stack it was stuck at, trimmed to the code
under test.

The runner marks the subject's phases (``preparing``, ``running``, ``judging``); the recorder
hands each cassette it opens to ``watch_requests``, which notes a request when vcrpy asks whether
the cassette can answer it (the first thing every patched client does with a request) and forgets
it once it is answered. A request counts as in flight only while a thread or task of the run is
inside vcrpy with it: one whose client gave up on it (an error, a retry) is not named.

Nothing is kept for a run without a time limit: the marks find no run and do nothing.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import threading
import traceback
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import FrameType
from typing import Any, Callable, Iterator

from rag_core.evals.common.errors import HarnessError


# the subject is not running: the harness opens or closes its cassette, its guard, its environment
HARNESS_WORK = "the harness's own work around the subject (opening or closing its cassette)"
SHOWN_FRAMES = 8  # the innermost frames of the stuck stack always shown
SHOWN_OWN = 4  # and at most this many more of the project's own code further out

# frames of these are the harness and the test runner around the subject, not the code under test
_RUNNER_PACKAGES = ("rag_core.evals", "pytest", "_pytest", "pluggy", "xdist", "execnet")


class Interrupted(BaseException):
    """Raised into a run that overran its time limit (a BaseException: the subject's ``except
    Exception`` must not take it for one of its own errors and carry on)."""


class RunEnded(HarnessError):
    """A request from a run that had already overrun its time limit (its thread was left behind)."""


@dataclass(frozen=True)
class InFlight:
    """A provider request sent and not yet answered."""

    method: str
    url: str  # scrubbed: a key in a query parameter is never shown
    number: int  # its number among the requests of its cassette

    def __str__(self) -> str:
        return f"{self.method} {self.url} (request #{self.number} of its cassette)"


@dataclass(frozen=True)
class Stuck:
    """What an overrunning run was doing when its time was up, and where it was stuck."""

    doing: str  # the phase, with its turn or judge
    requests: tuple[InFlight, ...]  # provider requests it was waiting on
    stack: tuple[str, ...]  # the stuck thread's frames, innermost last, trimmed (each a traceback entry)
    awaiting: tuple[str, ...] = ()  # an async target's coroutines, when the thread waited on them

    def text(self) -> str:
        lines = ["stuck at (innermost call last):", *self.stack]
        if self.awaiting:
            lines += ["awaiting (innermost last):", *self.awaiting]
        return "\n".join(line.rstrip("\n") for line in lines)

    @property
    def what(self) -> str:
        """The phase, and the requests it was waiting on, in one clause."""
        if not self.requests:
            return self.doing
        return f"{self.doing}, waiting on a provider request: " + "; ".join(map(str, self.requests))


@dataclass(frozen=True)
class _Phase:
    doing: str
    detail: Callable[[], str | None] | None = None  # read when the time is up (the turn, the judge)

    def text(self) -> str:
        more = self.detail() if self.detail is not None else None
        return f"{self.doing} ({more})" if more else self.doing


class Whereabouts:
    """One run's phase, requests in flight and recorders, read by the time limit's alarm or
    watchdog while the run goes on."""

    def __init__(self, case_id: str) -> None:
        self.case_id = case_id
        self.phase = _Phase(HARNESS_WORK)
        self.in_subject = 0  # > 0 while the subject's own code runs: an interrupt may be raised there
        self.expired = False  # the time limit is up (set once, by the alarm or the watchdog)
        self.ended = threading.Event()  # the run was given up: nothing it does from now on counts
        self.recorders: list[Any] = []  # the run's recorders, ended with it
        self.binding: Any = None  # the run as routing and the network guard know it (run_binding.Run)
        self._lock = threading.Lock()
        # per thread and task: the request it sent last and has not had answered, its number, its task
        self._requests: dict[tuple[int, int], tuple[Any, int, Any]] = {}

    def end(self) -> None:
        """Give the run up: its recorders write nothing from now on and lose their staging files,
        its cassettes refuse every further request (``watch_requests``), and whatever its code
        still sends, through any client, is late (``run_binding``: refused, reported naming it)."""
        self.ended.set()
        if self.binding is not None:
            self.binding.end()
        for recorder in list(self.recorders):
            recorder.end()

    def _sent(self, request: Any, number: int) -> None:
        key, task = _sender()
        with self._lock:
            self._requests[key] = (request, number, task)

    def _answered(self, request: Any) -> None:
        key, _ = _sender()
        with self._lock:
            held = self._requests.get(key)
            if held is not None and held[0] is request:
                del self._requests[key]

    def in_flight(self) -> list[tuple[int, Any, InFlight]]:
        """(thread, task or None, request) of every request noted and not answered."""
        from rag_core.evals.credentials import detector

        with self._lock:
            held = list(self._requests.items())
        return [(key[0], task, InFlight(str(request.method), detector().scrub_url(str(request.uri)), number))
                for key, (request, number, task) in held]


_RUN: ContextVar[Whereabouts | None] = ContextVar("rag_core_case_whereabouts", default=None)


@contextmanager
def tracking(run: Whereabouts) -> Iterator[Whereabouts]:
    """``run`` is the calling context's run until the block ends; it is a run of its own for
    routing and the network guard too, so ending it (``Whereabouts.end``) ends theirs."""
    from rag_core.evals.recording import run_binding

    token = _RUN.set(run)
    try:
        with run_binding.running(run.case_id) as run.binding:
            yield run
    finally:
        _RUN.reset(token)


@contextmanager
def _phase(doing: str, detail: Callable[[], str | None] | None = None) -> Iterator[None]:
    """The subject's own code runs in the block: what it is doing, for the message."""
    run = _RUN.get()
    if run is None:
        yield
        return
    previous = run.phase
    run.phase = _Phase(doing, detail)
    run.in_subject += 1
    try:
        if run.expired:  # the time ran out while the harness worked (or a thread left behind goes on)
            raise Interrupted
        yield
    finally:
        run.in_subject -= 1
        run.phase = previous


def _named(subject: Any) -> str:
    """The agent, or the target and the callable it names."""
    spec = getattr(subject, "spec", None)
    return f"the target {spec}" if spec else subject.name


def preparing(subject: Any) -> Any:
    if getattr(subject, "spec", None):
        return _phase(f"importing and preparing {_named(subject)}")
    return _phase(f"preparing {_named(subject)} (building its model)")


def running(subject: Any, turn_starts: list[int], turns: int) -> Any:
    return _phase(f"running {_named(subject)}", lambda: f"turn {max(len(turn_starts), 1)} of {turns}")


def judging(recorder: Any) -> Any:
    return _phase("running the judges", lambda: f"the {recorder.label} judge" if recorder.label else None)


def _sender() -> tuple[tuple[int, int], Any]:
    """Who sends a request: (its thread, its asyncio task's id, 0 outside one), and the task;
    asyncio is not imported for this."""
    asyncio = sys.modules.get("asyncio")
    task = asyncio.current_task() if asyncio is not None and asyncio.events._get_running_loop() is not None else None
    return (threading.get_ident(), id(task) if task is not None else 0), task


def watch_requests(recorder: Any, cassette: Any) -> None:
    """Note the requests ``cassette`` (a vcrpy cassette the calling run opened) is asked for, while
    they are in flight; once the run has ended (left behind, past its time limit), every request
    it makes through the cassette fails with ``RunEnded`` instead of being played, recorded or
    sent. The run's recorder is ended with it."""
    run = _RUN.get()
    if run is None:
        return
    run.recorders.append(recorder)
    if run.ended.is_set():  # a thread left behind opened it: it gets nothing written
        recorder.end()
    can_play, play, append = cassette.can_play_response_for, cassette.play_response, cassette.append
    seen: list[Any] = []  # the cassette's requests so far (held: their ids are not reused)

    def asked(request: Any) -> Any:
        if run.ended.is_set():
            from rag_core.evals.credentials import detector

            raise RunEnded(f"{run.case_id}: {request.method} {detector().scrub_url(str(request.uri))} was sent after "
                           "the case had overrun its time limit and was given up; it is refused")
        if not seen or seen[-1] is not request:  # vcrpy may ask twice about one request, in a row
            seen.append(request)
        run._sent(request, len(seen))
        return can_play(request)

    def played(request: Any) -> Any:
        try:
            return play(request)
        finally:
            run._answered(request)

    def recorded(request: Any, response: Any) -> Any:
        try:
            return append(request, response)
        finally:
            run._answered(request)

    cassette.can_play_response_for, cassette.play_response, cassette.append = asked, played, recorded
    cassette.rag_core_run_ended = run.ended  # routing may read it: the run this cassette belongs to has ended


# ------------------------------------------------------------------ where it was stuck

def _module(frame: FrameType) -> str:
    return str(frame.f_globals.get("__name__") or "")


def _runner(name: str) -> bool:
    """The harness, the test runner, or the standard library (what surrounds the subject)."""
    return (name.startswith(_RUNNER_PACKAGES) or name.split(".", 1)[0] in sys.stdlib_module_names
            or name == "__main__")


def _plumbing(frame: FrameType) -> bool:
    """The harness's and vcrpy's frames inside the subject's calls (the message says what they
    were doing), and the import machinery's."""
    return (_module(frame).startswith(("rag_core.evals.", "vcr."))
            or frame.f_code.co_filename.startswith("<frozen importlib"))


def _libraries() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    folders = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths}
    return tuple(os.path.normcase(os.path.realpath(folder)) + os.sep for folder in folders)


def _own_code(frame: FrameType) -> bool:
    """The project's own code: not the standard library, not an installed package."""
    path = os.path.normcase(os.path.realpath(frame.f_code.co_filename))
    return not path.startswith(_libraries()) and "site-packages" not in path and not path.startswith("<")


def _outward(frame: FrameType | None) -> list[FrameType]:
    """The frames from ``frame`` out, outermost first."""
    frames = []
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    return frames[::-1]


def subject_frames(frames: list[FrameType]) -> list[FrameType]:
    """The frames of the code under test: from the first one outside the harness, the test runner
    and the standard library that the harness called, inwards; with none, from the harness's
    innermost frame (what of the standard library it was waiting in)."""
    harness = [i for i, frame in enumerate(frames) if _module(frame).startswith("rag_core.evals")]
    if not harness:
        return frames
    for index in range(harness[0], len(frames)):
        if not _runner(_module(frames[index])):
            return frames[index:]
    return frames[harness[-1]:]


def trimmed(frames: list[FrameType]) -> tuple[str, ...]:
    """Traceback entries of ``frames`` (outermost first), the harness's and vcrpy's left out
    (unless nothing else is left): the innermost ``SHOWN_FRAMES``, and the innermost ``SHOWN_OWN``
    of the project's own code further out; what is left out, as a count."""
    shown = [i for i, frame in enumerate(frames) if not _plumbing(frame)] or list(range(len(frames)))
    keep = set(shown[-SHOWN_FRAMES:])
    keep |= set([i for i in shown if _own_code(frames[i]) and i not in keep][-SHOWN_OWN:])
    entries: list[str] = []
    skipped = 0
    for index, frame in enumerate(frames):
        if index not in keep:
            skipped += 1
            continue
        if skipped:
            entries.append(f"  ... {skipped} frame(s) left out")
            skipped = 0
        summary = traceback.StackSummary.extract([(frame, frame.f_lineno)], lookup_lines=True)
        entries += [_relative(line) for line in summary.format()]
    return tuple(entries)


def _relative(entry: str) -> str:
    """A traceback entry with a file under the working folder named relative to it."""
    cwd = os.getcwd() + os.sep
    return entry.replace(f'File "{cwd}', 'File "', 1)


def _awaited(coroutine: Any) -> list[FrameType]:
    """The frames of a suspended coroutine and of what it awaits, outermost first (a task's own
    ``get_stack`` gives only the outermost)."""
    frames = []
    while coroutine is not None and len(frames) < 200:
        frame = next((getattr(coroutine, name) for name in ("cr_frame", "gi_frame", "ag_frame")
                      if getattr(coroutine, name, None) is not None), None)
        if frame is None:
            break
        frames.append(frame)
        coroutine = next((getattr(coroutine, name) for name in ("cr_await", "gi_yieldfrom", "ag_await")
                          if getattr(coroutine, name, None) is not None), None)
    return frames


def _target_coroutine(frames: list[FrameType]) -> Any:
    """The async target's coroutine the stuck thread waits on (the harness's ``target._run``
    runs it on the event loop), if any."""
    for frame in reversed(frames):
        if _module(frame) == "rag_core.evals.golden.targets" and frame.f_code.co_name == "_run":
            return frame.f_locals.get("coroutine")
    return None


def _waiting(frames: list[FrameType]) -> bool:
    """Inside vcrpy's stubs: a request sent and not yet answered."""
    return any(_module(frame).startswith("vcr.") for frame in frames)


def where_stuck(run: Whereabouts, thread: int, frame: FrameType | None = None) -> Stuck:
    """What ``run`` was doing, from its thread ``thread`` (its frame ``frame`` when the caller has
    it: a signal handler's interrupted frame), and the requests of the run still in flight."""
    current = sys._current_frames()
    stack = _outward(frame if frame is not None else current.get(thread))
    requests = []
    for ident, task, flight in run.in_flight():
        if task is not None:  # a coroutine's request: in flight while its task waits inside vcrpy's stubs
            waiting = not task.done() and _waiting(_awaited(task.get_coro()))
        else:
            waiting = _waiting(stack if ident == thread else _outward(current.get(ident)))
        if waiting:
            requests.append(flight)
    coroutine = _target_coroutine(stack)
    return Stuck(run.phase.text(), tuple(requests), trimmed(subject_frames(stack)),
                 trimmed(_awaited(coroutine)) if coroutine is not None else ())
