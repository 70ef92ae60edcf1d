"""Paths as a person reads them in messages."""

from __future__ import annotations

import functools
import os
from pathlib import Path


def shown(path: Path | None) -> str:
    """Relative to the working directory when inside it, else absolute."""
    if path is None:
        return "<case>"
    return _shown(path, os.getcwd())


# a replayed case names its files several times (most of them in messages it never prints):
# resolving each path walked its folders with a system call apiece every time
@functools.lru_cache(maxsize=1024)
def _shown(path: Path, cwd: str) -> str:
    try:
        return str(path.resolve().relative_to(Path(cwd).resolve()))
    except ValueError:
        return str(path)
