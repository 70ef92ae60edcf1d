"""Run one retriever of a suite over its dataset and measure it."""

from __future__ import annotations

import importlib
import os
import statistics
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from rag_core.evals.retrieval.datasets import BEIR_HELP, Dataset, DatasetError, load_beir, load_judged_yaml
from rag_core.evals.retrieval.metrics import evaluate, per_query, ranked_runs, recall_curve, run_from_ranking
from rag_core.evals.retrieval.suite import EmbedderSpec, RetrieverSpec, SuiteSpec
from rag_core import Document
from rag_core.embedder import EmbeddingCache


class DatasetUnavailable(Exception):
    """The suite's dataset is not on this machine (e.g. a BEIR download); the message says how to get it."""


@dataclass
class RetrieverResult:
    suite: str
    retriever: str
    metrics: dict[str, float]
    per_query: dict[str, dict[str, float]]  # metric -> query -> value
    recall_curve: list[float]  # recall@k for k = 1..depth
    index_seconds: float
    query_ms_p50: float
    query_ms_p95: float
    rankings: dict[str, list[str]] = field(default_factory=dict)
    empty_documents: int = 0  # documents with no text: not indexed, still relevant where judged so
    qrels: dict[str, dict[str, int]] = field(default_factory=dict)  # the judgements it was scored on
    background_threads: int = 0  # threads running other retrievers in its process while it was timed
    notes: list[str] = field(default_factory=list)  # worth a warning in its test (a stale cassette), not a failure

    def summary(self) -> dict[str, Any]:
        return {
            "suite": self.suite, "retriever": self.retriever, "metrics": self.metrics,
            "empty_documents": self.empty_documents,
            "per_query": self.per_query, "recall_curve": self.recall_curve,
            "index_seconds": self.index_seconds, "query_ms_p50": self.query_ms_p50, "query_ms_p95": self.query_ms_p95,
            "rankings": self.rankings, "qrels": self.qrels, "background_threads": self.background_threads,
        }


def load_dataset(suite: SuiteSpec, root: Path, texts: bool = True) -> Dataset:
    """The suite's dataset, checked whole; without ``texts``, its corpus maps ids to "" (for a
    caller that reads the texts a batch at a time afterwards, from ``corpus_file``)."""
    spec = suite.dataset
    try:
        if spec.beir is not None:
            folder = (root / spec.beir).resolve()
            if not folder.is_dir():
                raise DatasetUnavailable(f"suite {suite.name}: the BEIR dataset folder {folder} is not here. {BEIR_HELP}")
            return load_beir(folder, spec.split, texts=texts)
        return load_judged_yaml(root / str(spec.judged), texts=texts)
    except DatasetError as exc:
        raise DatasetError(f"suite {suite.name}: {exc}") from exc


def build_embedder(spec: EmbedderSpec, root: Path, mode: str) -> EmbeddingCache:
    from rag_core.embedder import CohereEmbedder, LocalEmbedder, OpenAIEmbedder

    options: dict[str, Any] = {}
    if spec.id:
        options["id"] = spec.id
    if spec.dimensions:
        options["dimensions"] = spec.dimensions
    inner = {"local": LocalEmbedder, "openai": OpenAIEmbedder, "cohere": CohereEmbedder}[spec.kind](**options)
    from rag_core.evals.atomic import screen

    return EmbeddingCache(inner, root / spec.cache, mode=mode, screen=screen)  # type: ignore[arg-type]


@dataclass
class SharedTables:
    """PgVector tables one suite's retrievers share. A PostgreSQL table's rows and indexes depend
    only on the corpus, the embedder and whether the vector search is exact; search type, fusion,
    BM25 parameters and reranker apply at query time. So retrievers that differ only in those
    query one table, loaded once (SciFact: three loads of 5,183 abstracts became one). Each
    reports the load's time as its indexing time, which is what indexing costs it."""

    tables: dict[bool, tuple[str, float]] = field(default_factory=dict)  # exact? -> (table, seconds to load)
    url: str | None = None
    # held while a table is looked up and, if new, loaded: a retriever running beside the one
    # loading (in a background thread) waits for the load instead of loading a second table
    lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    def drop_all(self) -> None:
        from rag_core.vectordb import PgVector

        for table, _ in self.tables.values():
            store = PgVector(table, db_url=self.url)  # type: ignore[arg-type]
            store.drop()
            store.close()
        self.tables.clear()


