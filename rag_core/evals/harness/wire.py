"""What a provider request body says, read from the wire format itself (no agent needed).

Each API puts the prompt prefix (what stays the same from one round to the next, and what
providers cache) somewhere else: Responses in ``instructions`` and the leading system/developer
items of ``input``; Chat Completions in the leading system/developer messages; Gemini in
``systemInstruction``. Tools sit in ``tools`` in all three.
"""

from __future__ import annotations

from typing import Any

_SYSTEM_ROLES = ("system", "developer")


def _leading_system(items: list[Any]) -> list[Any]:
    leading = []
    for item in items:
        if not (isinstance(item, dict) and item.get("role") in _SYSTEM_ROLES):
            break
        leading.append(item)
    return leading


def prompt_prefix(body: dict[str, Any]) -> dict[str, Any]:
    """The system prompt and tool definitions of one request body, as sent."""
    if "input" in body:  # Responses
        system: Any = {"instructions": body.get("instructions"),
                       "input": _leading_system(body["input"] if isinstance(body["input"], list) else [])}
    elif "messages" in body:  # Chat Completions
        system = _leading_system(body["messages"])
    elif "contents" in body:  # Gemini
        system = body.get("systemInstruction", body.get("system_instruction"))
    else:
        system = None
    return {"system": system, "tools": body.get("tools")}
