"""pydantic's validation errors of a hand-written file (a case, a golden, an emulator script) as
the person who wrote the file reads them.

Each problem names the field as the file spells it (``expect.judge[0].metric``) and says what it
must be in the file's own terms (a mapping, a list, true or false), with the value it got; an
unknown key comes with the key it was probably meant to be. No class name of the schema and no
pydantic phrase reaches the message: a newcomer sees ``expect`` must be a mapping, not "a valid
dictionary or instance of Expect", and one message for a field a union allows several kinds of
value in, not one per kind it is not.
"""

from __future__ import annotations

import difflib
import json
import math
import types
import typing
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

# a value of the wrong kind: what the field takes instead, in YAML's terms
_KINDS = {
    "model_type": "a mapping", "model_attributes_type": "a mapping", "dict_type": "a mapping",
    "list_type": "a list", "tuple_type": "a list", "set_type": "a list",
    "string_type": "a string",
    "int_type": "a whole number", "int_parsing": "a whole number", "int_from_float": "a whole number",
    "float_type": "a number", "float_parsing": "a number",
    "bool_type": "true or false", "bool_parsing": "true or false",
    "datetime_type": "a date and time (2026-01-15 09:30:00)",
    "datetime_parsing": "a date and time (2026-01-15 09:30:00)",
    "datetime_from_date_parsing": "a date and time (2026-01-15 09:30:00)",
    "path_type": "a path",
    "none_required": "null",
}
# a value of the right kind that is out of bounds: the bound's name in pydantic's context
_BOUNDS = {"greater_than": ("gt", "more than"), "greater_than_equal": ("ge", "at least"),
           "less_than": ("lt", "less than"), "less_than_equal": ("le", "at most")}


@dataclass(frozen=True)
class Problem:
    """One thing wrong in the file: where (the keys and list indexes that lead to it) and what."""

    path: tuple[Any, ...]
    text: str


def field_name(path: tuple[Any, ...]) -> str:
    """A path as the file is written and as normalize paths write it: ``expect.judge[0].metric``."""
    shown = ""
    for part in path:
        shown += f"[{part}]" if isinstance(part, int) else f".{part}"
    return shown.lstrip(".")


def _value(value: Any) -> str:
    """A value as YAML spells it (``null``, ``true``, ``'text'``), cut short."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value if len(value) <= 50 else value[:47] + "...")
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else ".inf" if value > 0 else "-.inf"
    try:
        text = json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= 50 else text[:47] + "..."


@dataclass(frozen=True)
class _Located:
    error: dict[str, Any]
    path: tuple[Any, ...]  # the keys and indexes of the file
    branches: tuple[int, ...]  # where in ``loc`` a union's member was named (not a key of the file)
    key_error: bool  # the problem is a mapping's key, not its value
    depth: int  # how many keys of ``path`` lead to the validated data (they are not in the schema)

    @property
    def loc(self) -> tuple[Any, ...]:
        return tuple(self.error["loc"])

    def union_prefix(self) -> tuple[Any, ...] | None:
        """The location of the union this error's last member belongs to, if the error is about
        that member's kind of value (the input is not that member's kind at all)."""
        if self.branches and self.branches[-1] == len(self.loc) - 1 and self.error["type"] in _KINDS:
            return self.loc[:-1]
        return None


def _locate(error: dict[str, Any], data: Any, within: tuple[Any, ...]) -> _Located:
    """Split an error location into the file's keys and indexes and pydantic's own markers: a
    union member's tag (``bool``, ``list[bool]``, a class name), a validator's name, ``[key]``.
    ``data`` tells them apart: a key of the file is in its mapping, a tag is not. ``within``: the
    keys leading to ``data`` in its file."""
    loc = tuple(error["loc"])
    path: list[Any] = list(within)
    branches: list[int] = []
    key_error = False
    node = data
    for index, part in enumerate(loc):
        last = index == len(loc) - 1
        if part == "[key]":
            key_error = True
        elif isinstance(node, dict) and part in node:
            path.append(part)
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            path.append(part)
            node = node[part]
        elif last and error["type"] == "missing" and isinstance(part, str):
            path.append(part)
            node = None
        elif isinstance(part, str):
            branches.append(index)
        else:
            path.append(part)
            node = None
    return _Located(error, tuple(path), tuple(branches), key_error, len(within))


def _members(annotation: Any) -> list[Any]:
    """The types a field annotation allows, with ``Annotated``, unions and ``None`` unwrapped."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [m for arg in typing.get_args(annotation) for m in _members(arg)]
    return [] if annotation is type(None) else [annotation]


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _models_at(root: Any, path: tuple[Any, ...], named: set[str]) -> list[type[BaseModel]]:
    """The schema's models a mapping at ``path`` is read as (``named``: union members the error
    named, which pick one of several)."""
    found = [root]
    for part in path:
        step = []
        for member in (m for annotation in found for m in _members(annotation)):
            origin, args = typing.get_origin(member), typing.get_args(member)
            if _is_model(member) and isinstance(part, str) and part in member.model_fields:
                step.append(member.model_fields[part].annotation)
            elif origin is list and isinstance(part, int) and args:
                step.append(args[0])
            elif origin is dict and len(args) == 2:
                step.append(args[1])
        found = step
    models = [m for annotation in found for m in _members(annotation) if _is_model(m)]
    return [m for m in models if m.__name__ in named] or models


def _fields(model: type[BaseModel]) -> list[str]:
    return [name for name, info in model.model_fields.items() if not info.exclude]


