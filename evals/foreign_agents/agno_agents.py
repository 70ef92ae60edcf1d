"""Agno 3.1.10 agents (the behavioural reference), built as Agno's cookbook builds them, for
golden cases pinned through their traffic and for the differential cases against rag_core.

Agno is a dev dependency only; the cases that use this module say ``requires: [agno]``.
Knowledge lives in Agno's own Chroma store with OpenAI embeddings, in a throwaway folder:
Agno's in-memory Chroma client has other settings than rag_core's, and Chroma refuses a
second in-memory client with different settings in one process.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

# Agno reports runs to its servers unless told not to; a replayed case never leaves the machine
os.environ.setdefault("AGNO_TELEMETRY", "false")

from agno.agent import Agent  # noqa: E402
from agno.knowledge.embedder.openai import OpenAIEmbedder  # noqa: E402
from agno.knowledge.knowledge import Knowledge  # noqa: E402
from agno.models.openai import OpenAIResponses  # noqa: E402
from agno.vectordb.chroma import ChromaDb  # noqa: E402

_collections = itertools.count()


def _knowledge(corpus: Path, context: Any) -> Knowledge:
    """The corpus's documents in a fresh Chroma collection (neither its name nor its folder is
    ever sent); the folder goes when the case's state does."""
    folder = context.state.setdefault("folder", tempfile.TemporaryDirectory(prefix="agno-chroma-"))
    store = ChromaDb(collection=f"recipes_{next(_collections)}", path=folder.name, persistent_client=True,
                     embedder=OpenAIEmbedder(id="text-embedding-3-small"))
    knowledge = Knowledge(vector_db=store)
    for entry in yaml.safe_load(corpus.read_text(encoding="utf-8")):
        knowledge.insert(name=entry["name"], text_content=entry["content"], metadata=entry.get("meta_data"))
    return knowledge


def _agent(context: Any, **options: Any) -> Agent:
    if "agent" not in context.state:  # one agent for all turns of a case, as a program keeps it
        context.state["agent"] = Agent(model=OpenAIResponses(id="gpt-5.2"), telemetry=False, **options)
    return context.state["agent"]


def agentic_rag(question: str, context: Any) -> Any:
    """Agno's agentic RAG seed: search_knowledge_base over the Thai recipes, markdown answers
    (Chroma instead of the seed's PgVector: the first request does not depend on the store)."""
    knowledge = context.state.get("knowledge") or _knowledge(context.fixtures / "corpora" / "thai_recipes.yaml", context)
    context.state["knowledge"] = knowledge
    return _agent(context, knowledge=knowledge, search_knowledge=True, markdown=True).run(question)
