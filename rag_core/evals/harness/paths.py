"""Paths as a person reads them in messages."""

from __future__ import annotations

from pathlib import Path


def shown(path: Path | None) -> str:
    """Relative to the working directory when inside it, else absolute."""
    if path is None:
        return "<case>"
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
