"""Record the embedding cache a retrieval suite needs (once, by hand, where the embedder is available).

    rag-core cache record fixtures/retrieval/scifact.yaml

Embeds the suite's corpus (as documents) and its queries (as queries) into the suite's
EmbeddingCache folder: vectors and hashes only, never the dataset's text.
"""

from __future__ import annotations

import time
from pathlib import Path

from rag_core.evals.retrieval.evaluate import build_embedder, load_dataset
from rag_core.evals.retrieval.suite import SuiteFileError, load_suite


def record(suite_file: Path, root: Path) -> str:
    """Fill the suite's cache; returns what was done, one line. Paths in the suite are relative to ``root``."""
    suite = load_suite(suite_file)
    if suite.embedder is None:
        raise SuiteFileError(f"{suite_file}: the suite has no embedder, so there is no embedding cache to record")
    dataset = load_dataset(suite, root)
    cache = build_embedder(suite.embedder, root, "record")
    started = time.perf_counter()
    cache.embed(list(dataset.corpus.values()), "document", progress=True)
    cache.embed(list(dataset.queries.values()), "query")
    return (f"{suite.name}: {len(dataset.corpus)} documents, {len(dataset.queries)} queries in "
            f"{time.perf_counter() - started:.0f} s; {cache.path} holds {len(cache)} vectors")
