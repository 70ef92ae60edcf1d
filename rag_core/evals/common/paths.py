"""Paths as a person reads them in messages."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Iterable


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
        return str(path.resolve().relative_to(_resolved(cwd)))
    except ValueError:
        return str(path)


@functools.lru_cache(maxsize=16)
def _resolved(cwd: str) -> Path:
    """The working directory resolved (once: a session replaying thousands of cases names a few
    new paths per case, each against the same directory)."""
    return Path(cwd).resolve()


def resolved_all(paths: Iterable[Path]) -> list[Path]:
    """Each path resolved, as ``Path.resolve`` resolves it, with each folder resolved once.

    Why: resolving a path checks every component of it for a link, a system call apiece; the orphan
    check at the end of a session resolves two files per case twice, all in two or three folders
    (1,000 copies of a case: 61 ms of CPU one by one, 26 this way). A file that is itself a link,
    or a name such as ``..``, is resolved whole."""
    folders: dict[Path, Path] = {}
    out = []
    for path in paths:
        if path.name in ("", ".", "..") or path.is_symlink():
            out.append(path.resolve())
            continue
        folder = folders.get(path.parent)
        if folder is None:
            folder = folders[path.parent] = path.parent.resolve()
        out.append(folder / path.name)
    return out
