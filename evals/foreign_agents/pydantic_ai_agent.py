"""A pydantic-ai agent on the OpenAI Responses API with one tool, pinned through its traffic.

pydantic-ai is a dev dependency; the case that uses this module says ``requires: [pydantic_ai]``.
The model's provider gets the endpoint and key from the case's context, as a program passes
them from its own configuration; the conversation is kept across turns like a chat program
keeps it.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIResponsesModel
from pydantic_ai.providers.openai import OpenAIProvider

from evals.foreign_agents.recipes import INSTRUCTIONS, dated, lookup_recipe


def recipe_agent(question: str, context: Any) -> str:
    if "agent" not in context.state:
        provider = OpenAIProvider(base_url=context.base_url("openai"), api_key=context.api_key("openai"))
        context.state["agent"] = Agent(OpenAIResponsesModel("gpt-5.2", provider=provider),
                                       instructions=dated(INSTRUCTIONS, context.clock), tools=[lookup_recipe])
    result = context.state["agent"].run_sync(question, message_history=context.state.get("history"))
    context.state["history"] = result.all_messages()
    return result.output
