"""Agno programs run with only their imports changed: constructor arguments and prompt details
as Agno has them."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from pydantic import ValidationError

from rag_core import Agent, Document, Knowledge
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


def test_every_provider_client_follows_its_standard_base_url_variable(monkeypatch):
    """A program points at the emulator (or a proxy) through the environment alone."""
    from rag_core import Agent
    from rag_core.embedder import CohereEmbedder, GeminiEmbedder, OpenAIEmbedder
    from rag_core.evals.emulator.server import EmulatorServer
    from rag_core.models import Gemini, OpenAIResponses
    from rag_core.reranker import CohereReranker

    server = EmulatorServer()
    provider = server.load([{"text": "from the emulator"}] * 2, seed="env")
    for name, value in {"OPENAI_BASE_URL": f"{server.url}/v1", "OPENAI_API_KEY": "emulator", "CO_API_URL": server.url,
                        "CO_API_KEY": "emulator", "GOOGLE_GEMINI_BASE_URL": server.url, "GEMINI_API_KEY": "emulator"}.items():
        monkeypatch.setenv(name, value)
    try:
        assert Agent(model=OpenAIResponses(id="gpt-5.2")).run("hi").content == "from the emulator"
        assert Agent(model=Gemini(id="gemini-3-flash-preview")).run("hi").content == "from the emulator"
        assert [len(OpenAIEmbedder().embed(["a"])[0]), len(CohereEmbedder(id="embed-v4.0").embed(["a"])[0]),
                len(GeminiEmbedder().embed(["a"])[0])] == [1536, 1536, 3072]
        assert [d.content for d in CohereReranker(model="rerank-v3.5").rerank("pad", [Document(content="pad thai"),
                                                                                      Document(content="curry")])]
    finally:
        server.close()
    assert provider.paths == ["/v1/responses", "/v1beta/models/gemini-3-flash-preview:generateContent"]


def test_azure_openai_goes_through_the_sdks_azure_client_and_its_key_never_reaches_a_cassette(tmp_path):
    from rag_core.embedder import OpenAIEmbedder
    from rag_core.evals.emulator.server import EmulatorServer
    from rag_core.evals.recording.recorder import CaseRecorder
    from rag_core.models import OpenAIChat, OpenAIResponses

    server = EmulatorServer()
    provider = server.load([{"text": "from azure"}] * 2, seed="azure")
    azure = dict(azure_endpoint=server.url, api_version="2025-04-01-preview", azure_deployment="gpt5",
                 api_key="0123456789abcdef0123456789abcdef", max_retries=0)
    recorder = CaseRecorder(tmp_path / "azure.yaml", "once", server.url)
    try:
        with recorder.use("test"):
            assert Agent(model=OpenAIResponses(id="gpt5", **azure)).run("hi").content == "from azure"
            assert Agent(model=OpenAIChat(id="gpt5", **azure)).run("hi").content == "from azure"
            assert len(OpenAIEmbedder(id="text-embedding-3-small", **azure).embed(["pad thai"])[0]) == 1536
        recorder.commit()
    finally:
        server.close()
    assert provider.paths == ["/openai/responses", "/openai/deployments/gpt5/chat/completions"]
    cassette = (tmp_path / "azure.yaml").read_text()
    assert "api-version=2025-04-01-preview" in cassette and azure["api_key"] not in cassette
    assert "api-key" not in cassette.lower()


def test_azure_without_a_key_names_the_azure_variable(monkeypatch):
    from rag_core.errors import ModelProviderError
    from rag_core.models import OpenAIResponses

    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelProviderError, match="set AZURE_OPENAI_API_KEY"):
        OpenAIResponses(id="gpt5", azure_endpoint="https://example.openai.azure.com", api_version="2025-04-01-preview").client()


def test_show_full_reasoning_streams_each_step_and_the_models_summary_as_they_happen(knowledge):
    import io

    from rag_core.models import OpenAIResponses
    from rag_core.models.base import ReasoningDelta
    from rag_core.tools import ReasoningTools
    from tests.conftest import scripted_agent

    class SummarisingModel(OpenAIResponses):
        """The scripted provider's stream, preceded by a reasoning summary as gpt-5 streams it."""

        def invoke_stream(self, request):
            yield ReasoningDelta("Weighing the sources.")
            yield from super().invoke_stream(request)

    turns = [{"tool_calls": [{"name": "think", "arguments": {"title": "Plan", "thought": "Search for pad thai first."}}]},
             {"tool_calls": [{"name": "search_knowledge_base", "arguments": {"query": "pad thai"}}]},
             {"text": "Pad thai is a stir-fried noodle dish."}]
    agent, _ = scripted_agent(OpenAIResponses, turns, knowledge=knowledge, tools=[ReasoningTools(add_instructions=True)])
    agent.model = SummarisingModel(id="gpt-5.2", api_key="sk-test", http_client=agent.model.http_client, max_retries=0)
    buffer = io.StringIO()
    agent.print_response("What is pad thai?", stream=True, show_full_reasoning=True, file=buffer)
    text = buffer.getvalue()
    order = [text.index(marker) for marker in ("Thinking", "Weighing the sources.", "Reasoning step 1",
                                               "thought: Search for pad thai first.", "Tool: search_knowledge_base",
                                               "Response", "stir-fried noodle dish")]
    assert order == sorted(order), text
    assert text.count("Step 1: Plan") == 1  # shown once, when it happened, not again after the answer


@pytest.mark.parametrize(("module", "names"), [
    ("rag_core.knowledge.embedder.openai", ["OpenAIEmbedder"]),
    ("rag_core.knowledge.embedder.cohere", ["CohereEmbedder"]),
    ("rag_core.knowledge.embedder.google", ["GeminiEmbedder"]),
    ("rag_core.knowledge.reranker.cohere", ["CohereReranker"]),
    ("rag_core.models.openai", ["OpenAIResponses", "OpenAIChat"]),
    ("rag_core.models.google", ["Gemini"]),
    ("rag_core.vectordb.pgvector", ["PgVector", "SearchType"]),
    ("rag_core.vectordb.lancedb", ["LanceDb", "SearchType"]),
    ("rag_core.vectordb.chroma", ["ChromaDb", "SearchType"]),
    ("rag_core.vectordb.search", ["SearchType"]),
    ("rag_core.knowledge.knowledge", ["Knowledge"]),
    ("rag_core.db.sqlite", ["SqliteDb"]),
    ("rag_core.tools.reasoning", ["ReasoningTools"]),
])
def test_agno_module_paths_name_the_same_classes(module, names):
    """``from agno.X import Y`` becomes ``from rag_core.X import Y``: the same class as rag_core's own."""
    import importlib

    import rag_core
    import rag_core.embedder
    import rag_core.models
    import rag_core.reranker
    import rag_core.vectordb

    canonical = {**vars(rag_core.embedder), **vars(rag_core.models), **vars(rag_core.reranker),
                 **vars(rag_core.vectordb), "Knowledge": rag_core.Knowledge, "SqliteDb": SqliteDb,
                 "ReasoningTools": __import__("rag_core.tools", fromlist=["ReasoningTools"]).ReasoningTools}
    aliased = importlib.import_module(module)
    for name in names:
        assert getattr(aliased, name) is canonical[name], f"{module}.{name}"
