"""A LangChain v1 agent (langchain 1.5.2, langchain-openai 1.7.4), written as LangChain's
"Agents" and "Streaming" docs write one: ``create_agent(model=..., tools=[...],
system_prompt=...)`` at module level with a plain function (its docstring the tool's
description) as the tool, then ``agent.invoke({"messages": [...]})``, ``await
agent.ainvoke(...)``, or ``agent.stream(..., stream_mode="messages")`` keeping the tokens of the
``model`` node.

The model string ``"openai:gpt-5.2"`` makes a ``ChatOpenAI`` with key and endpoint from the
environment.
"""

from __future__ import annotations

from collections.abc import Iterator

from langchain.agents import create_agent

from evals.foreign_agents import recipes
from evals.foreign_agents.recipes import INSTRUCTIONS


def lookup_recipe(dish: str) -> str:
    """Look up how a Thai dish is made."""
    return recipes.lookup_recipe(dish)


agent = create_agent(model="openai:gpt-5.2", tools=[lookup_recipe], system_prompt=INSTRUCTIONS)


def invoke(question: str) -> str:
    result = agent.invoke({"messages": [{"role": "user", "content": question}]})
    return result["messages"][-1].text


async def ainvoke(question: str) -> str:
    result = await agent.ainvoke({"messages": [{"role": "user", "content": question}]})
    return result["messages"][-1].text


def stream(question: str) -> Iterator[str]:
    for token, metadata in agent.stream({"messages": [{"role": "user", "content": question}]},
                                        stream_mode="messages"):
        if metadata["langgraph_node"] == "model":
            yield token.text
