"""Agent with knowledge: Gemini, ChromaDb hybrid search over Gemini embeddings, SQLite for
sessions and contents, the current time and the last runs in the context."""

import os

from rag_core.agent import Agent
from rag_core.db.sqlite import SqliteDb
from rag_core.knowledge.embedder.google import GeminiEmbedder
from rag_core.knowledge.knowledge import Knowledge
from rag_core.models.google import Gemini
from rag_core.vectordb.chroma import ChromaDb
from rag_core.vectordb.search import SearchType

docs_site = os.environ.get("SEED_DOCS_SITE", "https://docs.agno.com")

agent_db = SqliteDb(db_file="tmp/agents.db")

knowledge = Knowledge(
    name="Agno Documentation",
    vector_db=ChromaDb(
        name="agno_docs",
        collection="agno_docs",
        path="tmp/chromadb",
        persistent_client=True,
        search_type=SearchType.hybrid,
        hybrid_rrf_k=60,
        embedder=GeminiEmbedder(id="gemini-embedding-001"),
    ),
    max_results=5,
    contents_db=agent_db,
)

instructions = """\
You are an expert on the Agno framework and building AI agents.

## Workflow

1. Search
   - For questions about Agno, always search your knowledge base first
   - Extract key concepts from the query to search effectively

2. Synthesize
   - Combine information from multiple search results
   - Prioritize official documentation over general knowledge

3. Present
   - Lead with a direct answer
   - Include code examples when helpful
   - Keep it practical and actionable

## Rules

- Always search knowledge before answering Agno questions
- If the answer isn't in the knowledge base, say so
- Include code snippets for implementation questions
- Be concise — developers want answers, not essays\
"""

agent_with_knowledge = Agent(
    name="Agent with Knowledge",
    model=Gemini(id="gemini-3-flash-preview"),
    instructions=instructions,
    knowledge=knowledge,
    search_knowledge=True,
    db=agent_db,
    add_datetime_to_context=True,
    add_history_to_context=True,
    num_history_runs=5,
    markdown=True,
)

if __name__ == "__main__":
    knowledge.insert(name="Agno Introduction", url=f"{docs_site}/introduction.md")
    agent_with_knowledge.print_response("What is Agno?", stream=True)
