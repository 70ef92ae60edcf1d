"""A golden case's time limit: ``--case-timeout SECONDS`` for the session (``CI_DEFAULT`` when
``CI`` is set, none otherwise), a case's own ``timeout:`` over it. A run that overruns its limit
fails naming the case, what it was doing and where it was stuck (``stuck.py``); the session goes
on with the next case, and nothing of the run is written (its cassette and golden stay as they
were, no staging file is left).

How a run is stopped depends on the thread it runs in (pytest-timeout's two methods):

- In the main thread (plain replay; recording and ``--live`` one run at a time; pytest-xdist's
  workers run their tests in their main thread too), a SIGALRM timer whose handler raises into
  the run (``stuck.Interrupted``). A blocking socket read, a sleep, a lock or event wait and an
  event loop's select are interrupted by it, and the run unwinds as from Ctrl-C, through the same
  cleanup. It is raised only while the subject's own code runs (the harness's own work around it
  is not cut in two: the run is stopped when it reaches the subject or its end); a subject that
  caught it and carried on is interrupted again every ``REFIRE`` seconds.
- In any other thread (runs at once, ``--concurrency``), and where there is no SIGALRM
  (Windows), the run goes in a thread of its own that its caller waits for, up to the limit. A
  run still going then is left behind, given up (``Whereabouts.end``): its recorders write
  nothing and lose their staging files, and its cassettes refuse every further request.

A run in the main thread that the interrupt cannot reach (a C call that never returns to Python,
a thread that blocks the signal) is the one the session cannot outlive: its limit again later
(at least ``GRACE_FLOOR`` seconds), the backstop says where it is stuck, removes its staging
files and ends the process, rather than leave CI waiting for ever.
"""

from __future__ import annotations

import contextvars
import math
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping, Sequence, TypeVar

from rag_core.evals.common.errors import HarnessError
from rag_core.evals.recording.stuck import Interrupted, Stuck, Whereabouts, tracking, where_stuck

if TYPE_CHECKING:
    from rag_core.evals.golden.case import GoldenCase

T = TypeVar("T")

# a replayed case takes milliseconds and a recorded one a few requests of --record-timeout (60 s)
# each; five minutes is far past either, and far short of a CI job's own limit (hours), which
# would end the whole job without naming the case
CI_DEFAULT = 300.0
REFIRE = 1.0  # seconds between further interrupts of a subject that caught one and carried on
GRACE_FLOOR = 5.0  # the backstop waits the limit again past it, and at least this long
STOPPED_EXIT_STATUS = 1  # a session the backstop ended failed


def _to_stderr(text: str) -> None:
    os.write(2, text.encode("utf-8", "replace"))


@dataclass(frozen=True)
class Limit:
    """One case's limit, and where it was set (for the message)."""

    seconds: float
    origin: str
    # how the backstop's last words reach the user (the plugin writes past pytest's capture)
    say: Callable[[str], None] = field(default=_to_stderr, compare=False, repr=False)


@dataclass(frozen=True)
class CaseTimeouts:
    """The session's limits: ``seconds`` for a case that sets none (None: no limit), unless
    ``off`` (``--case-timeout off``), which lifts every limit, the cases' own too."""

    seconds: float | None = None
    origin: str = "--case-timeout"
    off: bool = False
    say: Callable[[str], None] = field(default=_to_stderr, compare=False, repr=False)

    def of(self, case: GoldenCase) -> Limit | None:
        if self.off:
            return None
        if case.timeout is not None:
            from rag_core.evals.common.paths import shown

            where = f"timeout: in {shown(case.source)}" if case.source is not None else "the case's timeout:"
            return Limit(case.timeout, where, self.say)
        return Limit(self.seconds, self.origin, self.say) if self.seconds is not None else None


def session_timeouts(value: str | None, environ: Mapping[str, str]) -> CaseTimeouts:
    """The limits ``--case-timeout`` (``value``, None when not given) sets; raises ValueError with
    the usage error's message for a value that is neither a number of seconds above 0 nor off."""
    if value is None:
        if environ.get("CI"):
            return CaseTimeouts(CI_DEFAULT, f"--case-timeout, {CI_DEFAULT:g} s by default when CI is set")
        return CaseTimeouts()
    if value.strip().lower() == "off":
        return CaseTimeouts(off=True)
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"--case-timeout={value}: give a number of seconds above 0, or off")
    return CaseTimeouts(seconds)


class CaseTimedOut(HarnessError):
    """A case's run overran its time limit (nothing of it was written)."""

    def __init__(self, case_id: str, limit: Limit, stuck: Stuck, intact: Sequence[str] = (),
                 left_behind: bool = False) -> None:
        self.case_id, self.limit, self.stuck = case_id, limit, stuck
        self.intact, self.left_behind = tuple(intact), left_behind
        super().__init__(self.text())

    def text(self) -> str:
        head = f"{self.case_id}: timed out after {self.limit.seconds:g} s ({self.limit.origin}) while {self.stuck.what}"
        if self.left_behind:
            head += "; its thread is left behind, given up: it writes nothing, and its further requests are refused"
        if self.intact:
            head += f"; nothing was written ({' and '.join(self.intact)} are as they were)"
        return f"{head}\n{self.stuck.text()}"


