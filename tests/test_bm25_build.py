"""The BM25 index built a batch at a time is bm25s's index, value for value (so every score and
ranking is as it was), and builds in a fraction of bm25s's memory."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import bm25s
import numpy as np
import pytest
import Stemmer
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_core.evals.retrieval.datasets import load_beir
from rag_core.vectordb import bm25_build
from rag_core.vectordb.bm25_index import BM25Index
from rag_core.vectordb.bm25_tokens import CorpusTokenizer

SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "scifact"


def bm25s_index(texts: list[str], k1: float, b: float, stem: bool = True):
    """What BM25Index built before: bm25s's own index over the whole corpus at once."""
    tokenized = BM25Index(stem=stem)._tokenize(texts, True)
    index = bm25s.BM25(k1=k1, b=b, method="lucene")
    index.index(tokenized, show_progress=False)
    return index


def assert_same_index(built, reference) -> None:
    """The same vocabulary, and for every token the same documents with bit-identical scores
    (token ids may differ: bm25s numbers stems in a set's order)."""
    assert set(built.vocab_dict) == set(reference.vocab_dict)
    mine, theirs = built.scores, reference.scores
    assert mine["num_docs"] == theirs["num_docs"] and len(mine["data"]) == len(theirs["data"])
    for key in ("data", "indices", "indptr"):
        assert mine[key].dtype == theirs[key].dtype, key
    for token, theirs_id in reference.vocab_dict.items():
        if token == "":
            assert built.vocab_dict[""] == max(built.vocab_dict.values())
            continue
        mine_id = built.vocab_dict[token]
        ours = slice(mine["indptr"][mine_id], mine["indptr"][mine_id + 1])
        their = slice(theirs["indptr"][theirs_id], theirs["indptr"][theirs_id + 1])
        assert np.array_equal(mine["indices"][ours], theirs["indices"][their]), token
        assert mine["data"][ours].tobytes() == theirs["data"][their].tobytes(), token


def tokenizer(stem: bool = True) -> CorpusTokenizer:
    return CorpusTokenizer(Stemmer.Stemmer("english") if stem else None)


def build(texts: list[str], k1: float = 1.5, b: float = 0.75, stem: bool = True):
    return bm25_build.build_index(texts, tokenizer(stem), k1, b)


def bm25s_stems(texts: list[str], stem: bool) -> list[list[str]]:
    """Each text's stems as bm25s's tokenize makes them, with BM25Index's settings."""
    return BM25Index(stem=stem)._tokenize(texts, False)


def corpus_tokenizer_stems(texts: list[str], batch: int, stem: bool) -> list[list[str]]:
    """Each text's stems as CorpusTokenizer makes them, ``batch`` texts at a time."""
    tokens = tokenizer(stem)
    counts, ids = [], []
    for start in range(0, len(texts), batch):
        batch_counts, batch_ids = tokens.ids(texts[start:start + batch])
        assert batch_counts.dtype == batch_ids.dtype == np.int64
        counts += batch_counts.tolist()
        ids += batch_ids.tolist()
    stem_of = {number: stem for stem, number in tokens.vocab.items()}
    assert sorted(stem_of) == list(range(len(stem_of)))  # numbered densely, across batches
    ends = np.cumsum([0, *counts]).tolist()
    return [[stem_of[n] for n in ids[ends[i]:ends[i + 1]]] for i in range(len(texts))]


@pytest.mark.skipif(not SCIFACT.exists(), reason="SciFact not found in ../shared")
def test_scifact_built_in_batches_is_bm25s_index_bit_for_bit(monkeypatch):
    monkeypatch.setattr(bm25_build, "TOKENIZE_BATCH", 700)  # several batches, the last one short
    corpus = load_beir(SCIFACT, "test").corpus
    texts = [corpus[i] for i in sorted(corpus)]
    built, reference = build(texts), bm25s_index(texts, 1.5, 0.75)
    assert_same_index(built, reference)
    tokenize = BM25Index()._tokenize
    for query in load_beir(SCIFACT, "test").queries.values():
        tokens = tokenize([query], False)[0]
        if tokens:
            assert built.get_scores(tokens).tobytes() == reference.get_scores(tokens).tobytes()


WORDS = ["rice", "the", "noodles", "and", "tamarind", "fish", "sauce", "chili", "a", "palm", "sugar", "of", "lime",
         "garlic", "frying", "fried", "fries", "x", "é", "curry", "curries"]
