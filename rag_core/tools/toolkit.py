"""Toolkit: a named group of tools that may also contribute instructions to the system message."""

from __future__ import annotations

import weakref
from typing import Any, Callable, Iterable

from rag_core.tools.function import Function


class Toolkit:
    def __init__(
        self,
        name: str = "toolkit",
        tools: Iterable[Callable[..., Any] | Function] = (),
        instructions: str | None = None,
        add_instructions: bool = False,
    ) -> None:
        self.name = name
        self.instructions = instructions
        self.add_instructions = add_instructions
        self.functions: list[Function] = [as_function(t) for t in tools]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, tools={[f.name for f in self.functions]})"


_FUNCTIONS: weakref.WeakKeyDictionary[Any, Function] = weakref.WeakKeyDictionary()


def as_function(obj: Callable[..., Any] | Function) -> Function:
    """The Function for a tool. A plain function's Function is built once and reused, so
    each run does not derive its schema and argument validator again."""
    if isinstance(obj, Function):
        return obj
    try:
        cached = _FUNCTIONS.get(obj)
    except TypeError:  # not weak-referenceable or not hashable: build it each time
        return Function.from_callable(obj)
    if cached is None:
        cached = _FUNCTIONS[obj] = Function.from_callable(obj)
    return cached


def expand_tools(tools: Iterable[Any]) -> list[Function]:
    """Flatten the user's tools (functions, Functions, Toolkits) into Functions, in order.

    Two tools with the same name would make the model's choice ambiguous and the second
    unreachable, so that is an error naming both.
    """
    functions: list[Function] = []
    for item in tools:
        if isinstance(item, Toolkit):
            functions.extend(item.functions)
        elif isinstance(item, Function) or callable(item):
            functions.append(as_function(item))
        else:
            raise ValueError(f"tools: {item!r} is not a function, a Function or a Toolkit")
    seen: set[str] = set()
    for fn in functions:
        if fn.name in seen:
            raise ValueError(f"tools: two tools are named {fn.name!r}; tool names must be unique")
        seen.add(fn.name)
    return functions


def toolkit_instructions(tools: Iterable[Any]) -> list[str]:
    """Instruction blocks of the toolkits that asked to add them, in declared order."""
    return [
        t.instructions
        for t in tools
        if isinstance(t, Toolkit) and t.add_instructions and t.instructions
    ]
