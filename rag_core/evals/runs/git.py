"""The commit a run was made from, and whether its tracked files differed from it.

Asked of ``git`` itself, failing soft: no git, no repository, a slow disk or a broken one give
a record without it, never a failed session.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from rag_core.evals.runs.schema import GitState

TIMEOUT = 5.0  # seconds for each git command


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=TIMEOUT,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def git_state(root: Path) -> GitState | None:
    commit = _git(root, "rev-parse", "HEAD")
    if not commit:
        return None
    # untracked files left out: they are often the run's own output (the records among them)
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    return GitState(commit.strip(), dirty=bool(status and status.strip()))
