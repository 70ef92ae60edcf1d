"""Record the embedding cache a retrieval suite needs (run once by hand, where the embedder is available).

    python -m evals.retrieval.record_cache fixtures/retrieval/scifact.yaml

Embeds the suite's corpus (as documents) and its queries (as queries) into the suite's
EmbeddingCache folder: vectors and hashes only, never the dataset's text.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from evals.retrieval.evaluate import build_embedder, load_dataset
from evals.retrieval.suite import load_suite

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("suite", type=Path)
    args = parser.parse_args()
    suite = load_suite(args.suite)
    if suite.embedder is None:
        raise SystemExit(f"{args.suite}: the suite has no embedder, nothing to record")
    dataset = load_dataset(suite, ROOT)
    cache = build_embedder(suite.embedder, ROOT, "record")
    started = time.perf_counter()
    cache.embed(list(dataset.corpus.values()), "document", progress=True)
    cache.embed(list(dataset.queries.values()), "query")
    print(f"{suite.name}: {len(dataset.corpus)} documents, {len(dataset.queries)} queries in "
          f"{time.perf_counter() - started:.0f} s; {cache.path} holds {len(cache)} vectors")


if __name__ == "__main__":
    main()
