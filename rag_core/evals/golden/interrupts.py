"""Ctrl-C while a session's runs go at once (``--concurrency``): taken where the main thread can
take it without harm.

Python raises ``KeyboardInterrupt`` in the main thread between any two of its bytecodes. With
runs going on in other threads, two such places do lasting harm:

- inside importlib, between taking the global import lock and the ``try`` that gives it back:
  the lock stays taken, and every run's next import waits for it for ever (the session hangs
  after Ctrl-C, its runs stuck in ``_get_module_lock``);
- inside a finalizer (``__del__``) or a weakref callback: Python prints the interrupt as
  "Exception ignored" and drops it, and the session goes on as if no key had been pressed.

So while the runs go at once, SIGINT only notes the Ctrl-C, and the main thread raises
``KeyboardInterrupt`` itself at two places where it holds nothing: while it waits for a case's
runs (``wait``), and after each test (``deliver``, from the plugin). A second Ctrl-C before the
first was taken is raised at once: the user's way out of a main thread stuck elsewhere.
"""

from __future__ import annotations

import signal
import threading
from concurrent.futures import Future, wait
from typing import TypeVar

T = TypeVar("T")

# how often the main thread, waiting for a run, looks for a Ctrl-C noted meanwhile: a signal
# handler that only notes cannot wake a wait on a lock
POLL_SECONDS = 0.05


class DeferredInterrupt:
    """SIGINT noted while installed, and raised by ``deliver`` or ``wait`` in the main thread."""

    def __init__(self) -> None:
        self.pending = False
        self._installed = False

    def install(self) -> None:
        """Take SIGINT over, if this is the main thread and Python's own handler has it (a handler
        a project or another plugin set, or an ignored SIGINT, is left as it is)."""
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            return
        signal.signal(signal.SIGINT, self._note)
        self._installed = True

    def restore(self) -> None:
        """Python's handler back (a Ctrl-C noted and not yet taken is dropped: the session is
        ending, and its runs are being stopped)."""
        if self._installed:
            signal.signal(signal.SIGINT, signal.default_int_handler)  # the only one ``install`` replaces
            self._installed = False

    def _note(self, signum: int, frame: object) -> None:
        if self.pending:  # pressed again before the first was taken
            self.pending = False
            raise KeyboardInterrupt
        self.pending = True

    def deliver(self) -> None:
        """Raise the Ctrl-C noted since, if any."""
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt

    def wait(self, future: Future[T]) -> T:
        """The future's result, once it is done; a Ctrl-C meanwhile is raised here."""
        while True:
            self.deliver()
            done, _ = wait([future], timeout=POLL_SECONDS)
            if done:
                return future.result()
