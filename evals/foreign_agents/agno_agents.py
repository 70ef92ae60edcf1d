"""Agno 3.1.10 agents (the behavioural reference), built as Agno's cookbook builds them, for
golden cases pinned through their traffic and for the differential cases against rag_core
(the seed programs of ``../shared/seeds``; their rag_core twins are in ``evals/scenarios.py``).

Agno is a dev dependency only; the cases that use this module say ``requires: [agno]``.
Stores live in throwaway folders (Agno's in-memory Chroma client has other settings than
rag_core's, and Chroma refuses a second in-memory client with different settings in one
process). Where a seed says PgVector, Chroma stands in: a differential case compares what the
two frameworks send to the model, and which store ranked the documents is not part of it as
long as both sides rank them the same way.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from pathlib import Path
from typing import Any, Callable

import yaml

# Agno reports runs to its servers unless told not to; a replayed case never leaves the machine
os.environ.setdefault("AGNO_TELEMETRY", "false")

from agno.agent import Agent  # noqa: E402
from agno.knowledge.embedder.openai import OpenAIEmbedder  # noqa: E402
from agno.knowledge.knowledge import Knowledge  # noqa: E402
from agno.models.openai import OpenAIResponses  # noqa: E402
from agno.vectordb.chroma import ChromaDb  # noqa: E402

from evals.scenarios import REASONING_INSTRUCTIONS, WORKFLOW  # noqa: E402  (the seeds' own texts, shared)

_collections = itertools.count()


def _folder(context: Any) -> Path:
    """The case's scratch folder; it goes when the case's state does."""
    if "folder" not in context.state:
        context.state["folder"] = tempfile.TemporaryDirectory(prefix="agno-seed-")
    return Path(context.state["folder"].name)


def _chroma(context: Any, embedder: Any = None, **options: Any) -> ChromaDb:
    """A fresh Chroma collection (neither its name nor its folder is ever sent)."""
    return ChromaDb(collection=f"recipes_{next(_collections)}", path=str(_folder(context) / "chromadb"),
                    persistent_client=True, embedder=embedder or OpenAIEmbedder(id="text-embedding-3-small"), **options)


def _recipes(context: Any, vector_db: Any, **options: Any) -> Knowledge:
    """The Thai recipes corpus in ``vector_db``, inserted as a program does at start."""
    knowledge = Knowledge(vector_db=vector_db, **options)
    corpus = context.fixtures / "corpora" / "thai_recipes.yaml"
    for entry in yaml.safe_load(corpus.read_text(encoding="utf-8")):
        knowledge.insert(name=entry["name"], text_content=entry["content"], metadata=entry.get("meta_data"))
    return knowledge


def _kept(context: Any, build: Callable[[], Agent]) -> Agent:
    """One agent (with its knowledge) for all turns of a case, as a program keeps it: built on the first."""
    if "agent" not in context.state:
        context.state["agent"] = build()
    return context.state["agent"]


def _agent(model: Any = None, **options: Any) -> Agent:
    return Agent(model=model or OpenAIResponses(id="gpt-5.2"), telemetry=False, **options)


def agentic_rag(question: str, context: Any) -> Any:
    """Agno's agentic RAG seed: search_knowledge_base over the Thai recipes, markdown answers."""
    return _kept(context, lambda: _agent(knowledge=_recipes(context, _chroma(context)), search_knowledge=True,
                                         markdown=True)).run(question)


def agentic_rag_on_claude(question: str, context: Any) -> Any:
    """The agentic RAG seed with Agno's Claude model (its seed programs swap models this way)."""
    from agno.models.anthropic import Claude

    return _kept(context, lambda: _agent(Claude(id="claude-sonnet-4-5", max_tokens=1024),
                                         knowledge=_recipes(context, _chroma(context)), search_knowledge=True,
                                         markdown=True)).run(question)


def agentic_rag_with_reasoning(question: str, context: Any) -> Any:
    """Agno's reasoning seed as written: ReasoningTools with their instructions, LanceDb hybrid
    search over Cohere embeddings with Cohere reranking (every Cohere call goes to the cassette)."""
    from agno.knowledge.embedder.cohere import CohereEmbedder
    from agno.knowledge.reranker.cohere import CohereReranker
    from agno.tools.reasoning import ReasoningTools
    from agno.vectordb.lancedb import LanceDb, SearchType

    def build() -> Agent:
        store = LanceDb(uri=str(_folder(context) / "lancedb"), table_name="agno_docs", search_type=SearchType.hybrid,
                        embedder=CohereEmbedder(id="embed-v4.0"), reranker=CohereReranker(model="rerank-v3.5"))
        return _agent(knowledge=_recipes(context, store), search_knowledge=True,
                      tools=[ReasoningTools(add_instructions=True)], instructions=REASONING_INSTRUCTIONS, markdown=True)

    return _kept(context, build).run(question)


def traditional_rag(question: str, context: Any) -> Any:
    """Agno's traditional RAG seed: the references go into the user message, no search tool."""
    return _kept(context, lambda: _agent(knowledge=_recipes(context, _chroma(context), max_results=3),
                                         add_knowledge_to_context=True, search_knowledge=False,
                                         markdown=True)).run(question)


def references_format(question: str, context: Any) -> Any:
    """Agno's references_format seed: the search tool returns its documents as YAML."""
    return _kept(context, lambda: _agent(knowledge=_recipes(context, _chroma(context), max_results=2),
                                         search_knowledge=True, references_format="yaml",
                                         markdown=True)).run(question)


def agent_search_over_knowledge(question: str, context: Any) -> Any:
    """Agno's quickstart seed: Gemini, hybrid Chroma search over Gemini embeddings, SQLite
    sessions with the last five runs as history, the current time in the prompt. Agno reads the
    clock itself (``datetime.now()``), so the run happens at the case's frozen clock."""
    import time_machine
    from agno.db.sqlite import SqliteDb
    from agno.knowledge.embedder.google import GeminiEmbedder
    from agno.models.google import Gemini
    from agno.vectordb.chroma import SearchType

    def build() -> Agent:
        db = SqliteDb(db_file=str(_folder(context) / "agents.db"))
        store = _chroma(context, GeminiEmbedder(id="gemini-embedding-001", dimensions=768),
                        search_type=SearchType.hybrid, hybrid_rrf_k=60)
        return _agent(model=Gemini(id="gemini-3-flash-preview"), name="Agent with Knowledge", instructions=WORKFLOW,
                      knowledge=_recipes(context, store, max_results=5, contents_db=db), db=db,
                      add_datetime_to_context=True, add_history_to_context=True, num_history_runs=5, markdown=True)

    agent = _kept(context, build)
    with time_machine.travel(context.clock, tick=False):
        return agent.run(question)
