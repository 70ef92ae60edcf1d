"""A Haystack ``Agent`` (haystack-ai 3.4.1), written as Haystack's "Agent" component docs write
one: an ``OpenAIChatGenerator(model=...)`` (key from ``OPENAI_API_KEY``), one ``Tool`` with a
name, a description, a JSON Schema and the function, and a ``system_prompt``, built at module
level; then ``agent.run(messages=[ChatMessage.from_user(...)])`` and the text of
``result["last_message"]``.
"""

from __future__ import annotations

from haystack.components.agents import Agent
from haystack.components.generators.chat import OpenAIChatGenerator
from haystack.dataclasses import ChatMessage
from haystack.tools import Tool

from evals.foreign_agents.recipes import DESCRIPTION, INSTRUCTIONS, PARAMETERS, lookup_recipe

recipe_tool = Tool(name="lookup_recipe", description=DESCRIPTION, parameters=PARAMETERS, function=lookup_recipe)

agent = Agent(chat_generator=OpenAIChatGenerator(model="gpt-5.2"), tools=[recipe_tool], system_prompt=INSTRUCTIONS)


def recipe_agent(question: str) -> str:
    result = agent.run(messages=[ChatMessage.from_user(question)])
    return result["last_message"].text
