"""Lone surrogates (text that is not valid Unicode) get one policy wherever text enters rag_core:
replaced by U+FFFD with a warning naming the field; runs, stores and sessions carry on."""

from __future__ import annotations

import pytest

from rag_core import Document, Knowledge
from rag_core.db import SqliteDb
from rag_core.models import OpenAIResponses
from rag_core.text import SurrogatesReplaced, without_surrogates
from rag_core.vectordb import ChromaDb
from tests.conftest import scripted_agent
from tests.fakes import HashEmbedder

BAD = "caf\udce9 menu"


def test_pairs_are_joined_and_lone_surrogates_replaced():
    assert without_surrogates("smile \ud83d\ude00", "x") == "smile \U0001f600"
    with pytest.warns(SurrogatesReplaced, match="the field: 1 lone surrogate"):
        assert without_surrogates(BAD, "the field") == "caf\ufffd menu"


@pytest.mark.parametrize("store", ["memory", "chroma"])
def test_documents_are_stored_with_the_replacement(tmp_path, store):
    vector_db = ChromaDb("docs", path=str(tmp_path), persistent_client=True, embedder=HashEmbedder()) if store == "chroma" else None
    knowledge = Knowledge(vector_db=vector_db)
    with pytest.warns(SurrogatesReplaced, match="the text of document 'menu'"):
        assert knowledge.insert(BAD, name="menu", metadata={"note": "ol\udcc3"}) == 1
    [found] = knowledge.search("menu")
    assert found.content == "caf\ufffd menu" and found.meta_data["note"] == "ol\ufffd"


def test_a_tool_returning_a_lone_surrogate_does_not_end_the_run():
    def lookup(term: str) -> str:
        """Look a term up."""
        return BAD

    agent, provider = scripted_agent(OpenAIResponses, [{"tool_calls": [{"name": "lookup", "arguments": {"term": "x"}}]},
                                                       {"text": "Done."}], tools=[lookup])
    with pytest.warns(SurrogatesReplaced, match="the output of tool 'lookup'"):
        out = agent.run("hi")
    assert out.content == "Done." and provider.requests[1]["input"][-1]["output"] == "caf\ufffd menu"


def test_run_input_and_session_state_are_stored_with_the_replacement(tmp_path):
    db = SqliteDb(str(tmp_path / "agents.db"))
    agent, _ = scripted_agent(OpenAIResponses, [{"text": "ok"}], db=db, session_id="s", session_state={"note": BAD})
    with pytest.warns(SurrogatesReplaced):
        assert agent.run(BAD).content == "ok"
    assert db.load_session_state("s") == {"note": "caf\ufffd menu"}
    assert db.load_history("s", 1)[0].content == "caf\ufffd menu"


def test_documents_given_directly_to_a_store_are_repaired_before_hashing():
    from rag_core.vectordb import InMemoryVectorDb

    store = InMemoryVectorDb(search_type="keyword")
    with pytest.warns(SurrogatesReplaced):
        assert store.insert([Document(content=BAD)]) == 1
    assert store.insert([Document(content="caf\ufffd menu")]) == 0  # the same document, stored once
