"""Writers in a process of their own, for tests that kill them (SIGKILL) part-way."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def spawn(script: str, *args: str) -> subprocess.Popen[str]:
    """``python -c script args…`` from the project root, with ``tests`` importable."""
    return subprocess.Popen([sys.executable, "-c", script, *args], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


# what a script racing others runs once its imports and preparation are done: it announces it
# is ready and waits for the word, so the writers meet at the write without a fixed head start
AWAIT_THE_START = 'print("ready", flush=True); sys.stdin.readline()'


def racing(script: str) -> str:
    """``script`` with its ``AWAIT_THE_START`` line filled in (see ``start_together``)."""
    return script.replace("AWAIT_THE_START", AWAIT_THE_START)


def await_ready(process: subprocess.Popen[str]) -> None:
    """Wait for the script's ``ready`` line; a script that ends first fails the test with its stderr."""
    line = process.stdout.readline().strip() if process.stdout else ""
    assert line == "ready", process.stderr.read() if process.stderr else line


def start_together(processes: list[subprocess.Popen[str]]) -> None:
    """Wait for every script's ``ready`` line (see AWAIT_THE_START), then release them all at once."""
    for process in processes:
        await_ready(process)
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()


def kill_after(process: subprocess.Popen[str], delay: float) -> None:
    """Wait for the script's ``ready`` line, let it work for ``delay`` seconds, then SIGKILL it."""
    await_ready(process)
    time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    process.wait()
