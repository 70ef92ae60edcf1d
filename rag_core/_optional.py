"""Lazy imports of optional dependencies, with an error naming the extra to install.

Every import of a package that an extra brings goes through ``require``: a project that installed
only some extras (the harness alone, say) gets one message naming the extra, not a traceback."""

from __future__ import annotations

import importlib
import itertools
import sys
from types import ModuleType

from rag_core.errors import MissingExtraError


def require(module: str, *, extra: str, feature: str, package: str | None = None,
            minimum: tuple[int, ...] | None = None) -> ModuleType:
    """Import ``module`` or raise MissingExtraError telling which extra provides it; with
    ``minimum``, also when the installed release is older than that."""
    imported = sys.modules.get(module)  # imported already: what import_module would look up, without its machinery
    if imported is not None and minimum is None:
        return imported
    try:
        imported = importlib.import_module(module)
    except ImportError as exc:
        if exc.name and not module.startswith(exc.name.split(".")[0]):
            raise  # the package is present but one of *its* imports failed: show that
        raise MissingExtraError(package or module.split(".")[0], extra, feature) from exc
    if minimum is not None:
        installed = str(getattr(importlib.import_module(module.split(".")[0]), "__version__", "0"))
        if release(installed) < minimum:
            raise MissingExtraError(package or module.split(".")[0], extra, feature,
                                    minimum=".".join(map(str, minimum)), installed=installed)
    return imported


def http_library(feature: str) -> ModuleType:
    """httpx2, else httpx: what the core fetches with where no SDK sends for it (documents by URL).
    The openai SDK brings one of them (3.x httpx2; 1.x and 2.x httpx), and both have the API used
    here, so a project keeps the HTTP library its SDK release chose."""
    try:
        return importlib.import_module("httpx2")
    except ImportError:
        return require("httpx", extra="agent", feature=feature)


def release(version: str) -> tuple[int, ...]:
    """The leading numbers of a version: ``"1.108.1"`` -> (1, 108, 1), ``"2.0.0b1"`` -> (2, 0, 0)."""
    numbers = []
    for part in version.split(".")[:3]:
        digits = "".join(itertools.takewhile(str.isdigit, part))
        if not digits:
            break
        numbers.append(int(digits))
    return tuple(numbers)
