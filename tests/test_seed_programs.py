"""The five seed programs (``evals/seed_programs/``, Agno programs with only their imports changed)
run end to end as scripts: against the provider emulator, a real PostgreSQL with pgvector and a
local web server for their documents. Each test checks the answer printed, the requests the
emulator saw, and that the ingested documents are searchable afterwards."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from rag_core.evals.emulator.server import EmulatorServer
from tests.documents import minimal_pdf, serve

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT / "evals" / "seed_programs"

RECIPES = ["Tom Kha Gai. Simmer sliced chicken with galangal and lemongrass in coconut milk.",
           "Pad Thai. Fry soaked rice noodles with tamarind, fish sauce and palm sugar."]
PAGES = {
    "/recipes/ThaiRecipes.pdf": ("application/pdf", minimal_pdf(RECIPES)),
    "/introduction.md": ("text/markdown", b"# What is Agno?\n\nAgno is a Python framework for building agents "
                                          b"with memory, knowledge and tools."),
    "/agents/overview.md": ("text/markdown", b"# Agents\n\nAgents are programs in which a language model "
                                             b"decides which tools to call to reach a goal."),
}


@pytest.fixture(scope="module")
def emulator():
    server = EmulatorServer()
    yield server
    server.close()


@pytest.fixture(scope="module")
def site():
    with serve(PAGES) as url:
        yield url


@pytest.fixture
def provider_env(emulator, monkeypatch):
    """The variables each SDK reads, pointing at the emulator (also for this process, which
    reopens the stores to search them)."""
    variables = {"OPENAI_BASE_URL": f"{emulator.url}/v1", "CO_API_URL": emulator.url,
                 "GOOGLE_GEMINI_BASE_URL": emulator.url, "OPENAI_API_KEY": "emulator", "CO_API_KEY": "emulator",
                 "GEMINI_API_KEY": "emulator"}
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    return variables


def run_seed(name: str, turns: list[dict[str, Any]], emulator: EmulatorServer, env: dict[str, str],
             workdir: Path, **locations: str) -> tuple[str, Any]:
    """Run ``evals/seed_programs/<name>.py`` as a script in ``workdir``; returns what it printed
    and the emulator's record of the model calls."""
    provider = emulator.load(turns, seed=name)
    completed = subprocess.run([sys.executable, str(SEEDS / f"{name}.py")], cwd=workdir, capture_output=True,
                               text=True, timeout=300, env={**os.environ, **env, **locations})
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert provider.overrun is None
    return completed.stdout, provider


def search_then_answer(answer: str) -> list[dict[str, Any]]:
    return [{"tool_calls": [{"name": "search_knowledge_base", "arguments": {"query": "galangal coconut soup"}}]},
            {"text": answer}]


@pytest.fixture
def fresh_recipes_table(pg_url):
    from rag_core.vectordb import PgVector

    PgVector(table_name="recipes", db_url=pg_url).drop()  # the three PgVector seeds share Agno's table name
    return pg_url


def pg_recipes(db_url: str) -> Any:
    from rag_core.embedder import OpenAIEmbedder
    from rag_core.vectordb import PgVector, SearchType

    return PgVector(table_name="recipes", db_url=db_url, search_type=SearchType.hybrid,
                    embedder=OpenAIEmbedder(id="text-embedding-3-small"))


def test_agentic_rag_on_pgvector(emulator, site, provider_env, fresh_recipes_table, tmp_path):
    answer = "Simmer chicken with galangal in coconut milk (ThaiRecipes.pdf, page 1)."
    printed, provider = run_seed("agentic_rag", search_then_answer(answer), emulator, provider_env, tmp_path,
                                 SEED_DB_URL=fresh_recipes_table, SEED_RECIPES_SITE=site)
    assert answer in printed
    assert provider.paths == ["/v1/responses", "/v1/responses"]
    first, second = provider.requests
    assert first["model"] == "gpt-5.2" and first["stream"] is True
    assert [t["name"] for t in first["tools"]] == ["search_knowledge_base"]
    assert "<knowledge_base>" in first["input"][0]["content"]
    results = json.loads(tool_output(second, "search_knowledge_base"))
    assert results[0]["content"] == RECIPES[0] and results[0]["meta_data"]["page"] == 1
    assert results[0]["meta_data"]["source"] == f"{site}/recipes/ThaiRecipes.pdf"
    assert pg_recipes(fresh_recipes_table).search("galangal coconut", limit=1)[0].content == RECIPES[0]


def test_references_format_yaml_on_pgvector(emulator, site, provider_env, fresh_recipes_table, tmp_path):
    answer = "Galangal and coconut milk make Tom Kha Gai."
    printed, provider = run_seed("references_format", search_then_answer(answer), emulator, provider_env,
                                 tmp_path, SEED_DB_URL=fresh_recipes_table, SEED_RECIPES_SITE=site)
    assert answer in printed
    output = tool_output(provider.requests[1], "search_knowledge_base")
    results = yaml.safe_load(output)  # YAML, not JSON
    assert not output.lstrip().startswith("[")
    assert results[0]["content"] == RECIPES[0]
    assert pg_recipes(fresh_recipes_table).search("tamarind noodles", limit=1)[0].content == RECIPES[1]


