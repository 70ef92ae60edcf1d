"""A case run's golden fields, as the plain data goldens compare: a rag_core agent's from its own
account of the run (``agent_fields``), a target's from its traffic (``target_fields``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from rag_core import Agent, RunOutput

def agent_fields(agent: Agent, outputs: list[RunOutput], requests: list[dict[str, Any]], error: BaseException | None) -> dict[str, Any]:
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


def target_fields(seen: dict[str, Any], answers: list[str | None], error: BaseException | None) -> dict[str, Any]:
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
