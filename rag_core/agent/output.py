"""RunOutput: everything one run produced, for callers, reports and goldens."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from rag_core.messages import Message, Usage
from rag_core.tools.executor import ToolExecution


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