def within(case_id: str, limit: Limit, play: Callable[[], T], intact: Sequence[str] = ()) -> T:
    """``play()`` (one run of the case), stopped at ``limit`` with ``CaseTimedOut``; ``intact``
    names the files a run that overran leaves as they were (for the message)."""
    run = Whereabouts(case_id)
    if _alarm_usable():
        return _by_alarm(run, limit, play, intact)
    return _in_own_thread(run, limit, play, intact)


def _alarm_usable() -> bool:
    """SIGALRM can stop a run: this is the main thread, and the handler in place, if any, was set
    from Python (so it can be put back)."""
    return (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGALRM) is not None)


def _by_alarm(run: Whereabouts, limit: Limit, play: Callable[[], T], intact: Sequence[str]) -> T:
    previous = signal.getsignal(signal.SIGALRM)
    other, other_interval = signal.getitimer(signal.ITIMER_REAL)
    if other and other <= limit.seconds:  # another timer (pytest-timeout's) is due first: it stands
        with tracking(run):
            return play()
    main = threading.get_ident()
    stopped: list[Stuck] = []

    def alarm(signum: int, frame: object) -> None:
        if not run.expired:
            stopped.append(where_stuck(run, main, frame))  # type: ignore[arg-type]
            run.expired = True
        if run.in_subject:
            raise Interrupted

    started = time.monotonic()
    signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, limit.seconds, REFIRE)
    _BACKSTOP.arm(run, started + limit.seconds + max(limit.seconds, GRACE_FLOOR), limit)
    try:
        with tracking(run):
            value = play()
    except KeyboardInterrupt:
        raise
    except BaseException:
        if not run.expired:
            raise
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if other:  # the other timer goes on, as due as it was
            signal.setitimer(signal.ITIMER_REAL, max(other - (time.monotonic() - started), 1e-3), other_interval)
        _BACKSTOP.disarm(run)
    if run.expired:
        run.end()
        raise CaseTimedOut(run.case_id, limit, stopped[0], intact)
    return value


def _in_own_thread(run: Whereabouts, limit: Limit, play: Callable[[], T], intact: Sequence[str]) -> T:
    context = contextvars.copy_context()  # the run's binding (routing, the network guard) goes with it
    outcome: list[tuple[bool, object]] = []
    finished = threading.Event()

    def body() -> None:
        try:
            with tracking(run):
                outcome.append((True, play()))
        except BaseException as exc:  # handed to the caller
            outcome.append((False, exc))
        finally:
            finished.set()

    thread = threading.Thread(target=context.run, args=(body,), name=f"rag-core-case {run.case_id}", daemon=True)
    thread.start()
    try:
        done = finished.wait(limit.seconds)
    except BaseException:  # Ctrl-C while waiting (the main thread, where there is no SIGALRM)
        run.end()
        raise
    if not done:
        run.expired = True
        found = where_stuck(run, thread.ident or 0)
        run.end()
        raise CaseTimedOut(run.case_id, limit, found, intact, left_behind=True)
    ok, value = outcome[0]
    if not ok:
        raise value  # type: ignore[misc]
    return value  # type: ignore[return-value]


class _Backstop:
    """One daemon thread per process, watching the run the alarm guards: it ends the process if
    that run is still going long past its limit (see the module docstring). Arming it for the
    next case does not wake it, unless that case is due before what it waits for."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._armed: tuple[Whereabouts, float, Limit] | None = None
        self._until: float | None = None  # what the thread waits for (None: for a run to be armed)
        self._thread: threading.Thread | None = None

    def arm(self, run: Whereabouts, at: float, limit: Limit) -> None:
        with self._changed:
            self._armed = (run, at, limit)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._watch, name="rag-core-case-backstop", daemon=True)
                self._thread.start()
            elif self._until is None or at < self._until:
                self._changed.notify()

    def disarm(self, run: Whereabouts) -> None:
        with self._changed:
            if self._armed is not None and self._armed[0] is run:
                self._armed = None

    def _watch(self) -> None:
        with self._changed:
            while True:
                if self._armed is None:
                    self._until = None
                    self._changed.wait()
                    continue
                run, at, limit = self._armed
                left = at - time.monotonic()
                if left > 0:
                    self._until = at
                    self._changed.wait(left)
                    continue
                break
        _stop_the_process(run, limit)


def _stop_the_process(run: Whereabouts, limit: Limit) -> None:
    found = where_stuck(run, threading.main_thread().ident or 0)
    run.end()
    try:
        limit.say(f"\nrag-core: {run.case_id}: timed out after {limit.seconds:g} s ({limit.origin}) while {found.what}, "
                  "and the interrupt has not reached it since: it is stuck where Python cannot interrupt it (a C "
                  "call that does not return, or SIGALRM blocked). Nothing of it was written. This process ends "
                  f"here, without pytest's summary (a pytest-xdist worker is replaced).\n{found.text()}\n")
    finally:
        os._exit(STOPPED_EXIT_STATUS)


_BACKSTOP = _Backstop()
