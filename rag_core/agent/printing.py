"""print_response: a readable transcript of a run on a terminal (plain text, no extra deps)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from rag_core.agent.events import RunCompleted, RunContent, ToolCallCompleted
from rag_core.agent.output import RunOutput

if TYPE_CHECKING:
    from rag_core.agent.agent import Agent


def _rule(title: str, out: Any) -> None:
    print(f"\n┌─ {title} " + "─" * max(0, 60 - len(title)), file=out)


def _steps(output: RunOutput, out: Any) -> None:
    if not output.reasoning_steps:
        return
    _rule("Reasoning", out)
    for number, step in enumerate(output.reasoning_steps, start=1):
        print(f"Step {number}: {step['title']}", file=out)
        for key in ("thought", "action", "result", "analysis", "next_action", "confidence"):
            if step.get(key) is not None:
                print(f"  {key}: {step[key]}", file=out)


def print_run(agent: Agent, input: str, *, stream: bool, show_full_reasoning: bool, file: Any) -> RunOutput:
    out = file or sys.stdout
    _rule("Message", out)
    print(input, file=out)
    output: RunOutput | None = None
    if stream:
        printed_header = False
        for event in agent.run(input, stream=True):
            if isinstance(event, ToolCallCompleted):
                _rule(f"Tool: {event.tool.name}", out)
                print(f"arguments: {event.tool.raw_arguments}", file=out)
                if event.tool.error:
                    print(f"error: {event.tool.error}", file=out)
            elif isinstance(event, RunContent):
                if not printed_header:
                    _rule("Response", out)
                    printed_header = True
                print(event.content, end="", file=out, flush=True)
            elif isinstance(event, RunCompleted):
                output = event.output
        print(file=out)
    else:
        output = agent.run(input)
        for tool in output.tool_calls:
            _rule(f"Tool: {tool.name}", out)
            print(f"arguments: {tool.raw_arguments}", file=out)
            if tool.error:
                print(f"error: {tool.error}", file=out)
        _rule("Response", out)
        print(output.content or "", file=out)
    assert output is not None
    if show_full_reasoning:
        _steps(output, out)
    return output
