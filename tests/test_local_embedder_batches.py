"""LocalEmbedder hands the model batches of similar length, as one ``SentenceTransformer.encode``
call over all the texts makes them (a batch is padded to its longest text), still a batch at a
time so the progress bar counts them; an embedding cache takes its float32 matrix as it is."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

from rag_core.embedder import EmbeddingCache, LocalEmbedder


class RecordingModel:
    """Stands in for the SentenceTransformer: a vector per text made from its length, and the
    batches it was handed."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def encode(self, texts, batch_size, **options):
        self.batches.append(list(texts))
        return np.array([[len(t), 1.0, 0.0] for t in texts], dtype=np.float32)


def embedder_with(model: RecordingModel, batch_size: int = 2) -> LocalEmbedder:
    embedder = LocalEmbedder(batch_size=batch_size, dimensions=3)
    embedder._model = model
    return embedder


TEXTS = ["a", "bbbbbbbbbb", "cc", "ddddddddd", "eee", "ffffffff"]  # short and long alternating


def test_batches_hold_texts_of_similar_length_and_vectors_come_back_in_order():
    model = RecordingModel()
    vectors = embedder_with(model).embed(TEXTS)
    # longest first, as SentenceTransformer.encode orders what it is given; before, the caller's
    # order was cut into batches: each short text padded to a long one
    assert model.batches == [["bbbbbbbbbb", "ddddddddd"], ["ffffffff", "eee"], ["cc", "a"]]
    assert [v[0] for v in vectors] == [len(t) for t in TEXTS]
    assert isinstance(vectors[0], list) and isinstance(vectors[0][0], float)


def test_embed_array_is_embed_as_one_float32_matrix():
    embedder = embedder_with(RecordingModel())
    matrix = embedder.embed_array(TEXTS)
    assert matrix.dtype == np.float32 and matrix.shape == (len(TEXTS), 3)
    assert matrix.tolist() == embedder.embed(TEXTS)
    assert embedder.embed([]) == [] and embedder.embed_array([]).shape[0] == 0


def test_the_progress_bar_counts_batches(monkeypatch):
    shown: list[tuple[list[int], str]] = []

    def progress_bar(items, desc, unit="it"):
        items = list(items)
        shown.append((items, unit))
        return items

    monkeypatch.setattr("rag_core.progress.progress_bar", progress_bar)
    model = RecordingModel()
    embedder_with(model).embed(TEXTS, progress=True)
    assert shown == [([0, 2, 4], "batch")] and len(model.batches) == 3
    embedder_with(RecordingModel()).embed(TEXTS[:2], progress=True)  # one batch: no bar
    assert len(shown) == 1


def test_an_embedding_cache_records_the_embedders_float32_matrix(tmp_path):
    class ArrayOnly(LocalEmbedder):
        def embed(self, texts, input_type="document", progress=False):
            raise AssertionError("the cache asked for lists of floats")

    embedder = ArrayOnly(batch_size=2, dimensions=3)
    embedder._model = RecordingModel()
    cache = EmbeddingCache(embedder, tmp_path / "cache", mode="record")
    assert cache.fill(TEXTS) == len(TEXTS)
    assert cache.embed_float32(TEXTS)[:, 0].tolist() == [len(t) for t in TEXTS]


needs_torch = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None and not os.environ.get("RAG_CORE_REQUIRE_LOCAL"),
    reason="the 'local' extra (torch, sentence-transformers) is not installed",
)


@needs_torch
def test_vectors_equal_one_direct_encode_of_the_same_texts():
    texts = ["braise", "slow-braised lamb shoulder with garlic and rosemary, four hours in a low oven",
             "stock", "a long " + "very " * 300 + "long text, cut at the model's 256 tokens",
             "crème brûlée", "red wine, thyme and bay leaf", "β-catenin"]
    embedder = LocalEmbedder(batch_size=3)
    direct = embedder._load().encode(texts, batch_size=3, normalize_embeddings=True, convert_to_numpy=True,
                                     show_progress_bar=False)
    assert np.allclose(np.asarray(embedder.embed(texts), dtype=np.float32), direct, atol=1e-5)
    assert np.allclose(embedder.embed_array(texts), direct, atol=1e-5)
    assert np.allclose(embedder.embed(texts[:1])[0], direct[0], atol=1e-5)  # a text embeds alike alone
