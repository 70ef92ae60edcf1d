"""What a ``package.module:attribute`` reference in a case or suite file names, imported, with one
clear error naming the file and field when it cannot be."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from rag_core.evals.common.errors import CaseFileError
from rag_core.evals.common.paths import shown


def import_named(target: str, where: str) -> Any:
    """What a ``module:attribute`` string names; a CaseFileError naming ``where`` otherwise."""
    module_name, _, attribute = target.partition(":")
    try:
        return getattr(importlib.import_module(module_name), attribute)
    except ModuleNotFoundError as exc:
        raise CaseFileError(f"{where}: cannot import {target!r}: no module named {exc.name!r} (not installed, or not "
                            "on pytest's pythonpath)") from None
    except (ImportError, AttributeError) as exc:
        raise CaseFileError(f"{where}: cannot import {target!r} ({exc})") from None
    except (Exception, SystemExit) as exc:  # the module's own code failed while it was imported
        raise CaseFileError(f"{where}: importing {module_name!r} failed{_origin(exc)}: {type(exc).__name__}: {exc}") from None


def _origin(exc: BaseException) -> str:
    """Where in the user's code an import failed: the last traceback frame outside importlib."""
    import traceback

    if isinstance(exc, SyntaxError) and exc.filename:
        return f" at {shown(Path(exc.filename))}:{exc.lineno}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "importlib" not in f.filename]
    return f" at {shown(Path(frames[-1].filename))}:{frames[-1].lineno}" if frames else ""
