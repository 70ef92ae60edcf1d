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
    return subprocess.Popen([sys.executable, "-c", script, *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})


def kill_after(process: subprocess.Popen[str], delay: float) -> None:
    """Wait for the script's ``ready`` line, let it work for ``delay`` seconds, then SIGKILL it."""
    line = process.stdout.readline().strip() if process.stdout else ""
    assert line == "ready", process.stderr.read() if process.stderr else line
    time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    process.wait()
