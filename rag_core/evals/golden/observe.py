"""What a case run produced, as the plain data goldens compare, with volatile values normalised."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from rag_core.evals.golden.normalize_rules import IgnoreRule, NormalizeRule
from rag_core import Agent, RunOutput

# a path step: a dict key, or in brackets a list index, * (every item), N: (the items from index
# N on) or key=value (the items whose key holds that value, e.g. tools[name=think])
_STEP = re.compile(r"([^.\[\]]+)|\[(\*|\d+:?|[^\]=]+=[^\]]*)\]")


def observe(agent: Agent, outputs: list[RunOutput], requests: list[dict[str, Any]], error: BaseException | None) -> dict[str, Any]:
    usage: dict[str, int] = {}
    for out in outputs:
        for key, value in out.metrics.usage.to_dict().items():
            usage[key] = usage.get(key, 0) + value
    last = outputs[-1] if outputs else None
    observed: dict[str, Any] = {
        "system_prompt": _system_prompt(agent, outputs),
        "user_messages": [m.content for out in outputs for m in out.own_messages[:1]],
        "tools": [f.to_dict() for f in agent.get_tools()],
        "requests": requests,
        "tool_calls": {"calls": [{"name": c.name, "arguments": c.arguments} for out in outputs for c in out.tool_calls]},
        "references": [r for out in outputs for r in out.references],
        "output": _output(last),
        "usage": usage,
    }
    if error is not None:
        observed["error"] = _error(error)
    return observed


def _output(last: RunOutput | None) -> dict[str, Any] | None:
    """The last run's answer: its text, or an output_schema instance's fields."""
    if last is None or last.status != "completed" or last.content is None:
        return None
    if isinstance(last.content, BaseModel):
        return {"structured": last.content.model_dump(mode="json")}
    return {"equals": last.content}


def _system_prompt(agent: Agent, outputs: list[RunOutput]) -> str | None:
    """The system message the first run sent (an agent whose prompt reads a moving clock would
    build another one now); the agent's current one when no run got that far."""
    for out in outputs[:1]:
        for message in out.messages[: out.first_own_message]:
            if message.role == "system":
                return message.content
    return agent.get_system_message()


def _error(error: BaseException) -> dict[str, Any]:
    return {
        "type": type(error).__name__,
        "status_code": getattr(error, "status_code", None),
        "message": str(getattr(error, "provider_message", None) or error),
    }


def observe_target(seen: dict[str, Any], answers: list[str | None], error: BaseException | None) -> dict[str, Any]:
    """A target case's golden fields: all from its traffic (``wire.observe``) except the answer,
    which the target returned (or, when it returned none, the last model response's text).
    References and tool execution records happen inside the target: absent, not guessed."""
    final = answers[-1] if answers and answers[-1] is not None else seen["final_text"]
    observed = {name: seen[name] for name in ("system_prompt", "user_messages", "tools", "apis", "requests",
                                              "tool_calls")}
    observed["output"] = {"equals": final} if error is None and final is not None else None
    observed["usage"] = seen["usage"]
    if error is not None:
        observed["error"] = _error(error)
    return observed


# what the wire and a rag_core agent's own account must agree on
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
