"""What a case run produced, as the plain data goldens compare, with volatile values normalised."""

from __future__ import annotations

import copy
import re
from typing import Any

from rag_core.evals.harness.case import NormalizeRule
from rag_core import Agent, RunOutput

_STEP = re.compile(r"([^.\[\]]+)|\[(\*|\d+)\]")


def observe(agent: Agent, outputs: list[RunOutput], requests: list[dict[str, Any]], error: BaseException | None) -> dict[str, Any]:
    usage: dict[str, int] = {}
    for out in outputs:
        for key, value in out.metrics.usage.to_dict().items():
            usage[key] = usage.get(key, 0) + value
    last = outputs[-1] if outputs else None
    observed: dict[str, Any] = {
        "system_prompt": agent.get_system_message(),
        "user_messages": [m.content for out in outputs for m in out.own_messages[:1]],
        "tools": [f.to_dict() for f in agent.get_tools()],
        "requests": requests,
        "tool_calls": {"calls": [{"name": c.name, "arguments": c.arguments} for out in outputs for c in out.tool_calls]},
        "references": [r for out in outputs for r in out.references],
        "output": {"equals": last.content} if last and last.status == "completed" and last.content is not None else None,
        "usage": usage,
    }
    if error is not None:
        observed["error"] = {
            "type": type(error).__name__,
            "status_code": getattr(error, "status_code", None),
            "message": str(getattr(error, "provider_message", None) or error),
        }
    return observed


def normalize(data: dict[str, Any], rules: list[NormalizeRule]) -> dict[str, Any]:
    """Apply each rule: every value its path reaches becomes the rule's placeholder."""
    data = copy.deepcopy(data)
    for rule in rules:
        _replace(data, [m.group(1) or m.group(2) for m in _STEP.finditer(rule.path)], rule.placeholder)
    return data


def _replace(node: Any, steps: list[str], placeholder: str) -> None:
    if not steps:
        return
    step, rest = steps[0], steps[1:]
    if step == "*" and isinstance(node, list):
        targets = list(range(len(node)))
    elif step.isdigit() and isinstance(node, list):
        targets = [int(step)] if int(step) < len(node) else []
    elif isinstance(node, dict) and step in node:
        targets = [step]
    else:
        return
    for key in targets:
        if rest:
            _replace(node[key], rest, placeholder)
        else:
            node[key] = placeholder
