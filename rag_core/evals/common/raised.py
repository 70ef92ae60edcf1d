"""An exception a case's subject raised, as a person reads it: its type and message, and where to
look: the innermost frame of the code under test, not the harness's, the standard library's or an
installed package's (the frames under those are how the call got there, not where it went wrong).
"""

from __future__ import annotations

import functools
import inspect
import sysconfig
import traceback
from pathlib import Path
from typing import Any

from rag_core.evals.common.paths import shown

MESSAGE_LIMIT = 1_000  # characters of an exception's message in a failure (a provider error can carry a page)
_HARNESS = str(Path(__file__).resolve().parents[1])  # rag_core/evals: the harness, not the code under test


@functools.cache
def _library_folders() -> tuple[str, ...]:
    """Where the standard library and installed packages live, for this interpreter."""
    paths = sysconfig.get_paths()
    folders = {str(Path(paths[name]).resolve()) for name in ("stdlib", "platstdlib", "purelib", "platlib")
               if paths.get(name)}
    return tuple(sorted(folders)) + (_HARNESS,)


@functools.lru_cache(maxsize=256)
def _is_code_under_test(filename: str) -> bool:
    if filename.startswith("<"):  # <frozen importlib._bootstrap>, <string>: no file to open
        return False
    resolved = str(Path(filename).resolve())
    if "site-packages" in resolved or "dist-packages" in resolved:
        return False
    return not any(resolved == folder or resolved.startswith(folder + "/") for folder in _library_folders())


def origin(error: BaseException) -> str | None:
    """``file:line, in function`` of the innermost frame of the code under test that the exception
    went through, or None when none did (a wrong signature fails in the caller)."""
    found = None
    for frame, line in traceback.walk_tb(error.__traceback__):
        if _is_code_under_test(frame.f_code.co_filename):
            found = f"{shown(Path(frame.f_code.co_filename))}:{line}, in {frame.f_code.co_name}"
    return found


def defined_at(function: Any) -> str | None:
    """``file:line`` where a callable's code is defined (a function, a method, an object with
    ``__call__``), or None when it has no Python source (a builtin)."""
    try:
        function = inspect.unwrap(function)
    except ValueError:  # a wrapper cycle
        pass
    code = getattr(function, "__code__", None) or getattr(getattr(function, "__call__", None), "__code__", None)
    if code is None:
        return None
    return f"{shown(Path(code.co_filename))}:{code.co_firstlineno}"


def described(error: BaseException) -> str:
    """``Type: message``, the message cut to ``MESSAGE_LIMIT`` characters."""
    message = str(error)
    if len(message) > MESSAGE_LIMIT:
        message = f"{message[:MESSAGE_LIMIT]}… ({len(message) - MESSAGE_LIMIT:,} more characters)"
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def in_chain(error: BaseException | None, wanted: tuple[type, ...]) -> BaseException | None:
    """The first exception of a ``wanted`` type in ``error``'s chain (its causes and contexts, and
    the ``cause`` an SDK's wrapper keeps), or None."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, wanted):
            return error
        cause = getattr(error, "cause", None)
        error = cause if isinstance(cause, BaseException) else (error.__cause__ or error.__context__)
    return None
