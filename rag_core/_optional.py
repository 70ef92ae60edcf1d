"""Lazy imports of optional dependencies, with an error naming the extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from rag_core.errors import MissingExtraError


def require(module: str, *, extra: str, feature: str, package: str | None = None) -> ModuleType:
    """Import ``module`` or raise MissingExtraError telling which extra provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if exc.name and not module.startswith(exc.name.split(".")[0]):
            raise  # the package is present but one of *its* imports failed: show that
        raise MissingExtraError(package or module.split(".")[0], extra, feature) from exc
