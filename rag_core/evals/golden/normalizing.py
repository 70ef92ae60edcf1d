"""A case's ``normalize:`` and ``ignore:`` rules applied to what a run observed: a value a rule's
path reaches becomes its placeholder (or, ignored, goes), a pattern's matches within a string too."""

from __future__ import annotations

import re
from typing import Any

from rag_core.evals.golden.normalize_rules import IgnoreRule, NormalizeRule

# a path step: a dict key, or in brackets a list index, * (every item), N: (the items from index
# N on) or key=value (the items whose key holds that value, e.g. tools[name=think])
_STEP = re.compile(r"([^.\[\]]+)|\[(\*|\d+:?|[^\]=]+=[^\]]*)\]")


def normalize(data: dict[str, Any], rules: list[NormalizeRule]) -> dict[str, Any]:
    """Apply each rule: every value its path reaches becomes the rule's placeholder. ``data`` is
    left as it is: what a rule changes is copied, the rest shared (no caller changes what it
    gets); a deep copy of every request a case sent was most of the cost."""
    for rule in rules:
        data = _replaced(data, _steps(rule.path),
                         rule.placeholder if rule.pattern is None else _sub(rule.pattern, rule.placeholder))
    return data


def without(data: dict[str, Any], ignored: list[str | IgnoreRule]) -> dict[str, Any]:
    """``data`` without what each entry names: a path's values are removed (a dict key, a list
    item); an :class:`IgnoreRule`'s pattern is cut out of the strings at its path. ``data`` is left
    as it is (see ``normalize``)."""
    for entry in ignored:
        if isinstance(entry, str):
            data = _replaced(data, _steps(entry), _REMOVE)
        else:
            data = _replaced(data, _steps(entry.path), _sub(entry.pattern, ""))
    return data


def _sub(pattern: str, replacement: str) -> Any:
    """A function replacing every match of ``pattern`` in a string (other values stay)."""
    compiled = re.compile(pattern)
    return lambda value: compiled.sub(lambda _: replacement, value) if isinstance(value, str) else value


_REMOVE: Any = object()


def _steps(path: str) -> list[str]:
    return [m.group(1) or m.group(2) for m in _STEP.finditer(path)]


def _targets(node: Any, step: str) -> list[Any]:
    """The keys or indexes of ``node`` one path step selects."""
    if isinstance(node, list):
        if step == "*":
            return list(range(len(node)))
        if step.isdigit():
            return [int(step)] if int(step) < len(node) else []
        if step.endswith(":") and step[:-1].isdigit():
            return list(range(int(step[:-1]), len(node)))
        if "=" in step:
            key, _, value = step.partition("=")
            return [i for i, item in enumerate(node) if isinstance(item, dict) and str(item.get(key)) == value]
    return [step] if isinstance(node, dict) and step in node else []


def _replaced(node: Any, steps: list[str], placeholder: Any) -> Any:
    """``node`` with every value ``steps`` reach given the placeholder (a value, _REMOVE, or a
    function of the old value); the lists and dicts on the way to a change are copied, nothing
    else, and ``node`` itself is not changed."""
    if not steps:
        return node
    targets = _targets(node, steps[0])
    if not targets:
        return node
    rest = steps[1:]
    node = list(node) if isinstance(node, list) else dict(node)
    for key in sorted(targets, reverse=True):  # list items from the end: removal shifts the rest
        if rest:
            node[key] = _replaced(node[key], rest, placeholder)
        elif placeholder is _REMOVE:
            del node[key]
        elif callable(placeholder):
            node[key] = placeholder(node[key])
        else:
            node[key] = placeholder
    return node
