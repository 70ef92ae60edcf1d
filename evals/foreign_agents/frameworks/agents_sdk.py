"""The OpenAI Agents SDK's quickstart agent (openai-agents 0.24.0): a module-level ``Agent``
with instructions, a model name and a ``@function_tool``, run with ``Runner.run_sync``,
``await Runner.run`` or ``Runner.run_streamed`` (text deltas from the raw response events, as
the SDK's streaming guide prints them).

The SDK talks to the Responses API and adds a ``prompt_cache_key`` that is new for every run
(``agents-sdk:run:<uuid>``): the cases normalise it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from agents import Agent, Runner, function_tool
from openai.types.responses import ResponseTextDeltaEvent

from evals.foreign_agents import recipes
from evals.foreign_agents.recipes import INSTRUCTIONS


@function_tool
def lookup_recipe(dish: str) -> str:
    """Look up how a Thai dish is made.

    Args:
        dish: The dish's name, e.g. pad thai.
    """
    return recipes.lookup_recipe(dish)


agent = Agent(name="Thai cook", instructions=INSTRUCTIONS, model="gpt-5.2", tools=[lookup_recipe])


def run_sync(question: str) -> str:
    result = Runner.run_sync(agent, question)
    return result.final_output


async def run_async(question: str) -> str:
    result = await Runner.run(agent, question)
    return result.final_output


async def run_streamed(question: str) -> AsyncIterator[str]:
    result = Runner.run_streamed(agent, input=question)
    async for event in result.stream_events():
        if event.type == "raw_response_event" and isinstance(event.data, ResponseTextDeltaEvent):
            yield event.data.delta
