"""The ``@tool`` decorator: turn a function into a Function with explicit options."""

from __future__ import annotations

from typing import Any, Callable, overload

from rag_core.tools.function import Function


@overload
def tool(fn: Callable[..., Any], /) -> Function: ...
@overload
def tool(
    *, name: str | None = None, description: str | None = None, strict: bool = False
) -> Callable[[Callable[..., Any]], Function]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    strict: bool = False,
) -> Function | Callable[[Callable[..., Any]], Function]:
    """Use as ``@tool`` or ``@tool(name=..., description=..., strict=True)``.

    A plain function passed to ``Agent(tools=[...])`` works without the decorator; use it to
    rename a tool, override the docstring description, or ask for strict schemas.
    """

    def wrap(f: Callable[..., Any]) -> Function:
        return Function.from_callable(f, name=name, description=description, strict=strict)

    return wrap(fn) if fn is not None else wrap
