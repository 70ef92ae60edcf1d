"""Record the embedding cache a retrieval suite needs (once, by hand, where the embedder is available).

    rag-core cache record fixtures/retrieval/scifact.yaml

Embeds the suite's corpus (as documents) and its queries (as queries) into the suite's
EmbeddingCache folder: vectors and hashes only, never the dataset's text.

Embedding is the expensive part (a SciFact-sized corpus takes many seconds on the local model,
and a provider bills it), so everything that can be checked is checked before it: the suite
parses, its corpus and queries read, and the cache folder can be written.

The corpus is then read again and embedded a chunk of the cache at a time (``CHUNK_ROWS``
texts), each chunk saved before the next is read: memory holds one chunk's texts and vectors,
whatever the corpus's size, and a recording killed part-way keeps the chunks it finished. Run
again, it skips them (their texts are in the cache) and ends with the files an uninterrupted
run writes.
"""

from __future__ import annotations

import itertools
import tempfile
import time
from pathlib import Path
from typing import Iterator

from rag_core.embedder import cache_files
from rag_core.evals.common.paths import shown
from rag_core.evals.retrieval.datasets import iter_corpus
from rag_core.evals.retrieval.evaluate import build_embedder, load_dataset
from rag_core.evals.retrieval.suite import SuiteFileError, load_suite
from rag_core.progress import progress_bar


def record(suite_file: Path, root: Path) -> str:
    """Fill the suite's cache; returns what was done, one line. Paths in the suite are relative to ``root``."""
    suite = load_suite(suite_file)
    if suite.embedder is None:
        raise SuiteFileError(f"{shown(suite_file)}: the suite has no embedder, so there is no embedding cache to record")
    dataset = load_dataset(suite, root, texts=False)  # every file checked; the texts are read below, a chunk at a time
    documents, queries, corpus_file = len(dataset.corpus), list(dataset.queries.values()), dataset.corpus_file
    del dataset  # its ids are not needed again
    problem = unwritable_folder_problem(root / suite.embedder.cache)
    if problem:
        raise SuiteFileError(f"{shown(suite_file)}: embedder.cache: {problem}; nothing was embedded")
    cache = build_embedder(suite.embedder, root, "record")
    cache.tidy()  # what a recording killed part-way left half-written
    started = time.perf_counter()
    embedded = 0
    chunks = _chunks(text for _, text in iter_corpus(corpus_file, unique_ids=False))  # type: ignore[arg-type]
    for texts in progress_bar(chunks, desc=f"embedding with {cache.id}", unit="chunk"):
        embedded += cache.fill(texts, "document")
    embedded += cache.fill(queries, "query")
    return (f"{suite.name}: {documents} documents, {len(queries)} queries in "
            f"{time.perf_counter() - started:.0f} s ({embedded} embedded, the rest recorded before); "
            f"{cache.path} holds {len(cache)} vectors")


def _chunks(texts: Iterator[str]) -> Iterator[list[str]]:
    """The texts, CHUNK_ROWS at a time: with nothing recorded yet, one chunk of the cache each."""
    while chunk := list(itertools.islice(texts, cache_files.CHUNK_ROWS)):
        yield chunk


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
