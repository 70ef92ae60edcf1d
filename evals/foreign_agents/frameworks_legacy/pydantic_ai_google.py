"""A pydantic-ai agent on a Google Gemini model (the Gemini API, through google-genai) with one
function tool, written as pydantic-ai's docs write a minimal agent ("Models > Google": the model
by name, ``Agent("google:gemini-2.5-flash", instructions=..., tools=[...])`` at module level, key
from ``GOOGLE_API_KEY``; then ``agent.run_sync(...).output``). pydantic-ai 2.x names the Gemini API
provider ``google:`` (the 1.x docs' ``google-gla:`` prefix is no longer accepted).

Versions: pydantic-ai-slim[google] 2.68.0 (google-genai 2.x, over httpx2), from the
``frameworks-legacy`` extra; the case that uses it says ``requires: [pydantic_ai]``.
"""

from __future__ import annotations

from pydantic_ai import Agent

from evals.foreign_agents.recipes import INSTRUCTIONS, lookup_recipe

agent = Agent("google:gemini-2.5-flash", instructions=INSTRUCTIONS, tools=[lookup_recipe])


def recipe_agent(question: str) -> str:
    return agent.run_sync(question).output
