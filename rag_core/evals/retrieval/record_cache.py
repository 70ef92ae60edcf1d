"""Record the embedding cache a retrieval suite needs (once, by hand, where the embedder is available).

    rag-core cache record fixtures/retrieval/scifact.yaml

Embeds the suite's corpus (as documents) and its queries (as queries) into the suite's
EmbeddingCache folder: vectors and hashes only, never the dataset's text.

Embedding is the expensive part (a SciFact-sized corpus takes many seconds on the local model,
and a provider bills it), so everything that can be checked is checked before it: the suite
parses, its corpus and queries read, and the cache folder can be written.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from rag_core.evals.harness.paths import shown
from rag_core.evals.retrieval.evaluate import build_embedder, load_dataset
from rag_core.evals.retrieval.suite import SuiteFileError, load_suite


def record(suite_file: Path, root: Path) -> str:
    """Fill the suite's cache; returns what was done, one line. Paths in the suite are relative to ``root``."""
    suite = load_suite(suite_file)
    if suite.embedder is None:
        raise SuiteFileError(f"{shown(suite_file)}: the suite has no embedder, so there is no embedding cache to record")
    dataset = load_dataset(suite, root)
    problem = unwritable_folder_problem(root / suite.embedder.cache)
    if problem:
        raise SuiteFileError(f"{shown(suite_file)}: embedder.cache: {problem}; nothing was embedded")
    cache = build_embedder(suite.embedder, root, "record")
    started = time.perf_counter()
    cache.embed(list(dataset.corpus.values()), "document", progress=True)
    cache.embed(list(dataset.queries.values()), "query")
    return (f"{suite.name}: {len(dataset.corpus)} documents, {len(dataset.queries)} queries in "
            f"{time.perf_counter() - started:.0f} s; {cache.path} holds {len(cache)} vectors")


def unwritable_folder_problem(folder: Path) -> str | None:
    """Why files cannot be written into ``folder``, found by trying, or None when they can.

    Nothing is created for the check: the folder may not exist yet (the cache creates it), so the
    probe goes to the nearest folder that does exist, where the cache's folders would be made."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        where = "" if existing == folder else f" (on the way to {shown(folder)})"
        return f"{shown(existing)} is a file, where a folder is needed{where}"
    try:
        with tempfile.NamedTemporaryFile(dir=existing, prefix=".rag-core-write-check-"):
            pass
    except OSError as exc:
        return f"{shown(folder)} cannot be written ({shown(existing)}: {exc.strerror or exc})"
    return None