texts = st.lists(st.sampled_from(WORDS), max_size=30).map(" ".join)  # stop words only, single letters, empty too
# what the pattern, the lower-casing and the stemmer meet in real texts: capitals, digits, punctuation,
# underscores, letters beyond ASCII, a capital that lower-cases to two characters (İ)
ODD = ["The", "RICE", "Fried,", "co-op", "x_y", "__", "42", "4x4", "naïve", "Übermaß", "İstanbul", "ſtraße", "日本語",
       "don't", "(chili)", "\n", "\t", "e.g.", "Ａｂｃ", "α-helix"]
odd_texts = st.lists(st.sampled_from(WORDS + ODD), max_size=30).map(" ".join) | st.text(max_size=40)


@settings(max_examples=150, deadline=None)
@given(corpus=st.lists(odd_texts, min_size=1, max_size=30), batch=st.integers(1, 9), stem=st.booleans())
def test_corpus_tokenizer_makes_bm25s_stems_text_by_text(corpus, batch, stem):
    assert corpus_tokenizer_stems(corpus, batch, stem) == bm25s_stems(corpus, stem)


@pytest.mark.skipif(not SCIFACT.exists(), reason="SciFact not found in ../shared")
def test_corpus_tokenizer_makes_bm25s_stems_on_scifact():
    corpus = load_beir(SCIFACT, "test").corpus
    texts = [corpus[i] for i in sorted(corpus)]
    assert corpus_tokenizer_stems(texts, 700, True) == bm25s_stems(texts, True)


@settings(max_examples=60, deadline=None)
@given(corpus=st.lists(texts, min_size=1, max_size=40), batch=st.integers(1, 9), k1=st.sampled_from([0.9, 1.2, 1.5]),
       b=st.sampled_from([0.0, 0.4, 0.75, 1.0]), stem=st.booleans())
def test_random_corpora_built_in_batches_are_bm25s_index(corpus, batch, k1, b, stem):
    bm25_build.TOKENIZE_BATCH, before = batch, bm25_build.TOKENIZE_BATCH
    try:
        built = build(corpus, k1, b, stem)
    finally:
        bm25_build.TOKENIZE_BATCH = before
    tokenized = BM25Index(stem=stem)._tokenize(corpus, True)
    if not tokenized.vocab:
        assert built is None  # nothing to index: BM25Index ranks nothing
        return
    assert_same_index(built, bm25s_index(corpus, k1, b, stem))


def test_building_holds_a_fraction_of_what_bm25s_held(monkeypatch):
    """bm25s's build held about 54 bytes per posting at its peak here (token lists, then five
    arrays of the postings' size to sort them), for an index of 8: built a batch at a time, about
    21 (the index, the postings' tokens and counts, a batch, the vocabulary)."""
    monkeypatch.setattr(bm25_build, "TOKENIZE_BATCH", 250, raising=False)
    generator = np.random.default_rng(0)
    words = [f"w{n}x" for n in range(3_000)]
    corpus = [" ".join(words[i] for i in row) for row in (generator.zipf(1.2, size=(8_000, 120)) % 3_000).tolist()]
    warm = BM25Index()
    warm.add([("w", "warm the tokenizer up")])
    warm.rank("tokenizer", 1)  # bm25s and the stemmer imported before measuring
    index = BM25Index()
    index.add((f"d{n}", text) for n, text in enumerate(corpus))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        index.rank("w1x w2x", 10)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    postings = len(index._index.scores["data"])
    assert peak / postings < 30, f"{peak / postings:.1f} bytes per posting at the peak"


def test_a_query_reads_the_ids_of_the_documents_near_the_top_only():
    """Every matching document's id was read per query (100k documents: 59k ids, 5-11 ms of a
    7-13 ms keyword ranking); the ranking needs those near the cut-off only."""

    class CountingIds(list):
        reads = 0

        def __getitem__(self, position):
            CountingIds.reads += 1
            return super().__getitem__(position)

    index = BM25Index()
    # every document matches "rice"; lengths differ, so scores fall in 50 levels of ties
    index.add((f"d{n:05d}", "rice noodles " + " ".join(f"x{k}" for k in range(n % 50))) for n in range(5000))
    expected = index.rank("rice", 10)
    index._ids = CountingIds(index._ids)
    assert index.rank("rice", 10) == expected
    assert CountingIds.reads < 500, CountingIds.reads  # the top level's 100 tied documents, not all 5,000
