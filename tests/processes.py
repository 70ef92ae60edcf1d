"""Writers in a process of their own, for tests that kill them (SIGKILL) part-way.

The writers are forked by a multiprocessing forkserver that has already imported the stores'
libraries: started as ``python -c``, each writer spent most of its life importing them (chromadb
0.7 s, lancedb 1 s, about 50 writers a run). The forkserver is a process of its own, started
once per test process with nothing running, so a writer's fork copies no test's state, open
connection or lock. A writer looks like a ``subprocess.Popen``: its stdin, stdout and stderr are
pipes, it can be signalled, waited for and communicated with, and a killed one reports -9.

Two differences from ``python -c``, neither of which a writer here depends on: a writer has the
environment the forkserver started with (the first spawn's ``os.environ``), and multiprocessing
re-imports the test process's main script in it when that is a file (pytest's console script,
harmless; ``python -m pytest`` and xdist workers have none).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[1]

# What the forkserver imports before its first fork: what the writers' scripts import, except
# lancedb itself (its import starts an event-loop thread, and lancedb warns that a fork may
# deadlock on it); its namespace client is most of its import time and starts no thread.
# pytest: run by its console script, multiprocessing re-runs that script in each writer.
PRELOAD = ["rag_core.vectordb", "rag_core.db", "rag_core.embedder", "rag_core._files", "chromadb",
           "lance_namespace", "psycopg", "tests.fakes", "pytest"]

# also for tests that start a function in a process of its own (multiprocessing.Process)
FORKSERVER = multiprocessing.get_context("forkserver")
FORKSERVER.set_forkserver_preload(PRELOAD)


def _run(script: str, args: tuple[str, ...], stdin: Connection, stdout: Connection, stderr: Connection) -> None:
    """In the writer: the pipes become fds 0-2, then the script runs as ``python -c`` would run it
    from the project root."""
    os.chdir(ROOT)
    for fd, end in enumerate((stdin, stdout, stderr)):
        os.dup2(end.fileno(), fd)
        end.close()
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # multiprocessing pointed it at /dev/null
    sys.argv = ["-c", *args]
    namespace = {"__name__": "__main__"}
    try:
        exec(compile(script, "<writer>", "exec"), namespace)
    finally:
        # what an interpreter's exit would do before multiprocessing's os._exit: the script's
        # objects are released (stores and files closed) and the output flushed
        namespace.clear()
        sys.stdout.flush()


class Writer:
    """A forked writer with ``subprocess.Popen``'s interface, as far as these tests use it."""

    def __init__(self, script: str, args: tuple[str, ...]) -> None:
        pipes = [os.pipe() for _ in range(3)]  # (read end, write end) each
        child_ends = [Connection(pipes[0][0]), Connection(pipes[1][1]), Connection(pipes[2][1])]
        self._process = FORKSERVER.Process(target=_run, args=(script, args, *child_ends), daemon=True)
        self._process.start()  # the forkserver has its own copies of the child's ends now
        for end in child_ends:
            end.close()
        self.pid = self._process.pid
        self.stdin: IO[str] = open(pipes[0][1], "w", encoding="utf-8")
        self.stdout: IO[str] = open(pipes[1][0], encoding="utf-8")
        self.stderr: IO[str] = open(pipes[2][0], encoding="utf-8")

    @property
    def returncode(self) -> int | None:
        return self._process.exitcode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:  # it ended since returncode was read
                pass

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        if self.returncode is None:
            raise subprocess.TimeoutExpired(f"writer {self.pid}", timeout or 0)
        self._close()
        return self.returncode

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        """Close stdin, read stdout and stderr to their ends (both at once: a writer filling one
        pipe while the other is read would block), then wait for the exit."""
        self.stdin.close()
        read: dict[str, str] = {}
        readers = [threading.Thread(target=lambda n=name, s=stream: read.__setitem__(n, s.read()), daemon=True)
                   for name, stream in (("out", self.stdout), ("err", self.stderr))]
        for reader in readers:
            reader.start()
        deadline = None if timeout is None else time.monotonic() + timeout

        def remaining() -> float | None:
            return None if deadline is None else max(0.0, deadline - time.monotonic())

        for reader in readers:
            reader.join(remaining())
        if any(reader.is_alive() for reader in readers):
            self.kill()
            self.wait()
            raise subprocess.TimeoutExpired(f"writer {self.pid}", timeout or 0)
        self.wait(remaining())
        return read["out"], read["err"]

    def _close(self) -> None:
        for stream in (self.stdin, self.stdout, self.stderr):
            if not stream.closed:
                try:
                    stream.close()
                except BrokenPipeError:  # stdin with unread input the writer never took
                    pass


def spawn(script: str, *args: str) -> Writer:
    """Run ``script`` as ``python -c script args…`` would, with the project importable."""
    return Writer(script, args)


# what a script racing others runs once its imports and preparation are done: it announces it
# is ready and waits for the word, so the writers meet at the write without a fixed head start
AWAIT_THE_START = 'print("ready", flush=True); sys.stdin.readline()'


def racing(script: str) -> str:
    """``script`` with its ``AWAIT_THE_START`` line filled in (see ``start_together``)."""
    return script.replace("AWAIT_THE_START", AWAIT_THE_START)


def await_ready(process: Writer) -> None:
    """Wait for the script's ``ready`` line; a script that ends first fails the test with its stderr."""
    line = process.stdout.readline().strip()
    assert line == "ready", process.stderr.read() or line


def start_together(processes: list[Writer]) -> None:
    """Wait for every script's ``ready`` line (see AWAIT_THE_START), then release them all at once."""
    for process in processes:
        await_ready(process)
    for process in processes:
        process.stdin.write("go\n")
        process.stdin.flush()


def kill_after(process: Writer, delay: float) -> None:
    """Wait for the script's ``ready`` line, let it work for ``delay`` seconds, then SIGKILL it."""
    await_ready(process)
    time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    process.wait()
