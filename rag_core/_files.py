"""Writing a file so that it lands whole or not at all: a temporary file in the same folder,
flushed to disk, then renamed over the target (``os.replace`` is atomic on POSIX and Windows).
A crash or a kill at any point leaves either the previous file or the new one, never a mix.

The new file gets the mode a plain ``open()`` would give it: the previous file's, or what the
user's umask leaves of 0o666 (``mkstemp`` alone makes every file 0600)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        if hasattr(os, "fchmod"):  # POSIX; elsewhere files take the folder's permissions anyway
            os.fchmod(handle, _mode_for(path))
        with os.fdopen(handle, "wb") as out:
            out.write(data.encode("utf-8") if isinstance(data, str) else data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _mode_for(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read without changing it where the system tells it (Linux), else by
    setting and restoring it."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
