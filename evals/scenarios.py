"""The seed scenarios as agent factories plus the model turns the emulator plays for them.

Each factory takes the model to use and a clock, so the same scenario runs against the
emulator, a cassette or a live provider, and its prompt never depends on the real time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

import yaml

from rag_core import Agent, Document, Knowledge
from rag_core.models.base import Model
from rag_core.tools import ReasoningTools

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FROZEN_NOW = datetime(2026, 1, 15, 9, 30, 0)


def thai_recipes(max_results: int = 10) -> Knowledge:
    knowledge = Knowledge(max_results=max_results)
    entries = yaml.safe_load((FIXTURES / "corpora" / "thai_recipes.yaml").read_text(encoding="utf-8"))
    knowledge.insert(documents=[Document(content=e["content"], meta_data=e["meta_data"], name=e["name"]) for e in entries])
    return knowledge


WORKFLOW = """\
You answer questions about Thai cooking from the knowledge base.
Work in three steps:
1. Search the knowledge base with the key terms of the question.
2. If the results miss something, search again with other words.
3. Answer from what you found, and say which source each fact came from."""


@dataclass
class Scenario:
    name: str
    build: Callable[[Model], Agent]
    input: str
    turns: list[dict[str, Any]] = field(default_factory=list)


def _search(query: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "search_knowledge_base", "arguments": {"query": query}}]}


SCENARIOS = [
    Scenario(
        "agentic_rag",
        lambda model: Agent(model=model, knowledge=thai_recipes(), search_knowledge=True, markdown=True),
        "How do I make pad thai?",
        [_search("pad thai recipe"), {"text": "Soak the rice noodles, fry garlic and shallots, add tamarind and fish sauce."}],
    ),
    Scenario(
        "traditional_rag",
        lambda model: Agent(
            model=model, knowledge=thai_recipes(max_results=3), add_knowledge_to_context=True, search_knowledge=False, markdown=True
        ),
        "What gives tom kha gai its aroma?",
        [{"text": "Galangal, lemongrass and kaffir lime leaves."}],
    ),
    Scenario(
        "references_json",
        lambda model: Agent(model=model, knowledge=thai_recipes(max_results=2), references_format="json"),
        "Which curry has cardamom and cinnamon?",
        [_search("curry cardamom cinnamon"), {"text": "Massaman curry."}],
    ),
    Scenario(
        "references_yaml",
        lambda model: Agent(model=model, knowledge=thai_recipes(max_results=2), references_format="yaml"),
        "Which curry has cardamom and cinnamon?",
        [_search("curry cardamom cinnamon"), {"text": "Massaman curry."}],
    ),
    Scenario(
        "agentic_rag_reasoning",
        lambda model: Agent(
            model=model,
            knowledge=thai_recipes(),
            tools=[ReasoningTools(add_instructions=True)],
            instructions=["Include sources in your response.", "Always search your knowledge before answering the question."],
            markdown=True,
        ),
        "What should a good som tam taste like?",
        [
            {"tool_calls": [{"name": "think", "arguments": {"title": "Plan", "thought": "Search the recipes for som tam.", "action": "search"}}]},
            _search("som tam taste"),
            {"tool_calls": [{"name": "analyze", "arguments": {"title": "Check", "result": "The som tam recipe describes the taste.", "analysis": "Enough to answer.", "next_action": "final_answer", "confidence": 0.9}}]},
            {"text": "Sour, hot, salty and sweet at once (ThaiRecipes.pdf, page 5)."},
        ],
    ),
    Scenario(
        "agent_search_over_knowledge",
        lambda model: Agent(
            name="Agent with Knowledge",
            model=model,
            instructions=WORKFLOW,
            knowledge=thai_recipes(max_results=5),
            add_datetime_to_context=True,
            clock=lambda: FROZEN_NOW,
            markdown=True,
        ),
        "Which dishes use galangal?",
        [_search("galangal"), {"text": "Tom kha gai and green curry."}],
    ),
]
