"""Request bodies checked against a provider SDK's own request types (a params ``TypedDict``): each API
family's module (``openai.py``, ``anthropic.py``, ...) names its types, this checks a body against one."""

from __future__ import annotations

import functools
import typing
from typing import Any

from pydantic import TypeAdapter


@functools.cache
def _checker(params_type: Any) -> tuple[frozenset[str], TypeAdapter[Any]]:
    """The keys a params type knows and its validator, built once per process: building the
    validator of the Responses params takes about 80 ms, validating a body well under 1 ms."""
    return frozenset(typing.get_type_hints(params_type)), TypeAdapter(params_type)


def validate_params(params_type: Any, body: dict[str, Any]) -> None:
    """Unknown top-level keys are errors too: pydantic ignores extra keys of a TypedDict,
    and a misspelt option must not pass."""
    known, adapter = _checker(params_type)
    unknown = set(body) - known
    if unknown:
        raise ValueError(f"keys the SDK does not know: {sorted(unknown)}")
    adapter.validate_python(body)
