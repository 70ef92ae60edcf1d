"""The agent loop, written once, without I/O.

``agent_loop`` is a generator that *describes* a run: it yields effects (call the model
with this request, run these tool calls, emit this event) and receives their results.
Two small drivers (``drive`` and ``adrive`` in driver.py, sync and asyncio, each streaming or
not) perform the effects. So the order of requests, the tool-call bookkeeping and the limits
live in one place, and a test can drive the loop with canned responses and no transport at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generator

from pydantic import BaseModel

from rag_core.agent.events import (
    ModelRequestCompleted,
    RunCompleted,
    RunEvent,
    RunStarted,
    ToolCallCompleted,
    ToolCallStarted,
)
from rag_core.errors import AgentRunError
from rag_core.messages import Message, ModelResponse, ToolCall
from rag_core.models.base import Model
from rag_core.models.structured import parse_structured
from rag_core.run_output import RunOutput, ToolExecution
from rag_core.tools.context import RunContext
from rag_core.tools.function import Function


@dataclass
class CallModel:
    request: dict[str, Any]


@dataclass
class RunTools:
    calls: list[ToolCall]


@dataclass
class Emit:
    event: RunEvent


Effect = CallModel | RunTools | Emit


@dataclass
class PreparedRun:
    """Everything a run needs, assembled by the Agent before the loop starts."""

    model: Model
    messages: list[Message]
    functions: list[Function]
    context: RunContext
    output: RunOutput
    stream: bool
    tool_call_limit: int | None
    max_rounds: int
    output_schema: type[BaseModel] | None = None

    @property
    def functions_by_name(self) -> dict[str, Function]:
        return {f.name: f for f in self.functions}


def limit_message(limit: int) -> str:
    return (
        f"tool call limit reached: this run allows {limit} tool call(s). "
        "No more tools will run; answer with the information you already have."
    )


def agent_loop(run: PreparedRun) -> Generator[Effect, Any, None]:
    output, messages = run.output, run.messages
    output.messages = messages
    yield Emit(RunStarted(run_id=output.run_id, model=run.model.id))
    for round_number in range(1, run.max_rounds + 1):
        request = run.model.build_request(messages, run.functions, stream=run.stream, output_schema=run.output_schema)
        output.requests.append(request)
        response: ModelResponse = yield CallModel(request)
        output.metrics.rounds = round_number
        output.metrics.usage = output.metrics.usage + response.usage
        output.model = response.model or output.model
        if response.reasoning:
            output.reasoning_content = (output.reasoning_content or "") + response.reasoning
        messages.append(response.to_message())
        yield Emit(ModelRequestCompleted(run_id=output.run_id, round=round_number))
        if not response.tool_calls:
            output.content = response.content  # the raw text stays here when it does not parse
            if run.output_schema is not None:
                output.content = parse_structured(run.output_schema, response.content)
            output.status = "completed"
            yield Emit(RunCompleted(run_id=output.run_id, output=output))
            return
        allowed, refused = _apply_limit(response.tool_calls, len(output.tool_calls), run.tool_call_limit)
        for call in response.tool_calls:
            yield Emit(ToolCallStarted(run_id=output.run_id, tool_call=call))
        executed: list[ToolExecution] = (yield RunTools(allowed)) if allowed else []
        by_id = {e.id: e for e in executed}
        for call in response.tool_calls:
            execution = by_id.get(call.id) or refused[call.id]
            output.tool_calls.append(execution)
            messages.append(execution.to_message())
            yield Emit(ToolCallCompleted(run_id=output.run_id, tool=execution))
    output.status = "error"
    raise AgentRunError(
        f"the run did not finish within max_rounds={run.max_rounds} model calls; the model "
        "kept calling tools. Raise max_rounds, or set tool_call_limit to stop tool use earlier.",
        output,
    )


def _apply_limit(
    calls: list[ToolCall], used: int, limit: int | None
) -> tuple[list[ToolCall], dict[str, ToolExecution]]:
    """Split calls into those within the run's tool-call budget and refusals for the rest."""
    if limit is None:
        return list(calls), {}
    budget = max(limit - used, 0)
    refused = {
        c.id: ToolExecution(
            id=c.id, name=c.name, arguments=None, raw_arguments=c.arguments, error=limit_message(limit)
        )
        for c in calls[budget:]
    }
    return list(calls[:budget]), refused
