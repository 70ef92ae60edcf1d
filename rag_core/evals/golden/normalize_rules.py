"""``normalize:`` and ``ignore:`` rules: which values at which paths a golden replaces with a
placeholder, and what a ``compare_with`` comparison cuts out of both sides."""

from __future__ import annotations

import re

from pydantic import field_validator

from rag_core.evals.common.strict_model import StrictModel


def checked_regex(pattern: str | None) -> str | None:
    try:
        re.compile(pattern or "")
    except re.error as exc:
        raise ValueError(f"not a regular expression: {exc}") from None
    return pattern


# a path: dotted keys, with [*] (every item), [2] or [2:] (from an index), [name=x] (items by a field)
_STEP = r"(?:[^.\[\]]+|\[(?:\*|\d+:?|[^\]=]+=[^\]]*)\])"
_PATH = re.compile(rf"{_STEP}(?:\.?{_STEP})*")


def checked_path(value: str) -> str:
    """A malformed path (``requests[``) read as a shorter one and replaced a whole field."""
    if not _PATH.fullmatch(value):
        raise ValueError(f"{value!r} is not a path: dotted keys with [*], [2], [2:] or [name=value] steps, "
                         "e.g. requests[*].input[0].content")
    return value


class NormalizeRule(StrictModel):
    """Replace the value at ``path`` (dotted, ``[*]`` for every list item) with ``placeholder``;
    with ``pattern`` (a Python regular expression), only its matches inside the strings there."""

    path: str
    placeholder: str
    pattern: str | None = None

    _compiles = field_validator("pattern")(checked_regex)
    _is_path = field_validator("path")(checked_path)


class IgnoreRule(StrictModel):
    """For ``compare_with``: cut every match of ``pattern`` (a Python regular expression) out of
    the strings at ``path``, on both sides (a block of a prompt one side words differently)."""

    path: str
    pattern: str

    _compiles = field_validator("pattern")(checked_regex)
    _is_path = field_validator("path")(checked_path)


DEFAULT_RULES = [NormalizeRule(path="references[*].time", placeholder="<elapsed>")]