def test_traditional_rag_puts_references_in_the_user_message(emulator, site, provider_env, fresh_recipes_table,
                                                              tmp_path):
    answer = "Tom Kha Gai: chicken, galangal, coconut milk."
    printed, provider = run_seed("traditional_rag", [{"text": answer}], emulator, provider_env, tmp_path,
                                 SEED_DB_URL=fresh_recipes_table, SEED_RECIPES_SITE=site)
    assert answer in printed
    (request,) = provider.requests
    assert "tools" not in request or not request["tools"]
    user = request["input"][-1]["content"]
    assert user.startswith("How do I make chicken and galangal in coconut milk soup\n\n"
                           "Use the following references from the knowledge base if it helps:\n<references>\n")
    assert RECIPES[0] in user


def test_agent_search_over_knowledge_on_gemini_chroma_and_sqlite(emulator, site, provider_env, tmp_path):
    answer = "Agno is a Python framework for building agents."
    turns = [{"tool_calls": [{"name": "search_knowledge_base", "arguments": {"query": "What is Agno"}}]},
             {"text": answer}]
    printed, provider = run_seed("agent_search_over_knowledge", turns, emulator, provider_env, tmp_path,
                                 SEED_DOCS_SITE=site)
    assert answer in printed
    assert provider.paths == ["/v1beta/models/gemini-3-flash-preview:streamGenerateContent"] * 2
    first, second = provider.requests
    system = first["systemInstruction"]["parts"][0]["text"]
    assert system.startswith("You are an expert on the Agno framework") and "The current time is " in system
    response = second["contents"][-1]["parts"][0]["functionResponse"]["response"]
    assert "Agno is a Python framework" in json.dumps(response)

    from rag_core.db.sqlite import SqliteDb
    from rag_core.embedder import GeminiEmbedder
    from rag_core.vectordb import ChromaDb, SearchType

    store = ChromaDb(collection="agno_docs", path=str(tmp_path / "tmp" / "chromadb"), persistent_client=True,
                     search_type=SearchType.hybrid, embedder=GeminiEmbedder(id="gemini-embedding-001"))
    assert store.search("framework for agents", limit=1)[0].name == "Agno Introduction"
    agent_db = tmp_path / "tmp" / "agents.db"
    (content,) = SqliteDb(db_file=str(agent_db)).contents()  # the knowledge's contents_db
    assert (content.name, content.status) == ("Agno Introduction", "completed")
    with sqlite3.connect(agent_db) as conn:  # the run was saved to the session
        assert conn.execute("SELECT status FROM runs").fetchall() == [("completed",)]


def test_agentic_rag_with_reasoning_on_lancedb_with_cohere(emulator, site, provider_env, tmp_path):
    answer = "Agents are programs where a model chooses the tools (overview.md)."
    turns = [
        {"tool_calls": [{"name": "think", "arguments": {"title": "Understand the question",
                                                         "thought": "Look up what Agents are.", "action": "search"}}]},
        {"tool_calls": [{"name": "search_knowledge_base", "arguments": {"query": "What are Agents"}}]},
        {"tool_calls": [{"name": "analyze", "arguments": {"title": "Enough found", "result": "The overview defines them.",
                                                           "analysis": "It answers the question.",
                                                           "next_action": "final_answer", "confidence": 0.9}}]},
        {"text": answer},
    ]
    printed, provider = run_seed("agentic_rag_with_reasoning", turns, emulator, provider_env, tmp_path,
                                 SEED_DOCS_SITE=site)
    # show_full_reasoning: the steps are printed as they happen, before the answer
    assert printed.index("Understand the question") < printed.index("Enough found") < printed.index(answer)
    assert len(provider.requests) == 4
    first = provider.requests[0]
    assert sorted(t["name"] for t in first["tools"]) == ["analyze", "search_knowledge_base", "think"]
    assert "<reasoning_instructions>" in first["input"][0]["content"]
    found = tool_output(provider.requests[2], "search_knowledge_base")
    assert "Agents are programs in which a language model" in found

    from rag_core.embedder import CohereEmbedder
    from rag_core.reranker import CohereReranker
    from rag_core.vectordb import LanceDb, SearchType

    store = LanceDb(uri=str(tmp_path / "tmp" / "lancedb"), table_name="agno_docs", search_type=SearchType.hybrid,
                    embedder=CohereEmbedder(id="embed-v4.0"), reranker=CohereReranker(model="rerank-v3.5"))
    assert "language model" in store.search("tools goal", limit=1)[0].content


def tool_output(request: dict[str, Any], name: str) -> str:
    """What the request hands back to the model for its call of the tool ``name``."""
    calls = {item["call_id"]: item["name"] for item in request["input"] if item.get("type") == "function_call"}
    return next(item["output"] for item in request["input"]
                if item.get("type") == "function_call_output" and calls[item["call_id"]] == name)
