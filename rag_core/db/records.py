"""Plain records the session stores keep, and their JSON form."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rag_core.messages import Message, ToolCall


def message_to_json(message: Message) -> dict[str, Any]:
    return {
        "role": message.role,
        "content": message.content,
        "tool_calls": [
            {"id": c.id, "name": c.name, "arguments": c.arguments, "provider_data": c.provider_data}
            for c in message.tool_calls
        ],
        "tool_call_id": message.tool_call_id,
        "tool_name": message.tool_name,
        "provider_data": message.provider_data,
    }


def message_from_json(data: dict[str, Any]) -> Message:
    return Message(
        role=data["role"],
        content=data.get("content"),
        tool_calls=[ToolCall(c["id"], c["name"], c["arguments"], c.get("provider_data") or {}) for c in data.get("tool_calls") or []],
        tool_call_id=data.get("tool_call_id"),
        tool_name=data.get("tool_name"),
        provider_data=data.get("provider_data") or {},
    )


@dataclass
class ContentRecord:
    """What a Knowledge ingested: one source (a file, a URL, a named text)."""

    id: str
    knowledge: str | None
    name: str | None
    source: str | None
    content_hash: str
    status: str  # processing | completed | failed
    chunks: int = 0
    error: str | None = None