def build_store(retriever: RetrieverSpec, embedder: Any, corpus_size: int, pg_url: Callable[[], str],
                table: str | None = None) -> Any:
    from rag_core.vectordb import ChromaDb, InMemoryVectorDb, LanceDb, PgVector

    if retriever.store == "memory" and retriever.search_type == "keyword":
        # a keyword ranking reads no vector: without the embedder the memory store neither embeds
        # the corpus nor holds a matrix of it (PgVector tables serve every search type, so they
        # keep it; Chroma and LanceDB collections are made as they always were)
        embedder = None
    common = dict(embedder=embedder, search_type=retriever.search_type, hybrid_rrf_k=retriever.hybrid_rrf_k,
                  reranker=_reranker(retriever.reranker), candidate_depth=retriever.candidate_depth)
    common |= {f"bm25_{p}": value for p, value in (("k1", retriever.bm25_k1), ("b", retriever.bm25_b)) if value is not None}
    if retriever.store == "memory":
        return InMemoryVectorDb(**common)
    if retriever.store == "chroma":
        # exhaustive HNSW search: with ef_search at least the corpus size, a query visits every
        # document the graph reaches. The graph is built with Chroma's default ef_construction:
        # building it at the corpus size too cost a third of the ingest (SciFact: 11.5 -> 8.3 s)
        # and guarantees no more, since no HNSW build promises that every node is reachable. An
        # `identical` group with the memory store is what proves a suite's Chroma search exact.
        ef = max(corpus_size, 100) if retriever.exact else 100
        return ChromaDb(f"eval-{_unique()}", **common, ef_search=ef)
    if retriever.store == "lancedb":
        import tempfile

        return LanceDb(uri=tempfile.mkdtemp(prefix="rag-core-eval-"), table_name="eval", **common)
    return PgVector(table or f"eval_{_unique()}", db_url=pg_url(), vector_index=None if retriever.exact else "hnsw",
                    **common)


def _unique() -> str:
    """A name no other store of this process or another has: from the OS, since a recorded
    retriever runs with uuid4 seeded (``harness/seeded_randomness.py``), the same in every run."""
    return os.urandom(6).hex()


def _reranker(target: str | None) -> Any:
    if target is None:
        return None
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)()


def _load(store: Any, batches: Iterator[list[Document]], suite: SuiteSpec, dataset: Dataset) -> float:
    """Insert the corpus; the seconds it took, with the first query (lazy index building counts as indexing)."""
    started = time.perf_counter()
    for documents in batches:
        if documents:
            store.insert(documents)
    store.rank(next(iter(dataset.queries.values())), suite.depth)
    return time.perf_counter() - started


@dataclass
class Rankings:
    """What a retriever returned for a suite's queries (ids, best first), and what it cost."""

    by_query: dict[str, list[str]]
    query_ms: list[float] = field(default_factory=list)  # one per query, in the order asked
    index_seconds: float = 0.0
    empty_documents: int = 0  # documents with no text: not indexed, still relevant where judged so


def indexable(dataset: Dataset) -> list[Document]:
    """The corpus as the stores index it. Real corpora hold documents with no text (BEIR: empty
    title and text), sometimes judged relevant: no store can index them, so they stay out and
    count as relevant-but-unretrievable."""
    return [Document(content=text, id=doc_id) for doc_id, text in dataset.texts() if text.strip()]


# documents a memory store is handed at once: a batch's Documents and the cache's matrix of
# their vectors are dropped once the store holds them, so ingesting a corpus never holds a
# second copy of all its vectors (100k × 384 float32 is 150 MB; as lists of floats it was 1.2 GB)
MEMORY_BATCH = 4096


def indexable_batches(dataset: Dataset, size: int) -> Iterator[list[Document]]:
    """``indexable(dataset)`` made a batch at a time (a dataset read without its texts reads them
    from its file as it goes: the store's copy is then the only one held)."""
    batch: list[Document] = []
    for doc_id, text in dataset.texts():
        if text.strip():
            batch.append(Document(content=text, id=doc_id))
            if len(batch) == size:
                yield batch
                batch = []
    if batch:
        yield batch


def run_retriever(suite: SuiteSpec, retriever: RetrieverSpec, dataset: Dataset, embedder: Any,
                  pg_url: Callable[[], str], shared: SharedTables | None = None) -> RetrieverResult:
    """A built-in store's result."""
    return score(suite, retriever.name, dataset, rank_built_in(suite, retriever, dataset, embedder, pg_url, shared))


def _batches(retriever: RetrieverSpec, dataset: Dataset) -> Iterator[list[Document]]:
    """The corpus as a store takes it: a memory store a batch at a time; the others in one insert,
    as their indexes and transactions were built and measured (one load, one HNSW build)."""
    if retriever.store == "memory":
        return indexable_batches(dataset, MEMORY_BATCH)
    return iter([indexable(dataset)])


