"""What a run produced: RunOutput, its RunMetrics, and one ToolExecution per tool call.

Plain records at the bottom of the library, so the tool executor, the agent loop, errors and
the evaluation harness can all speak of a run's results without importing the agent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rag_core.messages import Message, Usage

__all__ = ["RunMetrics", "RunOutput", "ToolExecution"]


@dataclass
class ToolExecution:
    """One tool call as it ran: what the model asked, what the tool returned or why it failed."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str
    result: str | None = None
    error: str | None = None
    duration: float = 0.0

    @property
    def output(self) -> str:
        """What the model receives as the tool's result."""
        return f"Error: {self.error}" if self.error is not None else (self.result or "")

    def to_message(self) -> Message:
        return Message(role="tool", content=self.output, tool_call_id=self.id, tool_name=self.name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "arguments": self.arguments,
            "result": self.result,
            "error": self.error,
        }


@dataclass
class RunMetrics:
    usage: Usage = field(default_factory=Usage)
    rounds: int = 0
    duration: float = 0.0
    time_to_first_token: float | None = None

    @property
    def input_tokens(self) -> int:
        return self.usage.input_tokens

    @property
    def output_tokens(self) -> int:
        return self.usage.output_tokens

    @property
    def total_tokens(self) -> int:
        return self.usage.total_tokens

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.usage.to_dict(),
            "rounds": self.rounds,
            "duration": self.duration,
            "time_to_first_token": self.time_to_first_token,
        }


@dataclass
class RunOutput:
    run_id: str
    session_id: str | None
    model: str | None = None
    content: Any = None  # the answer's text; an instance of the agent's output_schema when it has one
    reasoning_content: str | None = None
    status: str = "running"  # running | completed | error
    messages: list[Message] = field(default_factory=list)
    references: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: list[ToolExecution] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    metrics: RunMetrics = field(default_factory=RunMetrics)
    reasoning_steps: list[dict[str, Any]] = field(default_factory=list)
    # messages[:first_own_message] are the system message and replayed history
    first_own_message: int = 0

    @property
    def own_messages(self) -> list[Message]:
        """This run's messages: its user message, and the assistant and tool messages after it."""
        return self.messages[self.first_own_message :]

    def to_dict(self) -> dict[str, Any]:
        # pydantic is imported here, not with the module: only an agent with an output_schema
        # (which has loaded pydantic already) puts a model instance in ``content``
        from pydantic import BaseModel

        return {
            "run_id": self.run_id,
            "session_id": self.session_id,
            "model": self.model,
            "status": self.status,
            "content": self.content.model_dump(mode="json") if isinstance(self.content, BaseModel) else self.content,
            "messages": [m.to_dict() for m in self.messages],
            "references": self.references,
            "tool_calls": [t.to_dict() for t in self.tool_calls],
            "requests": self.requests,
            "metrics": self.metrics.to_dict(),
            "reasoning_steps": self.reasoning_steps,
        }
