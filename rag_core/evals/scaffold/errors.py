"""What ``rag-core init`` raises when it cannot scaffold a project."""

from __future__ import annotations


class ScaffoldError(Exception):
    """``rag-core init`` could not scaffold the project; the message is one line, and says
    whether anything was left behind."""
