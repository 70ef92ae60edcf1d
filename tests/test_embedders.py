from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import numpy as np
import pytest

from rag_core import Document
from rag_core.embedder import CohereEmbedder, EmbeddingCache, EmbeddingCacheMiss, LocalEmbedder, OpenAIEmbedder
from rag_core.errors import ModelProviderError, RagCoreError
from rag_core.reranker import CohereReranker
from tests.fakes import HashEmbedder
from tests.recordings import interactions, replay, response_json

SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "scifact"


def test_openai_embedder_parses_a_real_base64_batch():
    name = "openai/embeddings_text-embedding-3-small_base64_batch.yaml"
    request = json.loads(interactions(name)[0]["request"]["body"])
    embedder = OpenAIEmbedder(api_key="sk-test", max_retries=0)
    with replay(name):
        vectors = embedder.embed(request["input"])
    assert len(vectors) == len(request["input"]) == 2
    assert all(len(v) == 1536 for v in vectors)
    assert all(abs(np.linalg.norm(v) - 1) < 1e-3 for v in vectors)  # OpenAI embeddings are unit length


def test_openai_embedder_errors_are_provider_errors():
    embedder = OpenAIEmbedder(id="nonexistent", api_key="sk-test", max_retries=0)
    with replay("openai/embeddings_error_404_model_not_found.yaml"):
        with pytest.raises(ModelProviderError) as info:
            embedder.embed(["Hello, world!"])
    assert info.value.status_code == 404 and "does not exist" in info.value.provider_message


def test_cohere_embedder_parses_a_real_reply_and_sends_the_query_input_type():
    pytest.importorskip("cohere")
    name = "cohere/cohere_v2_embed_embed-v4.0_float.yaml"
    embedder = CohereEmbedder(api_key="co-test")
    with replay(name):
        vector = embedder.get_embedding("Hello, world!")
    assert vector == response_json(name)["embeddings"]["float"][0]
    assert json.loads(interactions(name)[0]["request"]["body"])["input_type"] == "search_query"


def test_cohere_reranker_orders_and_scores_a_real_reply():
    pytest.importorskip("cohere")
    docs = [Document(content="This is a test document.", id="a"), Document(content="Another test document.", id="b")]
    with replay("cohere/cohere_v2_rerank_rerank-v3.5.yaml"):
        ranked = CohereReranker(api_key="co-test", top_n=3).rerank("Test query", docs)
    assert [d.id for d in ranked] == ["a", "b"]
    assert [d.meta_data["reranking_score"] for d in ranked] == [0.10415817, 0.0872602]


def test_a_reranker_reorders_store_candidates():
    from rag_core.vectordb import InMemoryVectorDb

    class Reverse:
        def rerank(self, query, documents):
            return list(reversed(documents))

    store = InMemoryVectorDb(embedder=HashEmbedder(), search_type="vector", reranker=Reverse())
    store.insert([Document(content=f"rice {'rice ' * i}") for i in range(5)])
    plain = InMemoryVectorDb(embedder=HashEmbedder(), search_type="vector")
    plain.insert([Document(content=f"rice {'rice ' * i}") for i in range(5)])
    assert len(store.search("rice", 2)) == 2
    assert store.search("rice", 5) == list(reversed(plain.search("rice", 5)))


# ---------------------------------------------------------------- EmbeddingCache
def test_cache_records_then_replays_without_the_embedder(tmp_path):
    live = HashEmbedder()
    recorder = EmbeddingCache(live, tmp_path / "cache", mode="record")
    first = recorder.embed(["pad thai", "green curry", "pad thai"])
    assert live.calls == [(2, "document")]  # duplicates embedded once
    recorder.embed(["pad thai"], "query")
    assert live.calls[-1] == (1, "query")  # input type is part of the key

    unavailable = HashEmbedder()
    unavailable._embed_batch = lambda texts, input_type: pytest.fail("replay must not call the embedder")
    replayer = EmbeddingCache(unavailable, tmp_path / "cache", mode="replay")
    assert np.allclose(replayer.embed(["pad thai", "green curry", "pad thai"]), first)
    with pytest.raises(EmbeddingCacheMiss, match="1 of 1 document text"):
        replayer.embed(["never seen"])
    assert len(replayer) == 3
    stored = "".join(p.read_text() for p in (tmp_path / "cache").glob("keys*.txt"))
    assert "pad thai" not in stored and "curry" not in (tmp_path / "cache" / "meta.json").read_text()


