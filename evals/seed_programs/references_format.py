"""references_format="yaml": the search tool hands its results to the model as YAML."""

import os

from rag_core.agent import Agent
from rag_core.knowledge.embedder.openai import OpenAIEmbedder
from rag_core.knowledge.knowledge import Knowledge
from rag_core.models.openai import OpenAIResponses
from rag_core.vectordb.pgvector import PgVector, SearchType

db_url = os.environ.get("SEED_DB_URL", "postgresql+psycopg://ai:ai@localhost:5532/ai")
recipes_site = os.environ.get("SEED_RECIPES_SITE", "https://agno-public.s3.amazonaws.com")

knowledge = Knowledge(
    vector_db=PgVector(
        table_name="recipes",
        db_url=db_url,
        search_type=SearchType.hybrid,
        embedder=OpenAIEmbedder(id="text-embedding-3-small"),
    ),
)
knowledge.insert(url=f"{recipes_site}/recipes/ThaiRecipes.pdf")

agent = Agent(
    model=OpenAIResponses(id="gpt-5.2"),
    knowledge=knowledge,
    search_knowledge=True,
    references_format="yaml",
    markdown=True,
)

if __name__ == "__main__":
    agent.print_response(
        "How do I make chicken and galangal in coconut milk soup?", stream=True
    )
