"""Every file the harness writes passes the credential detector, then lands atomically
(``rag_core._files.write_atomic``: temporary file, fsync, rename). On a refusal or a crash the
previous file stays as it was.

A structured file (JSON, an HTML page's embedded data, a summary rendered from a run's cases) is
screened as the data it is rendered from, not as its text: the detector reads each decoded string
value and key, where a JSON text would show a key that opens a line as ``\\nsk-…`` and a tab before
it as ``\\tsk-…``, which no rule reads as a token's start.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from rag_core._files import write_atomic

__all__ = ["append_checked", "screen", "write_atomic", "write_checked"]

Render = Callable[[Any], "str | bytes"]


def screen(path: Path, data: Any) -> None:
    """Raise CredentialError naming ``path`` and the place in ``data`` (a text, bytes, or nested
    dicts and lists of them) where something looks like a credential."""
    from rag_core.evals.credentials import check
    from rag_core.evals.common.paths import shown

    check(shown(path), data.decode("utf-8", "replace") if isinstance(data, bytes) else data)


def write_checked(path: Path, data: Any, render: Render | None = None, staged_for: Path | None = None) -> None:
    """Write ``path``: ``data`` itself (a text or bytes), or ``render(data)`` for a file rendered
    from structured data (dicts, lists, strings, numbers). Refused, before anything is written,
    with a CredentialError naming the file and the place, if ``data`` holds what looks like a
    credential. ``staged_for``: the file a staged ``path`` will be renamed to, which the refusal names."""
    screen(staged_for or path, data)
    write_atomic(path, data if render is None else render(data))


def append_checked(path: Path, data: Any, render: Render | None = None) -> None:
    """As ``write_checked``, but what is written is added after what the file already holds (a CI
    job summary keeps what earlier commands of its step wrote there).

    The file is read, and the old content with the new one after it lands in one rename: a crash
    or a refusal leaves the file as it was, never half a summary (an ``O_APPEND`` write cut short
    would leave one). What was there is kept byte for byte; it is not screened, since the harness
    did not write it. A path that is a symbolic link appends to the file it names."""
    screen(path, data)
    new = data if render is None else render(data)
    added = new.encode("utf-8") if isinstance(new, str) else new
    target = path.resolve() if path.is_symlink() else path
    try:
        old = target.read_bytes()
    except FileNotFoundError:
        old = b""
    if old:
        # a blank line between, so the new part's heading starts a block of its own
        old += b"\n" if old.endswith(b"\n") else b"\n\n"
    write_atomic(target, old + added)