def test_cache_auto_mode_replays_under_ci(tmp_path, monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert EmbeddingCache(HashEmbedder(), tmp_path / "c").mode == "replay"
    monkeypatch.delenv("CI")
    assert EmbeddingCache(HashEmbedder(), tmp_path / "c").mode == "record"


def test_a_corrupted_cache_is_a_clear_error(tmp_path):
    cache = EmbeddingCache(HashEmbedder(), tmp_path / "c", mode="record")
    cache.embed(["a", "b"])
    next((tmp_path / "c").glob("keys-*.txt")).write_text("onlyone\n")
    with pytest.raises(RagCoreError, match="inconsistent: 1 keys, 2 vectors"):
        EmbeddingCache(HashEmbedder(), tmp_path / "c")


def test_float16_cache(tmp_path):
    cache = EmbeddingCache(HashEmbedder(), tmp_path / "c", mode="record", dtype="float16")
    vector = cache.embed(["coconut soup"])[0]
    again = EmbeddingCache(HashEmbedder(), tmp_path / "c", mode="replay").embed(["coconut soup"])[0]
    assert np.load(next((tmp_path / "c").glob("vectors-*.npy"))).dtype == np.float16
    assert np.allclose(vector, again, atol=1e-2)


# ---------------------------------------------------------------- LocalEmbedder
needs_torch = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None and not os.environ.get("RAG_CORE_REQUIRE_LOCAL"),
    reason="the 'local' extra (torch, sentence-transformers) is not installed",
)


@needs_torch
def test_local_embedder_reproduces_the_reference_minilm_embeddings():
    reference = SCIFACT / "reference"
    if not reference.exists():
        pytest.skip("SciFact reference embeddings not found in ../shared")
    ids = json.loads((reference / "all-MiniLM-L6-v2_first64_docs.ids.json").read_text())
    expected = np.load(reference / "all-MiniLM-L6-v2_first64_docs.npy")
    texts: dict[str, str] = {}
    with open(SCIFACT / "corpus.jsonl", encoding="utf-8") as corpus:
        for line in corpus:
            doc = json.loads(line)
            if doc["_id"] in ids:
                texts[doc["_id"]] = doc["title"] + " " + doc["text"]
            if len(texts) == len(ids):
                break
    vectors = np.asarray(LocalEmbedder().embed([texts[i] for i in ids]))
    cosine = (vectors * expected).sum(axis=1) / np.linalg.norm(vectors, axis=1) / np.linalg.norm(expected, axis=1)
    assert cosine.min() >= 0.9999


@pytest.mark.parametrize("call", [
    lambda url: CohereEmbedder(api_key="co-test", base_url=url).get_embedding("pad thai"),
    lambda url: CohereReranker(api_key="co-test", base_url=url).rerank("pad thai", [Document(content="noodles")]),
], ids=["embed", "rerank"])
def test_an_unreachable_cohere_endpoint_is_a_provider_error_naming_the_url(call, monkeypatch):
    pytest.importorskip("cohere")
    # the SDK retries a refused connection twice with a backoff (about 3 s in all): the attempts
    # still happen, without the waits
    backoffs: list[int] = []
    monkeypatch.setattr("cohere.core.http_client._retry_timeout_from_retries",
                        lambda retries: backoffs.append(retries) or 0.0)
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    with pytest.raises(ModelProviderError, match=rf"ConnectError: .*\({url}/v2/(embed|rerank)\)"):
        call(url)
    assert backoffs == [0, 1]  # the error comes after the SDK's own retries, as without the stub
