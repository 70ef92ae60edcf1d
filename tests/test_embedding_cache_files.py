"""The embedding cache's files: chunks appended, never rewritten past the last one; caches of the
first layout read and extended; vectors handed over as float32 arrays."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rag_core.embedder import EmbeddingCache, cache_files, key_index
from rag_core.errors import RagCoreError
from tests.fakes import HashEmbedder


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(cache_files, "CHUNK_ROWS", 50)
    return 50


def files(folder) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_a_save_writes_the_new_rows_and_leaves_finished_chunks_alone(tmp_path, small_chunks):
    """Each save rewrote the whole cache (recording 20k texts a batch at a time wrote 2 GB); now a
    finished chunk's files are written once and never touched again."""
    folder = tmp_path / "cache"
    cache = EmbeddingCache(HashEmbedder(), folder, mode="record")
    cache.embed([f"recipe {i}" for i in range(120)])  # two full chunks and 20 rows
    before = files(folder)
    cache.embed([f"recipe {i}" for i in range(120, 200)])  # the short chunk is completed, one more started
    after = files(folder)
    meta = json.loads(after["meta.json"])
    assert [c["count"] for c in meta["chunks"]] == [50, 50, 50, 50] and meta["count"] == 200
    first_two = [name for c in meta["chunks"][:2] for name in (c["keys"], c["vectors"])]
    assert all(after[name] == before[name] for name in first_two)
    # the short chunk's old files are gone: the manifest names every file there is
    named = {name for c in meta["chunks"] for name in (c["keys"], c["vectors"])}
    assert set(after) == named | {"meta.json"}


def test_a_cache_reads_back_what_it_recorded_across_chunks(tmp_path, small_chunks):
    texts = [f"green curry {i}" for i in range(173)]
    recorded = EmbeddingCache(HashEmbedder(), tmp_path / "c", mode="record").embed(texts)
    replayer = EmbeddingCache(HashEmbedder(), tmp_path / "c", mode="replay")
    order = np.random.default_rng(0).permutation(len(texts))
    assert replayer.embed([texts[i] for i in order]) == [recorded[i] for i in order]
    assert len(replayer) == 173


def test_keys_recorded_in_many_small_steps_are_found_once_merged_into_the_sorted_index(tmp_path, small_chunks,
                                                                                     monkeypatch):
    monkeypatch.setattr(key_index, "MERGE_AT", 7)
    embedder = HashEmbedder()
    cache = EmbeddingCache(embedder, tmp_path / "c", mode="record")
    texts = [f"larb {i}" for i in range(173)]
    for start in range(0, len(texts), 13):
        assert cache.fill(texts[start:start + 13]) == len(texts[start:start + 13])
    assert cache.fill(texts) == 0 and sum(n for n, _ in embedder.calls) == 173  # every key found
    assert cache.embed(texts) == EmbeddingCache(HashEmbedder(), tmp_path / "c", mode="replay").embed(texts)


def test_a_cache_of_the_first_layout_is_read_and_extended_in_place(tmp_path, small_chunks):
    """Caches written before chunks (keys.txt, vectors.npy, format 1) replay as they are, and a
    recording adds chunks beside their files."""
    folder = tmp_path / "old"
    folder.mkdir()
    embedder = HashEmbedder()
    cache = EmbeddingCache(embedder, tmp_path / "scratch", mode="record")
    texts = [f"pad thai {i}" for i in range(60)]
    keys = [cache.key(t, "document") for t in texts]
    vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    (folder / "keys.txt").write_text("\n".join(keys) + "\n")
    np.save(folder / "vectors.npy", vectors)
    (folder / "meta.json").write_text(json.dumps({"format": 1, "embedder": embedder.cache_key, "dimensions": 32,
                                                  "dtype": "float32", "count": 60}))
    old = EmbeddingCache(HashEmbedder(), folder, mode="record")
    assert np.array_equal(old.embed_float32(texts), vectors)
    old.embed(["laab", "som tam"])
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["format"] == 2 and meta["chunks"][0] == {"keys": "keys.txt", "vectors": "vectors.npy", "count": 60}
    again = EmbeddingCache(HashEmbedder(), folder, mode="replay")
    assert np.array_equal(again.embed_float32(texts), vectors) and len(again) == 62


