"""Every file the harness writes passes the credential detector, then lands atomically
(``rag_core._files.write_atomic``: temporary file, fsync, rename). On a refusal or a crash the
previous file stays as it was."""

from __future__ import annotations

from pathlib import Path

from rag_core._files import write_atomic

__all__ = ["write_atomic", "write_checked"]


def write_checked(path: Path, data: str | bytes) -> None:
    """Refused (CredentialError naming the file and the place) if anything in ``data`` looks like
    a credential; else written atomically."""
    from rag_core.evals.credentials import check
    from rag_core.evals.harness.paths import shown

    check(shown(path), data if isinstance(data, str) else data.decode("utf-8", "replace"))
    write_atomic(path, data)
