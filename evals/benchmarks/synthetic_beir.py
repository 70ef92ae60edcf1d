"""A synthetic BEIR dataset of any size drawn from SciFact, with a seeded embedding cache for it.

For the scale benchmarks (``bench_scale --replay`` and ``--record``): documents whose words are
drawn from SciFact's word frequencies (split on white space, punctuation and case as SciFact has
them) and whose lengths are drawn from SciFact's document lengths (times ``text_scale``, for
corpora of longer texts); queries of 12 words, each
judged relevant to one document; a suite of the memory store's three retrievers over them; and
that suite's embedding cache filled with seeded random unit float32 vectors (no model runs).

The cache is written in the cache's first on-disk layout (``keys.txt``, ``vectors.npy``, no
``files`` in the manifest), which every version of rag-core reads: the same folder measures the
code before a change and after it. Everything is written a batch at a time, so building a
million documents needs little memory.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterator

DIMENSIONS = 384
QUERY_WORDS = 12
BATCH = 10_000
CACHE_KEY = "LocalEmbedder:all-MiniLM-L6-v2:384"  # what the suite's embedder (kind: local) keys its vectors by

SUITE = """\
name: synthetic
description: {size} synthetic documents drawn from SciFact's vocabulary, the memory store's retrievers.
dataset: {{beir: data, split: test}}
embedder: {{kind: local, id: all-MiniLM-L6-v2, cache: cache}}
depth: 100
metrics: [ndcg@10, recall@100]
retrievers:
  - {{name: bm25, store: memory, search_type: keyword}}
  - {{name: dense, store: memory, search_type: vector}}
  - {{name: hybrid, store: memory, search_type: hybrid}}
"""


class Vocabulary:
    """SciFact's words with their frequencies, and its document lengths in words."""

    def __init__(self, scifact: Path) -> None:
        import numpy as np

        counts: dict[str, int] = {}
        lengths = []
        with open(scifact / "corpus.jsonl", encoding="utf-8") as corpus:
            for line in corpus:
                row = json.loads(line)
                words = f"{row.get('title') or ''} {row.get('text') or ''}".split()
                lengths.append(len(words))
                for word in words:
                    counts[word] = counts.get(word, 0) + 1
        self.words = np.array(sorted(counts), dtype=object)
        frequencies = np.array([counts[w] for w in self.words.tolist()], dtype=np.float64)
        self.cumulative = np.cumsum(frequencies / frequencies.sum())
        self.lengths = np.array([n for n in lengths if n], dtype=np.int64)

    def texts(self, generator: Any, lengths: Any) -> list[str]:
        """One text per length, each word drawn by frequency."""
        import numpy as np

        drawn = np.searchsorted(self.cumulative, generator.random(int(lengths.sum())), side="right")
        words = self.words[np.minimum(drawn, len(self.words) - 1)].tolist()
        texts, start = [], 0
        for length in lengths.tolist():
            texts.append(" ".join(words[start:start + length]))
            start += length
        return texts


def documents(vocabulary: Vocabulary, size: int, seed: int, text_scale: int = 1) -> Iterator[tuple[str, str]]:
    """(id, text) of ``size`` documents, the same for the same seed; ``text_scale`` times
    SciFact's lengths."""
    import numpy as np

    generator = np.random.default_rng(seed)
    for start in range(0, size, BATCH):
        count = min(BATCH, size - start)
        lengths = generator.choice(vocabulary.lengths, size=count) * text_scale
        for offset, text in enumerate(vocabulary.texts(generator, lengths)):
            yield f"d{start + offset}", text


def cache_key(text: str, input_type: str) -> str:
    """The key EmbeddingCache stores a vector under (rag_core/embedder/cache.py: ``key``)."""
    return hashlib.sha256(f"{CACHE_KEY}\x00{input_type}\x00{text}".encode("utf-8")).hexdigest()[:32]


def build(folder: Path, size: int, queries: int, scifact: Path, seed: int = 0, cache: bool = True,
          text_scale: int = 1) -> Path:
    """Write the dataset (``folder/data``), the suite (``folder/suite.yaml``) and, with ``cache``,
    its embedding cache (``folder/cache``); returns the suite file. Nothing is rewritten when the
    folder already holds a complete build of the same size and seed."""
    import numpy as np

    done = folder / "built.json"
    wanted: dict[str, Any] = {"size": size, "queries": queries, "seed": seed, "cache": cache}
    if text_scale != 1:  # a folder built before there was a scale has none
        wanted["text_scale"] = text_scale
    if done.exists() and json.loads(done.read_text()) in (wanted, {**wanted, "cache": True}):
        return folder / "suite.yaml"  # a build with its cache serves one asked for without
    vocabulary = Vocabulary(scifact)
    data = folder / "data"
    (data / "qrels").mkdir(parents=True, exist_ok=True)
    generator = np.random.default_rng(seed + 1)
    query_texts = vocabulary.texts(generator, np.full(queries, QUERY_WORDS))
    judged = generator.integers(0, size, size=queries).tolist()
    with open(data / "queries.jsonl", "w", encoding="utf-8") as out:
        for number, text in enumerate(query_texts):
            out.write(json.dumps({"_id": f"q{number}", "text": text}) + "\n")
    with open(data / "qrels" / "test.tsv", "w", encoding="utf-8") as out:
        out.write("query-id\tcorpus-id\tscore\n")
        out.writelines(f"q{number}\td{doc}\t1\n" for number, doc in enumerate(judged))
    keys = open(folder / "keys.txt.partial", "w", encoding="ascii") if cache else None
    with open(data / "corpus.jsonl", "w", encoding="utf-8") as out:
        for doc_id, text in documents(vocabulary, size, seed, text_scale):
            out.write(json.dumps({"_id": doc_id, "title": "", "text": text}) + "\n")
            if keys:
                keys.write(cache_key(text, "document") + "\n")
    if keys:
        keys.writelines(cache_key(text, "query") + "\n" for text in query_texts)
        keys.close()
        _write_vectors(folder / "cache", folder / "keys.txt.partial", size + queries, seed)
    (folder / "suite.yaml").write_text(SUITE.format(size=size))
    done.write_text(json.dumps(wanted))
    return folder / "suite.yaml"


def _write_vectors(cache: Path, keys: Path, count: int, seed: int) -> None:
    """The cache in its first layout: seeded unit vectors, one per key line, written a batch at a time."""
    import numpy as np

    cache.mkdir(parents=True, exist_ok=True)
    vectors = np.lib.format.open_memmap(cache / "vectors.npy", mode="w+", dtype=np.float32, shape=(count, DIMENSIONS))
    generator = np.random.default_rng(seed + 2)
    for start in range(0, count, BATCH):
        rows = generator.standard_normal((min(BATCH, count - start), DIMENSIONS), dtype=np.float32)
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        vectors[start:start + len(rows)] = rows
    vectors.flush()
    del vectors
    keys.replace(cache / "keys.txt")
    meta = {"format": 1, "embedder": CACHE_KEY, "dimensions": DIMENSIONS, "dtype": "float32", "count": count}
    (cache / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
