"""A LlamaIndex ``FunctionAgent`` on OpenAI with one function tool, written as LlamaIndex's docs
write a minimal agent (developers.llamaindex.ai, "Agents": ``FunctionAgent(tools=[...],
llm=OpenAI(model="gpt-4o-mini"), system_prompt=...)`` at module level, then
``response = await agent.run(...)`` and ``str(response)``).

Versions: llama-index-core 0.14.25, llama-index-llms-openai 0.8.3 (openai 1.x), from the
``frameworks-legacy`` extra; the case that uses it says ``requires: [llama_index]``.
The client is the framework's own (key and endpoint from the environment); the harness pins what
it sends (Chat Completions, streamed, as FunctionAgent asks for it).
"""

from __future__ import annotations

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.llms.openai import OpenAI

from evals.foreign_agents.recipes import INSTRUCTIONS, lookup_recipe

agent = FunctionAgent(
    tools=[lookup_recipe],
    llm=OpenAI(model="gpt-4o-mini"),
    system_prompt=INSTRUCTIONS,
)


async def recipe_agent(question: str) -> str:
    response = await agent.run(question)
    return str(response)
