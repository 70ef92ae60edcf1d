"""Agentic RAG with reasoning: ReasoningTools (think, analyze) over LanceDb hybrid search with
Cohere embeddings and Cohere reranking; the knowledge is inserted asynchronously."""

import asyncio
import os

from rag_core.agent import Agent
from rag_core.knowledge.embedder.cohere import CohereEmbedder
from rag_core.knowledge.knowledge import Knowledge
from rag_core.knowledge.reranker.cohere import CohereReranker
from rag_core.models.openai import OpenAIResponses
from rag_core.tools.reasoning import ReasoningTools
from rag_core.vectordb.lancedb import LanceDb, SearchType

docs_site = os.environ.get("SEED_DOCS_SITE", "https://docs.agno.com")

knowledge = Knowledge(
    vector_db=LanceDb(
        uri="tmp/lancedb",
        table_name="agno_docs",
        search_type=SearchType.hybrid,
        embedder=CohereEmbedder(id="embed-v4.0"),
        reranker=CohereReranker(model="rerank-v3.5"),
    ),
)

asyncio.run(
    knowledge.ainsert_many(urls=[f"{docs_site}/agents/overview.md"])
)

agent = Agent(
    model=OpenAIResponses(id="gpt-5.2"),
    knowledge=knowledge,
    search_knowledge=True,
    tools=[ReasoningTools(add_instructions=True)],
    instructions=[
        "Include sources in your response.",
        "Always search your knowledge before answering the question.",
    ],
    markdown=True,
)

if __name__ == "__main__":
    agent.print_response(
        "What are Agents?",
        stream=True,
        show_full_reasoning=True,
    )
