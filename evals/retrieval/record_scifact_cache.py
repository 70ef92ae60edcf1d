"""Record the SciFact embedding cache with the local MiniLM model (run once, by hand).

    python -m evals.retrieval.record_scifact_cache [--dataset ../shared/datasets/scifact]

Writes vectors and hashes only (no dataset text) to cassettes/embeddings/scifact-minilm/.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from evals.retrieval.datasets import load_beir
from rag_core.embedder import EmbeddingCache, LocalEmbedder

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "cassettes" / "embeddings" / "scifact-minilm"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default=str(ROOT.parent / "shared" / "datasets" / "scifact"))
    args = parser.parse_args()
    cache = EmbeddingCache(LocalEmbedder(), CACHE, mode="record")
    for split in ("test",):
        dataset = load_beir(args.dataset, split)
        started = time.perf_counter()
        cache.embed(list(dataset.corpus.values()), "document", progress=True)
        cache.embed(list(dataset.queries.values()), "query")
        print(f"{split}: {len(dataset.corpus)} documents, {len(dataset.queries)} queries, "
              f"{time.perf_counter() - started:.0f} s; cache holds {len(cache)} vectors")


if __name__ == "__main__":
    main()
