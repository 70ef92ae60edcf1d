"""A Chat Completions tool loop over plain HTTP with ``requests`` (no provider SDK), streamed:
the answer and the tool calls arrive as server-sent events and are put together here.

The endpoint and key come from the case's context (``base_url``, ``api_key``), as a program
reads them from its own configuration.
"""

from __future__ import annotations

import json
from typing import Any

import requests

from evals.foreign_agents.recipes import DESCRIPTION, INSTRUCTIONS, PARAMETERS, dated, lookup_recipe

MODEL = "gpt-5.2"
MAX_ROUNDS = 5
TOOLS = [{"type": "function", "function": {"name": "lookup_recipe", "description": DESCRIPTION, "parameters": PARAMETERS}}]


def _events(response: requests.Response) -> Any:
    """The JSON payloads of a server-sent event stream, up to ``[DONE]``."""
    for line in response.iter_lines(decode_unicode=True):
        if line and line.startswith("data: "):
            if line == "data: [DONE]":
                return
            yield json.loads(line[len("data: "):])


def _streamed_reply(session: requests.Session, context: Any, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """One streamed completion, assembled into the assistant message it delivers."""
    with session.post(f"{context.base_url('openai')}/chat/completions", stream=True, timeout=60,
                      headers={"Authorization": f"Bearer {context.api_key('openai')}"},
                      json={"model": MODEL, "messages": messages, "tools": TOOLS, "stream": True}) as response:
        response.raise_for_status()
        text, calls = [], {}
        for event in _events(response):
            for choice in event.get("choices", []):
                delta = choice.get("delta") or {}
                text.append(delta.get("content") or "")
                for part in delta.get("tool_calls") or []:
                    call = calls.setdefault(part["index"], {"id": None, "type": "function",
                                                            "function": {"name": "", "arguments": ""}})
                    call["id"] = part.get("id") or call["id"]
                    call["function"]["name"] += (part.get("function") or {}).get("name") or ""
                    call["function"]["arguments"] += (part.get("function") or {}).get("arguments") or ""
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return message


def chat_agent(question: str, context: Any) -> str:
    if "session" not in context.state:  # one connection pool for the case's turns
        context.state["session"] = requests.Session()
    session = context.state["session"]
    messages: list[dict[str, Any]] = context.state.setdefault(
        "messages", [{"role": "system", "content": dated(INSTRUCTIONS, context.clock)}])
    messages.append({"role": "user", "content": question})
    for _ in range(MAX_ROUNDS):
        reply = _streamed_reply(session, context, messages)
        messages.append(reply)
        if not reply.get("tool_calls"):
            return reply["content"]
        for call in reply["tool_calls"]:
            messages.append({"role": "tool", "tool_call_id": call["id"],
                             "content": lookup_recipe(**json.loads(call["function"]["arguments"]))})
    raise RuntimeError(f"no answer after {MAX_ROUNDS} rounds")