def test_embed_float32_hands_over_one_float32_matrix_equal_to_embed(tmp_path):
    cache = EmbeddingCache(HashEmbedder(), tmp_path / "c", mode="record", dtype="float16")
    texts = ["tom yum", "massaman", "tom yum"]
    matrix = cache.embed_float32(texts)
    assert matrix.dtype == np.float32 and matrix.shape == (3, 32)
    assert matrix.tolist() == cache.embed(texts) and matrix[0].tolist() == matrix[2].tolist()


def test_what_a_killed_save_left_is_removed_and_named_files_stay(tmp_path):
    folder = tmp_path / "c"
    cache = EmbeddingCache(HashEmbedder(), folder, mode="record")
    cache.embed(["a", "b"])
    named = files(folder)
    (folder / "vectors-0123456789ab.npy").write_bytes(b"a chunk no manifest names")
    (folder / ".keys-0123456789ab.txt.x1y2.tmp").write_bytes(b"half written")
    (folder / "notes.md").write_text("not the cache's")
    EmbeddingCache(HashEmbedder(), folder, mode="record").tidy()
    assert files(folder) == {**named, "notes.md": b"not the cache's"}


def test_a_chunk_whose_files_disagree_is_a_clear_error(tmp_path):
    cache = EmbeddingCache(HashEmbedder(), tmp_path / "c", mode="record")
    cache.embed(["a", "b"])
    vectors = next((tmp_path / "c").glob("vectors-*.npy"))
    vectors.write_bytes(vectors.read_bytes()[:-40])  # cut short
    with pytest.raises(RagCoreError, match="is unreadable .*delete it and record again"):
        EmbeddingCache(HashEmbedder(), tmp_path / "c")


def test_a_cache_of_an_unknown_format_is_refused(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "meta.json").write_text(json.dumps({"format": 9}))
    with pytest.raises(RagCoreError, match="has format 9; this version reads formats 1 and 2"):
        EmbeddingCache(HashEmbedder(), tmp_path / "c")


@pytest.mark.parametrize("batch", [3, 12], ids=["one by one", "as a batch"])
def test_a_lookup_a_merge_interrupts_at_any_point_finds_every_key_at_its_own_row(batch):
    """One thread records while others look keys up. A lookup that read the sorted keys before a
    merge and their rows after it took another key's row (a text replayed with another's vector),
    or missed the keys added since the last merge. Here the merge lands at each step of the lookup
    in turn (a trace hook runs it there)."""
    import sys

    def key(n: int) -> str:
        return f"{n:032x}"

    stored = list(range(0, 200, 2))  # on disk: even keys, in a shuffled row order
    rows_on_disk = np.random.default_rng(1).permutation(len(stored))
    on_disk = np.empty(len(stored), dtype=f"S{cache_files.KEY_LENGTH}")
    on_disk[rows_on_disk] = [key(n).encode() for n in stored]
    wanted = [key(n) for n in (1, 3, 198, 0, 99, 5, 101, 2, 150, 7, 197, 4)][:batch]  # odd: added, not merged yet

    def expected(index: key_index.KeyIndex) -> list[int]:
        rows = {key(n): int(r) for n, r in zip(stored, rows_on_disk)}
        rows.update({key(n): 1000 + n for n in range(1, 200, 2)})
        return [rows[k] for k in wanted]

    steps = 0
    while True:
        index = key_index.KeyIndex([on_disk])
        index.add([key(n) for n in range(1, 200, 2)], 0)  # rows 1000 + n below
        index._added = {k: 1000 + int(k, 16) for k in index._added}
        lines = 0

        def merge_at_step(frame, event, arg, target=steps):
            nonlocal lines
            if frame.f_code.co_filename == key_index.__file__ and event == "line":
                if lines == target:
                    index._merge()
                lines += 1
            return merge_at_step

        sys.settrace(merge_at_step)
        try:
            found = index.rows(wanted).tolist()
        finally:
            sys.settrace(None)
        assert found == expected(index), f"a merge at step {steps} of the lookup"
        if lines <= steps:  # the merge came after the lookup's last step: every step was tried
            break
        steps += 1
    assert steps > 5