def rank_built_in(suite: SuiteSpec, retriever: RetrieverSpec, dataset: Dataset, embedder: Any,
                  pg_url: Callable[[], str], shared: SharedTables | None = None) -> Rankings:
    indexed = len(dataset.corpus) - dataset.blank
    sharing = shared if retriever.store == "pgvector" else None  # only PgVector tables are shared
    if sharing is None:
        store = build_store(retriever, embedder, indexed, pg_url)
        index_seconds = _load(store, _batches(retriever, dataset), suite, dataset)
    else:
        with sharing.lock:
            reused = sharing.tables.get(retriever.exact)
            store = build_store(retriever, embedder, indexed, pg_url, table=reused[0] if reused else None)
            if reused is not None:
                index_seconds = reused[1]
            else:
                index_seconds = _load(store, _batches(retriever, dataset), suite, dataset)
                sharing.tables[retriever.exact] = (store.table_name, index_seconds)
                sharing.url = store.db_url
    rankings: dict[str, list[str]] = {}
    timings = []
    for query_id, text in dataset.queries.items():
        started = time.perf_counter()
        if retriever.reranker is None:
            ranking = [doc_id for doc_id, _ in store.rank(text, suite.depth)][: suite.depth]
        else:
            ranking = [d.id for d in store.search(text, suite.depth)]
        timings.append((time.perf_counter() - started) * 1000)
        rankings[query_id] = ranking
    if retriever.store == "pgvector":
        if sharing is None:
            store.drop()
        store.close()
    elif retriever.store == "lancedb":
        import shutil

        shutil.rmtree(store.uri, ignore_errors=True)
    return Rankings(rankings, timings, index_seconds, len(dataset.corpus) - indexed)


def rank_target(suite: SuiteSpec, retriever: RetrieverSpec, dataset: Dataset, context: Any) -> Rankings:
    """A retriever target's rankings: its factory called, the corpus indexed (every document as
    the dataset holds it, those with no text too), every query searched."""
    from rag_core.evals.retrieval.retriever_targets import RetrieverTargetError, load_target
    from rag_core.evals.retrieval.unmatched import documents_problem, unmatched_documents

    where = f"suite {suite.name}, retriever {retriever.name}"
    started = time.perf_counter()
    target = load_target(str(retriever.target), retriever.id_field, retriever.settings, where, context)
    target.load_corpus(list(dataset.records()))
    index_seconds = time.perf_counter() - started
    rankings: dict[str, list[str]] = {}
    timings = []
    for query_id, text in dataset.queries.items():
        started = time.perf_counter()
        rankings[query_id] = target.ranking(query_id, text, suite.depth)
        timings.append((time.perf_counter() - started) * 1000)
    # before a recording keeps them: rankings of ids the corpus does not hold are a mistake to fix
    problem = documents_problem(unmatched_documents(rankings, dataset.corpus), suite.allow_unmatched.documents,
                                "search() returned")
    if problem:
        raise RetrieverTargetError(f"{where}: {problem}")
    return Rankings(rankings, timings, index_seconds)


def rank_run_file(suite: SuiteSpec, retriever: RetrieverSpec, dataset: Dataset, root: Path) -> Rankings:
    """A run file's rankings, each cut at the suite's depth as every retriever's is; RunFileError
    when more of its queries or document ids than the suite allows match nothing in the dataset."""
    from rag_core.evals.common.paths import shown
    from rag_core.evals.retrieval.run_files import RunFileError, read_run
    from rag_core.evals.retrieval.unmatched import (documents_problem, queries_problem, unmatched_documents,
                                                    unmatched_queries)

    path = root / str(retriever.run)
    rankings = {query: ranking[: suite.depth] for query, ranking in read_run(path).items()}
    allowed = suite.allow_unmatched
    problem = (queries_problem(unmatched_queries(list(rankings), dataset.qrels), allowed.queries)
               or documents_problem(unmatched_documents(rankings, dataset.corpus), allowed.documents,
                                    "the run file ranks"))
    if problem:
        raise RunFileError(f"suite {suite.name}, retriever {retriever.name}: {shown(path)}: {problem}")
    return Rankings(rankings)


def score(suite: SuiteSpec, name: str, dataset: Dataset, ranked: Rankings) -> RetrieverResult:
    """The suite's metrics of these rankings: each scored in its own order, whatever its scores."""
    run = {q: run_from_ranking(r) for q, r in ranked.by_query.items()}
    timings = sorted(ranked.query_ms) or [0.0]
    ordered = ranked_runs(dataset.qrels, run)
    return RetrieverResult(
        suite=suite.name,
        retriever=name,
        metrics=evaluate(suite.metrics, dataset.qrels, run, ordered),
        per_query={m: per_query(m, dataset.qrels, run, ordered) for m in suite.metrics},
        recall_curve=recall_curve(dataset.qrels, run, suite.depth, ordered),
        index_seconds=ranked.index_seconds,
        query_ms_p50=statistics.median(timings),
        query_ms_p95=timings[int(0.95 * (len(timings) - 1))],
        # only judged queries: a run file may rank others, which nothing scores
        rankings={q: r for q, r in ranked.by_query.items() if q in dataset.qrels},
        empty_documents=ranked.empty_documents,
        qrels={q: dict(rel) for q, rel in dataset.qrels.items()},
    )
