"""Replaying a retrieval suite from its embedding cache: vectors stay float32 arrays from the cache
to the store (no Python float is made per value), `Document.embedding` still reads as a list, and
what a replay holds per document beside its vectors stays within 4 KB."""

from __future__ import annotations

import sys
import tracemalloc
from collections import OrderedDict

import numpy as np
import pytest

from rag_core import Document
from rag_core.document import embedding_of
from rag_core.embedder import EmbeddingCache
from rag_core.evals.retrieval import evaluate
from rag_core.evals.retrieval.datasets import Dataset
from rag_core.evals.retrieval.evaluate import build_store, run_retriever
from rag_core.evals.retrieval.suite import SuiteSpec
from rag_core.vectordb import InMemoryVectorDb, bm25_build, bm25_index, vector_matrix
from tests.fakes import HashEmbedder

WORDS = ("braise", "lamb", "shoulder", "with", "garlic", "rosemary", "slow", "oven", "hours", "stock", "onion",
         "carrot", "celery", "wine", "red", "thyme", "bay", "leaf", "pepper", "salt", "tomato", "paste")


def corpus(size: int) -> dict[str, str]:
    generator = np.random.default_rng(size)
    return {f"d{n}": f"dish {n} " + " ".join(generator.choice(WORDS, size=40).tolist()) for n in range(size)}


def replay_cache(tmp_path, texts: list[str], queries: list[str] = (), dimensions: int = 32) -> EmbeddingCache:
    recorder = EmbeddingCache(HashEmbedder(dimensions), tmp_path / "cache", mode="record")
    recorder.fill(texts, "document")
    recorder.fill(queries, "query")
    return EmbeddingCache(HashEmbedder(dimensions), tmp_path / "cache", mode="replay")


class CountingToList:
    """Counts, while active, the calls of ``tolist`` on arrays of floats: numpy's conversion of
    float32 values into Python floats (one object of 24 bytes per value, in a list)."""

    def __init__(self, dtype: str | None = None) -> None:
        self.calls = 0
        self.dtype = dtype  # only arrays of this type (None: of any floats)

    def __call__(self, frame, event, arg) -> None:
        if event == "c_call" and getattr(arg, "__name__", "") == "tolist":
            dtype = getattr(getattr(arg, "__self__", None), "dtype", None)
            if getattr(dtype, "kind", "") == "f" and (self.dtype is None or dtype == self.dtype):
                self.calls += 1

    def __enter__(self) -> CountingToList:
        sys.setprofile(self)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(None)


def test_documents_ingested_from_a_cache_keep_float32_rows_and_no_float_list_is_made(tmp_path):
    texts = list(corpus(300).values())
    cache = replay_cache(tmp_path, texts, ["braise lamb"])
    documents = [Document(content=text, id=f"d{n}") for n, text in enumerate(texts)]
    store = InMemoryVectorDb(embedder=cache, search_type="vector")
    with CountingToList() as counted:
        store.insert(documents)
    assert counted.calls == 0  # it was one per document: 384 Python floats each, then converted back
    rows = [embedding_of(d) for d in documents]
    assert all(isinstance(r, np.ndarray) and r.dtype == np.float32 and not r.flags.writeable for r in rows)
    assert rows[0].base is not None  # a view of the batch's matrix, not a copy per document
    # what a caller reads is still a list of floats, the cache's values
    assert documents[7].embedding == cache.embed([texts[7]])[0] and isinstance(documents[7].embedding, list)
    # and the store ranks as one given those lists
    lists = InMemoryVectorDb(embedder=cache, search_type="vector")
    lists.insert([Document(content=t, id=f"d{n}", embedding=cache.embed([t])[0]) for n, t in enumerate(texts)])
    assert store.rank("braise lamb", 20) == lists.rank("braise lamb", 20)


