"""Events of a streaming run, in the order they happen."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rag_core.messages import ToolCall
from rag_core.run_output import RunOutput, ToolExecution


@dataclass
class RunEvent:
    event: ClassVar[str]
    run_id: str


@dataclass
class RunStarted(RunEvent):
    event: ClassVar[str] = "RunStarted"
    model: str


@dataclass
class RunContent(RunEvent):
    """A piece of the answer text, as the model streams it."""

    event: ClassVar[str] = "RunContent"
    content: str


@dataclass
class ReasoningContent(RunEvent):
    event: ClassVar[str] = "ReasoningContent"
    content: str


@dataclass
class ModelRequestCompleted(RunEvent):
    """One provider round finished (its request body is on the final output's ``requests``)."""

    event: ClassVar[str] = "ModelRequestCompleted"
    round: int


@dataclass
class ToolCallStarted(RunEvent):
    event: ClassVar[str] = "ToolCallStarted"
    tool_call: ToolCall


@dataclass
class ToolCallCompleted(RunEvent):
    event: ClassVar[str] = "ToolCallCompleted"
    tool: ToolExecution


@dataclass
class RunCompleted(RunEvent):
    event: ClassVar[str] = "RunCompleted"
    output: RunOutput
