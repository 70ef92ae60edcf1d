"""Agents built in code, for golden cases that name a factory (``agent: "evals.scenarios:..."``).

A factory takes the model the harness built (pointing at a cassette, the emulator or the
live API) and returns the Agent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from rag_core import Agent, Document, Knowledge
from rag_core.models.base import Model
from rag_core.tools import ReasoningTools

WORKFLOW = """\
You answer questions about Thai cooking from the knowledge base.
Work in three steps:
1. Search the knowledge base with the key terms of the question.
2. If the results miss something, search again with other words.
3. Answer from what you found, and say which source each fact came from."""

REASONING_INSTRUCTIONS = ["Include sources in your response.", "Always search your knowledge before answering the question."]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def recipe_documents() -> list[Document]:
    entries = yaml.safe_load((FIXTURES / "corpora" / "thai_recipes.yaml").read_text(encoding="utf-8"))
    return [Document(content=e["content"], meta_data=dict(e["meta_data"]), name=e["name"]) for e in entries]


def thai_recipes(max_results: int = 10, **options: Any) -> Knowledge:
    """The Thai recipes corpus in a Knowledge (``options``: its vector_db, contents_db, ...);
    in-memory BM25 without any."""
    knowledge = Knowledge(max_results=max_results, **options)
    knowledge.insert(documents=recipe_documents())
    return knowledge


def reasoning_agent(model: Model) -> Agent:
    """Seed scenario 1 as written: agentic RAG with ReasoningTools (think → search → analyze →
    answer) over LanceDb hybrid search with Cohere embeddings and Cohere reranking. The Cohere
    clients find their endpoint and key where the SDK looks (CO_API_URL, CO_API_KEY), which the
    harness points at the emulator while recording; every Cohere call lands in the cassette."""
    from rag_core.embedder import CohereEmbedder
    from rag_core.reranker import CohereReranker
    from rag_core.vectordb import LanceDb, SearchType

    knowledge = thai_recipes(
        vector_db=LanceDb(
            uri=str(_scratch("lancedb")),
            table_name="agno_docs",
            search_type=SearchType.hybrid,
            embedder=CohereEmbedder(id="embed-v4.0"),
            reranker=CohereReranker(model="rerank-v3.5"),
        ),
    )
    return Agent(
        model=model,
        knowledge=knowledge,
        search_knowledge=True,
        tools=[ReasoningTools(add_instructions=True)],
        instructions=REASONING_INSTRUCTIONS,
        markdown=True,
    )


def _scratch(what: str) -> Path:
    """A fresh folder for a store the factory builds (a case starts from an empty store)."""
    import tempfile

    return Path(tempfile.mkdtemp(prefix=f"rag-core-{what}-"))


def gemini_knowledge_agent(model: Model) -> Agent:
    """Seed scenario 5 as written: Gemini, hybrid Chroma search over Gemini embeddings, SQLite
    sessions with history, the current time in the prompt. The embedder reads its endpoint and key
    from the google-genai variables, which the harness points at the emulator while recording."""
    from rag_core.db import SqliteDb
    from rag_core.embedder import GeminiEmbedder
    from rag_core.vectordb import ChromaDb, SearchType

    folder = _scratch("gemini")
    agent_db = SqliteDb(db_file=str(folder / "agents.db"))
    embedder = GeminiEmbedder(id="gemini-embedding-001", dimensions=768)
    knowledge = thai_recipes(
        vector_db=ChromaDb(collection="thai-recipes", path=str(folder / "chromadb"), persistent_client=True,
                           search_type=SearchType.hybrid, hybrid_rrf_k=60, embedder=embedder),
        max_results=5,
        contents_db=agent_db,
    )
    return Agent(
        name="Agent with Knowledge",
        model=model,
        instructions=WORKFLOW,
        knowledge=knowledge,
        db=agent_db,
        add_datetime_to_context=True,
        add_history_to_context=True,
        num_history_runs=5,
        markdown=True,
    )


def _chroma_recipes(max_results: int) -> Knowledge:
    """The Thai recipes in a fresh Chroma collection over OpenAI embeddings: what the Agno side of
    the differential seed cases uses, so both frameworks rank the same documents the same way."""
    from rag_core.embedder import OpenAIEmbedder
    from rag_core.vectordb import ChromaDb

    return thai_recipes(max_results, vector_db=ChromaDb(collection="recipes", path=str(_scratch("chroma")),
                                                        persistent_client=True,
                                                        embedder=OpenAIEmbedder(id="text-embedding-3-small")))


def traditional_rag_agent(model: Model) -> Agent:
    """Seed scenario 3 over Chroma (the differential case's store): references in the user message."""
    return Agent(model=model, knowledge=_chroma_recipes(3), add_knowledge_to_context=True, search_knowledge=False,
                 markdown=True)


def references_yaml_agent(model: Model) -> Agent:
    """Seed scenario 4 over Chroma (the differential case's store): search results as YAML."""
    return Agent(model=model, knowledge=_chroma_recipes(2), references_format="yaml", markdown=True)


class RecipeAnswer(BaseModel):
    """A cooking answer with the recipes it came from (the output_schema of the structured cases)."""

    answer: str = Field(description="the answer, in one or two sentences")
    recipes: list[str] = Field(description="names of the knowledge base documents the answer used")
    vegetarian: bool | None = Field(description="whether the dish is vegetarian; null when unknown")