def _nested_owner(models: list[type[BaseModel]], key: str) -> str | None:
    """A field of ``models`` whose own mapping (or its list items') has the key ``key``: where a
    key that is unknown at this level probably belongs (it was not indented under it)."""
    for model in models:
        for name in _fields(model):
            annotation = model.model_fields[name].annotation
            inner = [a for m in _members(annotation) for a in ([m] + [x for arg in typing.get_args(m) for x in _members(arg)])]
            if any(_is_model(m) and key in _fields(m) for m in inner):
                return name
    return None


def _unknown_key(located: _Located, root: Any) -> str:
    key = located.path[-1] if located.path else located.loc[-1]
    parent = located.path[:-1]
    named = {str(located.loc[i]) for i in located.branches}
    models = _models_at(root, parent[located.depth:], named)
    known = list(dict.fromkeys(name for model in models for name in _fields(model)))
    where = f" in `{field_name(parent)}`" if parent else ""
    text = f"unknown key {key!r}{where}"
    close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.7)
    if close:
        return f"{text} (did you mean {close[0]!r}?)"
    owner = _nested_owner(models, str(key))
    if owner is not None:
        return f"{text} (it is a key of `{field_name(parent + (owner,))}`: indent it under {owner}:)"
    return f"{text} (it takes: {', '.join(known)})" if 0 < len(known) <= 12 else text


def _kind_text(field: str, expected: list[str], value: Any) -> str:
    subject = f"`{field}`" if field else "it"
    kinds = list(dict.fromkeys(expected))
    what = (", or " if any(" or " in kind for kind in kinds) else " or ").join(kinds)
    if value is None and field:
        nested = any(kind in ("a mapping", "a list") for kind in kinds) and not field.endswith("]")
        # nothing after the key: what was meant to be under it was not indented under it
        hint = f": indent what belongs to it under {field.rsplit('.', 1)[-1]}:" if nested else ""
        return f"{subject} must be {what}, but it is empty (null){hint}"
    return f"{subject} must be {what}, got {_value(value)}"


def _message(error: dict[str, Any]) -> str:
    """pydantic's own message of a validator the schema wrote (it says what to do), without pydantic's prefix."""
    message = str(error.get("msg", ""))
    for prefix in ("Value error, ", "Assertion failed, "):
        if message.startswith(prefix):
            return message[len(prefix):]
    return message


def _text(located: _Located, root: Any) -> str:
    error, kind = located.error, located.error["type"]
    field = field_name(located.path)
    context = error.get("ctx") or {}
    if kind == "extra_forbidden":
        return _unknown_key(located, root)
    if kind == "invalid_key":
        return f"the key {_value(located.path[-1])} in `{field_name(located.path[:-1])}` must be a string"
    if kind == "missing":
        parent = located.path[:-1]
        where = f" in `{field_name(parent)}`" if parent else ""
        return f"missing key {located.path[-1]!r}{where} (it is required)"
    subject = (f"the key {located.path[-1]!r} in `{field_name(located.path[:-1])}`" if located.key_error
               else f"`{field}`" if field else "it")
    if kind in _KINDS:
        if located.key_error:
            return f"{subject} must be {_KINDS[kind]}"
        return _kind_text(field, [_KINDS[kind]], error.get("input"))
    if kind == "literal_error":
        return f"{subject} must be one of {context.get('expected', '')}, got {_value(error.get('input'))}"
    if kind in _BOUNDS:
        name, words = _BOUNDS[kind]
        bound = context.get(name)
        return f"{subject} must be {words} {f'{bound:g}' if isinstance(bound, float) else bound}, got {_value(error.get('input'))}"
    if kind == "finite_number":
        return f"{subject} must be a finite number, got {_value(error.get('input'))}"
    if kind == "string_pattern_mismatch":
        return (f"{subject} must match the regular expression {context.get('pattern')!r}, "
                f"got {_value(error.get('input'))}")
    if kind in ("too_short", "too_long"):
        return f"{subject}: {_message(error).replace('Value should have', 'must have').replace('List should have', 'must have')}"
    # a validator of the schema: its message says what is wrong in the file's terms already
    message = _message(error).replace("Input should be", "it must be")
    return f"{field}: {message}" if field else message


def problems(exc: ValidationError, data: Any, root: Any, within: tuple[Any, ...] = ()) -> list[Problem]:
    """Every problem in ``exc`` (pydantic's errors validating ``data`` as ``root``, a model or a
    type; ``within``: the keys that lead to ``data`` in its file), in the file's terms. Of a field
    that takes several kinds of value, the kind the value is is the one reported; a value of none
    of them is one problem naming them all."""
    located = [_locate(error, data, within) for error in exc.errors()]
    # a union member the value is not the kind of says nothing when another member took the
    # value and found a problem inside it (or with it)
    by_union: dict[tuple[Any, ...], list[_Located]] = {}
    for each in located:
        prefix = each.union_prefix()
        if prefix is not None:
            by_union.setdefault(prefix, []).append(each)
    informative = {prefix for prefix in by_union if any(
        each.loc[:len(prefix)] == prefix and len(each.loc) > len(prefix) and each.union_prefix() != prefix
        for each in located)}
    found: list[Problem] = []
    merged: set[tuple[Any, ...]] = set()
    for each in located:
        prefix = each.union_prefix()
        if prefix is None:
            found.append(Problem(each.path, _text(each, root)))
        elif prefix not in informative and prefix not in merged:
            merged.add(prefix)
            kinds = by_union[prefix]
            found.append(Problem(each.path, _kind_text(field_name(each.path), [_KINDS[k.error["type"]] for k in kinds],
                                                       each.error.get("input"))))
    return list(dict.fromkeys(found))
