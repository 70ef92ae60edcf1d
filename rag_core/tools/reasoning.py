"""ReasoningTools: ``think`` and ``analyze``, a scratchpad the model writes to between actions.

The steps are kept per run in ``session_state["reasoning_steps"][run_id]`` and every call
returns the run's steps so far, so the model sees its whole chain of reasoning.
"""

from __future__ import annotations

from typing import Any, Literal

from rag_core.tools.context import RunContext
from rag_core.tools.function import Function
from rag_core.tools.toolkit import Toolkit

REASONING_INSTRUCTIONS = """\
<reasoning_instructions>
You can reason step by step with two tools, `think` and `analyze`. Use them to plan, check and
refine your work before you act or answer.

1. **Think** (scratchpad):
    - Purpose: break the problem into parts, plan the next steps and decide what to do next.
      It is your private working space.
    - Usage: call `think` before you call other tools or write an answer. Say what you are
      about to do and why (for example: search the knowledge base, compare two sources, ask
      for clarification).

2. **Analyze** (evaluation):
    - Purpose: judge the outcome of a think step or of tool calls: is it correct, complete
      and enough to answer, or is more work needed?
    - Usage: call `analyze` after tool results arrive and set `next_action` to one of
      `continue` (keep reasoning), `validate` (check the result against another source) or
      `final_answer` (you are ready to answer).
    - State plainly whether the result is correct and sufficient, and why.

## IMPORTANT GUIDELINES
- **Think first:** always call `think` before any other tool call or your answer.
- **Iterate:** alternate `think`, tool calls and `analyze` until the answer is solid:
  `think` -> [tool calls] -> [`analyze`] -> ... -> `final_answer`.
- **Parallel calls:** after a `think` step you may make several tool calls at once.
- **Keep it internal:** your thoughts and analyses are not for the user; do not repeat them.
- **Finish clearly:** once `analyze` says `final_answer`, give the user a concise, accurate answer.
</reasoning_instructions>
"""


def _format_steps(steps: list[dict[str, Any]]) -> str:
    blocks = []
    for number, step in enumerate(steps, start=1):
        lines = [f"Step {number}:", f"Title: {step['title']}"]
        if step["kind"] == "think":
            lines.append(f"Reasoning: {step['thought']}")
            if step.get("action"):
                lines.append(f"Action: {step['action']}")
        else:
            lines.append(f"Result: {step['result']}")
            lines.append(f"Analysis: {step['analysis']}")
            lines.append(f"Next action: {step['next_action']}")
        lines.append(f"Confidence: {step['confidence']}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _record(context: RunContext, step: dict[str, Any]) -> str:
    per_run = context.session_state.setdefault("reasoning_steps", {})
    steps = per_run.setdefault(context.run_id, [])
    steps.append(step)
    return _format_steps(steps)


def think(
    title: str,
    thought: str,
    run_context: RunContext,
    action: str | None = None,
    confidence: float = 0.8,
) -> str:
    """Use this tool as a scratchpad to reason about the question and plan your next step.

    Args:
        title: A short title for this thinking step.
        thought: Your reasoning for this step: what you know, what is missing, what to do.
        action: The action you intend to take next, if any.
        confidence: How confident you are in this thought, from 0.0 to 1.0.
    """
    return _record(
        run_context,
        {"kind": "think", "title": title, "thought": thought, "action": action, "confidence": confidence},
    )


def analyze(
    title: str,
    result: str,
    analysis: str,
    run_context: RunContext,
    next_action: Literal["continue", "validate", "final_answer"] = "continue",
    confidence: float = 0.8,
) -> str:
    """Use this tool to evaluate a result (of a thought or of tool calls) and decide what comes next.

    Args:
        title: A short title for this analysis step.
        result: The result being analysed.
        analysis: Your evaluation: is the result correct, complete and sufficient?
        next_action: What to do next: continue, validate or final_answer.
        confidence: How confident you are in this analysis, from 0.0 to 1.0.
    """
    return _record(
        run_context,
        {
            "kind": "analyze",
            "title": title,
            "result": result,
            "analysis": analysis,
            "next_action": next_action,
            "confidence": confidence,
        },
    )


class ReasoningTools(Toolkit):
    def __init__(
        self,
        enable_think: bool = True,
        enable_analyze: bool = True,
        add_instructions: bool = False,
        instructions: str | None = None,
    ) -> None:
        tools: list[Function] = []
        if enable_think:
            tools.append(Function.from_callable(think))
        if enable_analyze:
            tools.append(Function.from_callable(analyze))
        super().__init__(
            name="reasoning_tools",
            tools=tools,
            instructions=instructions if instructions is not None else REASONING_INSTRUCTIONS,
            add_instructions=add_instructions,
        )
