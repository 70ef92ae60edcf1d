"""Agents built in code, for golden cases that name a factory (``agent: "evals.scenarios:..."``).

A factory takes the model the harness built (pointing at a cassette, the emulator or the
live API) and returns the Agent.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from rag_core import Agent, Document, Knowledge
from rag_core.models.base import Model
from rag_core.tools import ReasoningTools

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def thai_recipes(max_results: int = 10) -> Knowledge:
    knowledge = Knowledge(max_results=max_results)
    entries = yaml.safe_load((FIXTURES / "corpora" / "thai_recipes.yaml").read_text(encoding="utf-8"))
    knowledge.insert(documents=[Document(content=e["content"], meta_data=e["meta_data"], name=e["name"]) for e in entries])
    return knowledge


def reasoning_agent(model: Model) -> Agent:
    """Agentic RAG with ReasoningTools and the two seed instructions (think → search → analyze → answer)."""
    return Agent(
        model=model,
        knowledge=thai_recipes(),
        tools=[ReasoningTools(add_instructions=True)],
        instructions=["Include sources in your response.", "Always search your knowledge before answering the question."],
        markdown=True,
    )
