"""JSON Schema for a tool, derived from a Python function's signature and docstring.

Pure and deterministic: the same function always yields the same schema, byte for byte,
so goldens can pin it. Simple annotations map by hand (so the output is minimal and
stable across pydantic versions); anything richer (pydantic models, TypedDicts) is
delegated to pydantic with its cosmetic ``title`` keys removed.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from typing import Any, Callable, Literal, Union, get_args, get_origin

_PRIMITIVES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def annotation_schema(annotation: Any) -> dict[str, Any]:
    """JSON Schema for one parameter annotation."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return {}
    if annotation in _PRIMITIVES:
        return {"type": _PRIMITIVES[annotation]}
    if annotation is type(None):
        return {"type": "null"}
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin in (Union, types.UnionType):
        members = [annotation_schema(a) for a in args]
        simple = [m.get("type") for m in members if set(m) == {"type"} and isinstance(m["type"], str)]
        if len(simple) == len(members):
            return {"type": simple}
        return {"anyOf": members}
    if origin is Literal:
        values = list(args)
        kinds = {type(v) for v in values}
        schema: dict[str, Any] = {"enum": values}
        if len(kinds) == 1 and next(iter(kinds)) in _PRIMITIVES:
            schema = {"type": _PRIMITIVES[next(iter(kinds))], "enum": values}
        return schema
    if annotation in (list, tuple, set, frozenset) or origin in (list, tuple, set, frozenset):
        schema = {"type": "array"}
        if args and (origin is not tuple or (len(args) == 2 and args[1] is Ellipsis)):
            schema["items"] = annotation_schema(args[0])
        return schema
    if annotation is dict or origin is dict:
        schema = {"type": "object"}
        if len(args) == 2 and args[1] is not Any:
            schema["additionalProperties"] = annotation_schema(args[1])
        return schema
    return _pydantic_schema(annotation)


def _pydantic_schema(annotation: Any) -> dict[str, Any]:
    from pydantic import TypeAdapter

    return _strip_titles(TypeAdapter(annotation).json_schema())


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_titles(v) for k, v in node.items() if k != "title"}
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Returns|Return|Raises|Yields|Examples?|Notes?):\s*$")
_ARG_LINE = re.compile(r"^\s*\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_SPHINX_PARAM = re.compile(r"^\s*:param\s+(?:[^:]*\s)?(\w+):\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google- or Sphinx-style docstring into (summary, {param: description})."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    arg_indent: int | None = None
    for line in lines:
        header = _SECTION.match(line)
        if header:
            section = header.group(1).lower()
            current, arg_indent = None, None
            continue
        sphinx = _SPHINX_PARAM.match(line)
        if sphinx:
            section, current = "sphinx", sphinx.group(1)
            params[current] = sphinx.group(2).strip()
            continue
        if line.strip().startswith(":"):
            section, current = "sphinx-other", None
            continue
        if section is None:
            summary.append(line)
        elif section in ("args", "arguments", "parameters"):
            indent = len(line) - len(line.lstrip())
            match = _ARG_LINE.match(line)
            if match and (arg_indent is None or indent <= arg_indent):
                arg_indent = indent
                current = match.group(1)
                params[current] = match.group(2).strip()
            elif current and line.strip():
                params[current] = (params[current] + " " + line.strip()).strip()
        elif section == "sphinx" and current and line.strip():
            params[current] = (params[current] + " " + line.strip()).strip()
    return "\n".join(summary).strip(), params


def function_parameters_schema(
    fn: Callable[..., Any], skip: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """The ``parameters`` object of a tool definition for ``fn``.

    Parameters without a default are required. ``skip`` names injected parameters (the run
    context) that the model never sees. ``additionalProperties`` is always false: a model
    must not invent arguments.
    """
    signature = inspect.signature(fn)
    hints = typing.get_type_hints(fn, include_extras=False)
    _, docs = parse_docstring(fn.__doc__)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, param in signature.parameters.items():
        if name in skip or name in ("self", "cls"):
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        prop = annotation_schema(hints.get(name, param.annotation))
        if name in docs and docs[name]:
            prop = {**prop, "description": docs[name]}
        properties[name] = prop
        if param.default is inspect.Parameter.empty:
            required.append(name)
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
