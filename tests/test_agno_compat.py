"""Agno programs run with only their imports changed: constructor arguments and prompt details
as Agno has them."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from pydantic import ValidationError

from rag_core import Agent, Knowledge
from rag_core.db import SqliteDb
from rag_core.vectordb import ChromaDb, InMemoryVectorDb, PgVector, SearchType
from tests.fakes import HashEmbedder


def test_the_chroma_knowledge_of_the_gemini_seed_constructs_as_written(tmp_path):
    agent_db = SqliteDb(db_file=str(tmp_path / "agents.db"))
    knowledge = Knowledge(
        name="Agno Documentation",
        vector_db=ChromaDb(
            name="agno_docs",
            collection="agno_docs",
            path=str(tmp_path / "chromadb"),
            persistent_client=True,
            search_type=SearchType.hybrid,
            hybrid_rrf_k=60,
            embedder=HashEmbedder(),
        ),
        max_results=5,
        contents_db=agent_db,
    )
    knowledge.insert("Agno is a framework for agents.", name="Agno Introduction")
    assert knowledge.vector_db.name == "agno_docs" and knowledge.vector_db.collection_name == "agno_docs"
    assert [d.name for d in knowledge.search("agents framework")] == ["Agno Introduction"]


@pytest.mark.parametrize("store", [
    lambda: InMemoryVectorDb(name="memory docs", description="kept in memory"),
    lambda: PgVector(table_name="agno_docs", db_url="postgresql+psycopg://ai:ai@localhost:5532/ai", name="pg docs",
                     search_type=SearchType.hybrid, embedder=HashEmbedder()),
])
def test_every_store_takes_a_name_and_a_description(store):
    built = store()
    assert built.name and built.name.endswith("docs")


@pytest.mark.parametrize(("clock", "options", "shown"), [
    (datetime(2026, 1, 15, 9, 30, 0, 123456), {}, "2026-01-15 09:30:00.123456"),  # Agno: str(datetime)
    (datetime(2026, 1, 15, 9, 30), {"datetime_format": "%d %B %Y, %H:%M"}, "15 January 2026, 09:30"),
    (datetime(2026, 1, 15, 9, 30), {"timezone_identifier": "Europe/Paris"}, "2026-01-15 09:30:00+01:00"),
    (datetime(2026, 1, 15, 8, 30, tzinfo=timezone.utc), {"timezone_identifier": "Asia/Tokyo"}, "2026-01-15 17:30:00+09:00"),
])
def test_the_current_time_renders_as_agno_renders_it(clock, options, shown):
    agent = Agent(add_datetime_to_context=True, clock=lambda: clock, **options)
    assert f"The current time is {shown}." in agent.get_system_message()


def test_an_unknown_time_zone_is_refused_at_construction():
    with pytest.raises(ValidationError, match="(?s)timezone_identifier.*unknown time zone 'Mars/Olympus'"):
        Agent(timezone_identifier="Mars/Olympus")


@pytest.mark.parametrize(("header", "value"), [("x-request-id", "req_openai_1"), ("apim-request-id", "azure-apim-1")])
def test_provider_errors_carry_the_request_id_of_openai_and_azure(header, value):
    import httpx2

    from rag_core.errors import ModelProviderError
    from rag_core.messages import Message
    from rag_core.models import OpenAIResponses

    def answer(request):
        return httpx2.Response(429, json={"error": {"message": "slow down", "type": "rate_limit_error"}},
                               headers={header: value})

    model = OpenAIResponses(id="gpt-5.2", api_key="test", max_retries=0,
                            http_client=httpx2.Client(transport=httpx2.MockTransport(answer)))
    with pytest.raises(ModelProviderError) as failure:
        model.invoke(model.build_request([Message(role="user", content="hi")], []))
    assert failure.value.request_id == value and failure.value.status_code == 429
