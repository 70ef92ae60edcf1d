"""print_response: a readable transcript of a run on a terminal (plain text, no extra deps)."""

from __future__ import annotations

import sys
from typing import Any, Protocol

from rag_core.agent.events import ReasoningContent, RunCompleted, RunContent, ToolCallCompleted
from rag_core.run_output import RunOutput


class Runs(Protocol):
    """What printing needs of an agent (``Agent`` is one): a run, streamed or not. A protocol, so
    that the agent's module, which prints through this one, is not imported back."""

    def run(self, input: str, stream: bool = False) -> Any: ...


def _rule(title: str, out: Any) -> None:
    print(f"\n┌─ {title} " + "─" * max(0, 60 - len(title)), file=out)


REASONING_TOOLS = ("think", "analyze")
_STEP_FIELDS = ("thought", "action", "result", "analysis", "next_action", "confidence")


def _step(number: int, step: dict[str, Any], out: Any) -> None:
    print(f"Step {number}: {step.get('title', '')}", file=out)
    for key in _STEP_FIELDS:
        if step.get(key) is not None:
            print(f"  {key}: {step[key]}", file=out)


def _steps(output: RunOutput, out: Any) -> None:
    if not output.reasoning_steps:
        return
    _rule("Reasoning", out)
    for number, step in enumerate(output.reasoning_steps, start=1):
        _step(number, step, out)


def print_run(agent: Runs, input: str, *, stream: bool, show_full_reasoning: bool, file: Any) -> RunOutput:
    out = file or sys.stdout
    _rule("Message", out)
    print(input, file=out)
    output: RunOutput | None = None
    if stream:
        # with show_full_reasoning, reasoning is shown as it happens: each think/analyze step when
        # its tool call completes, the model's own reasoning summary as it streams
        section = None
        steps = 0
        for event in agent.run(input, stream=True):
            if isinstance(event, ToolCallCompleted):
                if show_full_reasoning and event.tool.name in REASONING_TOOLS and not event.tool.error:
                    steps += 1
                    _rule(f"Reasoning step {steps}", out)
                    _step(steps, event.tool.arguments or {}, out)
                else:
                    _rule(f"Tool: {event.tool.name}", out)
                    print(f"arguments: {event.tool.raw_arguments}", file=out)
                    if event.tool.error:
                        print(f"error: {event.tool.error}", file=out)
                section = None
            elif isinstance(event, ReasoningContent) and show_full_reasoning:
                if section != "thinking":
                    _rule("Thinking", out)
                    section = "thinking"
                print(event.content, end="", file=out, flush=True)
            elif isinstance(event, RunContent):
                if section != "response":
                    _rule("Response", out)
                    section = "response"
                print(event.content, end="", file=out, flush=True)
            elif isinstance(event, RunCompleted):
                output = event.output
        print(file=out)
        assert output is not None
        return output
    else:
        output = agent.run(input)
        for tool in output.tool_calls:
            _rule(f"Tool: {tool.name}", out)
            print(f"arguments: {tool.raw_arguments}", file=out)
            if tool.error:
                print(f"error: {tool.error}", file=out)
        _rule("Response", out)
        content = output.content
        print(content.model_dump_json(indent=2) if hasattr(content, "model_dump_json") else content or "", file=out)
    assert output is not None
    if show_full_reasoning:
        if output.reasoning_content:
            _rule("Thinking", out)
            print(output.reasoning_content, file=out)
        _steps(output, out)
    return output