def test_a_query_searched_from_a_cache_reaches_the_matrix_as_its_float32_row(tmp_path):
    """The query's vector went from the cache's float32 row to a list of 384 Python floats and
    back into float32 for the product (a tenth of a search of 5k documents); the results are
    those of the list, to the last bit of every score."""
    texts = list(corpus(300).values())
    cache = replay_cache(tmp_path, texts, ["braise lamb"])
    store = InMemoryVectorDb(embedder=cache, search_type="vector")
    store.insert([Document(content=text, id=f"d{n}") for n, text in enumerate(texts)])
    store.search("braise lamb", 10)  # first calls' imports
    with CountingToList(dtype="float32") as counted:
        found = store.search("braise lamb", 10)
        ranking = store.rank("braise lamb", 30)
    assert counted.calls == 0
    listed = store._vectors.rank(cache.embed(["braise lamb"], "query")[0], 30)  # the query as a list
    assert ranking == listed and [d.id for d in found] == [i for i, _ in listed[:10]]


def test_a_keyword_retriever_on_the_memory_store_embeds_nothing(tmp_path):
    """A bm25 retriever's store was given the suite's embedder: it embedded the whole corpus (and,
    at 100k documents, spent 8 s turning the cache's vectors into floats) to rank by keywords."""
    suite = SuiteSpec.model_validate({"name": "s", "dataset": {"judged": "q.yaml"}, "metrics": ["ndcg@10"],
                                      "embedder": {"kind": "openai", "cache": "c"},
                                      "retrievers": [{"name": "bm25", "search_type": "keyword"},
                                                     {"name": "hybrid", "search_type": "hybrid"}]})
    cache = replay_cache(tmp_path, ["x"])
    assert build_store(suite.retrievers[0], cache, 1, lambda: "").embedder is None
    assert build_store(suite.retrievers[1], cache, 1, lambda: "").embedder is cache


@pytest.mark.parametrize("search_type", ["keyword", "vector", "hybrid"])
def test_a_suite_replay_holds_at_most_4_kb_per_document_beside_its_vectors(tmp_path, monkeypatch, search_type):
    """What a replay allocates beyond the store's float32 vectors: it was 12 KB and more per
    document here (a list of 384 Python floats each, token lists, bm25s's sort). Batches are
    made small, so that 3,000 documents stand for a corpus many batches long."""
    monkeypatch.setattr(evaluate, "MEMORY_BATCH", 300)
    monkeypatch.setattr(bm25_build, "TOKENIZE_BATCH", 300, raising=False)
    monkeypatch.setattr(vector_matrix, "BLOCK_ROWS", 512, raising=False)
    monkeypatch.setattr(bm25_index, "_BUILT", OrderedDict())  # each builds its own keyword index
    documents = corpus(3000)
    queries = {"q1": "braise lamb shoulder", "q2": "red wine thyme"}
    cache = replay_cache(tmp_path, list(documents.values()), list(queries.values()), dimensions=384)
    dataset = Dataset("memory", documents, queries, {"q1": {"d1": 1}, "q2": {"d2": 1}})
    suite = SuiteSpec.model_validate({"name": "memory", "dataset": {"judged": "q.yaml"}, "metrics": ["ndcg@10"],
                                      "embedder": {"kind": "openai", "cache": "c"}, "depth": 10,
                                      "retrievers": [{"name": "r", "search_type": search_type}]})
    warm = InMemoryVectorDb()  # bm25s and the stemmer imported before measuring
    warm.insert([Document(content="warm the tokenizer up")])
    warm.search("tokenizer", 1)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        run_retriever(suite, suite.retrievers[0], dataset, cache, lambda: "")
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    vectors = 384 * 4 * len(documents) if search_type != "keyword" else 0
    beside = (peak - vectors) / len(documents)
    print(f"{search_type}: {beside / 1024:.2f} KB per document beside the vectors")
    assert beside < 4096, f"{beside / 1024:.1f} KB per document beside the vectors"
