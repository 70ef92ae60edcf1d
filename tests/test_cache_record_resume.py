"""`rag-core cache record` killed part-way resumes: the chunks it finished are kept and skipped, and
the cache it ends with is, file for file and byte for byte, the one an uninterrupted run writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_core.embedder import EmbeddingCache, cache_files
from rag_core.evals.retrieval import record_cache
from tests.fakes import HashEmbedder
from tests.processes import await_ready, spawn

CHUNK = 40
DOCUMENTS = 7 * CHUNK + 13  # eight chunks of documents, the last one short

RECORDER = f"""
import sys
from pathlib import Path
from rag_core.embedder import EmbeddingCache, cache_files
from rag_core.evals.retrieval import record_cache
from tests.fakes import HashEmbedder

cache_files.CHUNK_ROWS = {CHUNK}

embedder = HashEmbedder()
embed_batch = embedder._embed_batch

def announcing(texts, input_type):
    print(f"embedding {{len(embedder.calls)}}", flush=True)  # every chunk before this one is saved
    sys.stdin.readline()  # and waits for the word: a kill lands here, not a chunk or two later
    return embed_batch(texts, input_type)

embedder._embed_batch = announcing
record_cache.build_embedder = lambda spec, root, mode: EmbeddingCache(embedder, root / spec.cache, mode=mode)
print("ready", flush=True)
print(record_cache.record(Path(sys.argv[1]), Path(sys.argv[2])), flush=True)
"""


def project(root: Path) -> Path:
    (root / "data").mkdir(parents=True)
    with open(root / "data" / "corpus.jsonl", "w", encoding="utf-8") as corpus:
        for n in range(DOCUMENTS):
            corpus.write(json.dumps({"_id": f"d{n}", "title": f"dish {n}", "text": f"fry garlic {n} with chili {n % 7}"}) + "\n")
    (root / "data" / "queries.yaml").write_text(
        "corpus: corpus.jsonl\nqueries:\n  - {id: q1, text: garlic chili, relevant: [d1]}\n"
        "  - {id: q2, text: dish 5, relevant: [d5]}\n")
    (root / "suite.yaml").write_text(
        "name: resume\ndataset: {judged: data/queries.yaml}\n"
        "embedder: {kind: openai, id: text-embedding-3-small, cache: cache}\n"
        "metrics: [ndcg@10]\nretrievers: [{name: dense, search_type: vector}]\n")
    return root


def record_here(root: Path, monkeypatch) -> HashEmbedder:
    embedder = HashEmbedder()
    monkeypatch.setattr(cache_files, "CHUNK_ROWS", CHUNK)
    monkeypatch.setattr(record_cache, "build_embedder",
                        lambda spec, where, mode: EmbeddingCache(embedder, where / spec.cache, mode=mode))
    record_cache.record(root / "suite.yaml", root)
    return embedder


def contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("chunks_done", [1, 4, 7])
def test_a_recording_killed_after_some_chunks_resumes_where_it_stopped_and_ends_as_an_uninterrupted_one(
        tmp_path, monkeypatch, chunks_done):
    whole = project(tmp_path / "whole")
    record_here(whole, monkeypatch)

    killed = project(tmp_path / "killed")
    writer = spawn(RECORDER, str(killed / "suite.yaml"), str(killed))
    await_ready(writer)
    for line in writer.stdout:  # the writer is killed as it starts embedding chunk number chunks_done
        if line.strip() == f"embedding {chunks_done}":
            writer.kill()
            break
        if line.startswith("embedding"):
            writer.stdin.write("go\n")
            writer.stdin.flush()
    assert writer.wait(60) == -9, writer.stderr.read()
    saved = sum(c["count"] for c in json.loads((killed / "cache" / "meta.json").read_text())["chunks"])
    assert saved == chunks_done * CHUNK  # the chunks it finished, nothing of the one it was on

    embedder = record_here(killed, monkeypatch)
    assert sum(n for n, _ in embedder.calls) == DOCUMENTS + 2 - saved  # the finished chunks were skipped
    assert contents(killed / "cache") == contents(whole / "cache")


def test_a_recording_killed_while_writing_a_chunk_leaves_a_readable_cache_and_resumes(tmp_path, monkeypatch):
    """Killed at every point of a save in turn (as the chunk's files, then the manifest, are written):
    the cache opens with the chunks the last manifest names, and a second run completes it."""
    whole = project(tmp_path / "whole")
    record_here(whole, monkeypatch)
    write_atomic = cache_files.write_atomic
    for nth_write in range(1, 4):  # a chunk's vectors, its keys, the manifest
        root = project(tmp_path / f"killed-{nth_write}")
        writes = []

        def dying(path, data, nth_write=nth_write):
            writes.append(path)
            if len(writes) == 3 + nth_write:  # the second chunk's save (the first took three writes)
                half = (data.encode() if isinstance(data, str) else data)[: len(data) // 2]
                (path.parent / f".{path.name}.abc.tmp").write_bytes(half)  # as a kill leaves it
                raise KeyboardInterrupt
            write_atomic(path, data)

        monkeypatch.setattr(cache_files, "write_atomic", dying)
        with pytest.raises(KeyboardInterrupt):
            record_here(root, monkeypatch)
        monkeypatch.setattr(cache_files, "write_atomic", write_atomic)
        assert len(EmbeddingCache(HashEmbedder(), root / "cache", mode="replay")) == CHUNK  # the first chunk
        record_here(root, monkeypatch)
        assert contents(root / "cache") == contents(whole / "cache"), nth_write
