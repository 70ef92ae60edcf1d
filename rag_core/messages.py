"""Provider-neutral conversation messages.

The agent loop speaks only these types; each model adapter translates them to and from its
provider's wire format. ``provider_data`` carries opaque per-provider fields that must be
echoed back on the next request (for example a Gemini thought signature).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Message", "ModelResponse", "Role", "ToolCall", "Usage"]

Role = Literal["system", "user", "assistant", "tool"]


@dataclass
class ToolCall:
    """A function call requested by the model. ``arguments`` is the raw JSON text it sent."""

    id: str
    name: str
    arguments: str
    provider_data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Message:
    role: Role
    content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None  # for role="tool": which call this answers
    tool_name: str | None = None  # for role="tool": the function that produced it
    provider_data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A plain, JSON-ready view used by RunOutput, reports and goldens."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
            out["tool_name"] = self.tool_name
        return out


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.total_tokens + other.total_tokens,
            self.cached_tokens + other.cached_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "cached_tokens": self.cached_tokens,
            "reasoning_tokens": self.reasoning_tokens,
        }


@dataclass
class ModelResponse:
    """One provider round, parsed: the assistant message plus what the provider reported."""

    content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    response_id: str | None = None
    model: str | None = None
    reasoning: str | None = None
    provider_data: dict[str, Any] = field(default_factory=dict)

    def to_message(self) -> Message:
        return Message(
            role="assistant",
            content=self.content,
            tool_calls=list(self.tool_calls),
            provider_data=dict(self.provider_data),
        )
