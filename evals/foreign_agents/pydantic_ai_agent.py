"""A pydantic-ai agent on the OpenAI Responses API with one tool, written as pydantic-ai's docs
write one (a module-level ``Agent`` named by a model string, no endpoint or key), and pinned
through its traffic.

pydantic-ai is a dev dependency; the case that uses this module says ``requires: [pydantic_ai]``.
The conversation is kept across turns as a chat program keeps it (``message_history``); the
case's context is used only as that program's session.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent

from evals.foreign_agents.recipes import INSTRUCTIONS, lookup_recipe

agent = Agent("openai-responses:gpt-5.2", instructions=INSTRUCTIONS, tools=[lookup_recipe])


def recipe_agent(question: str, context: Any) -> str:
    result = agent.run_sync(question, message_history=context.state.get("history"))
    context.state["history"] = result.all_messages()
    return result.output
