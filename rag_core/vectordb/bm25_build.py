"""Building a bm25s index a batch of documents at a time: bm25s's numbers, in bounded memory.

``bm25s.BM25.index`` takes the whole corpus as lists of token ids (a Python list per document,
about 1 KB each for a SciFact abstract) and builds its score matrix through arrays several times
the size of the result (its (column, row) sort alone holds five arrays of the postings' size):
about 5 KB per document at the peak, on top of the texts. Here the corpus is tokenized as
bm25s's ``tokenize`` does it, a batch at a time (``bm25_tokens.py``), each batch kept only as
two small integer arrays (token, term frequency: three bytes a posting, mostly) and the index
is written straight into its final arrays, column by column, in a second pass over those.

The result is a ``bm25s.BM25`` with the arrays ``index`` would give it, value for value: every
score is computed with the same operations on the same types as bm25s's Lucene variant
(tests/test_bm25_build.py compares both on SciFact and on random corpora), so rankings, saved
indexes and everything reading them stay as they were.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Iterable

from rag_core._optional import require
from rag_core.vectordb.bm25_tokens import FEATURE, CorpusTokenizer

# documents tokenized at once: a batch's token lists are the only Python objects per token
TOKENIZE_BATCH = 4096


def _working_dtype() -> Any:
    """The type bm25s's per-document arithmetic ends in: a float64 numpy scalar plus a float32
    array is float64 under NumPy 2's promotion rules and float32 under NumPy 1's."""
    np = require("numpy", extra="agent", feature=FEATURE)

    return (np.float64(0.5) + np.ones(1, dtype=np.float32)).dtype


def _fitting(largest: int) -> Any:
    """The smallest unsigned type holding 0..largest: a batch's postings are kept until the second
    pass, and a token id or a term frequency rarely needs more than two bytes (or one)."""
    np = require("numpy", extra="agent", feature=FEATURE)

    return np.min_scalar_type(max(largest, 0))


def build_index(texts: Iterable[str], tokenizer: CorpusTokenizer, k1: float, b: float) -> Any:
    """A ``bm25s.BM25`` (Lucene variant) over ``texts`` in order, or None when no text has a word
    to index. ``tokenizer`` tokenizes as bm25s's ``tokenize`` with the caller's settings."""
    bm25s = require("bm25s", extra="agent", feature=FEATURE)
    np = require("numpy", extra="agent", feature=FEATURE)

    vocab = tokenizer.vocab  # stem -> id, as the batches number them
    batches: list[tuple[Any, Any, Any]] = []  # per batch: postings per document, token, term frequency
    lengths: list[Any] = []
    df = np.zeros(0, dtype=np.int64)
    iterator = iter(texts)
    while batch := list(itertools.islice(iterator, TOKENIZE_BATCH)):
        doc_lengths, flat = tokenizer.ids(batch)
        # one posting per (document, token), sorted by document then token, with its count
        pairs, tf = np.unique((np.repeat(np.arange(len(batch), dtype=np.int64), doc_lengths) << 32) | flat,
                              return_counts=True)
        postings = np.bincount(pairs >> 32, minlength=len(batch)).astype(np.int32)
        tokens = (pairs & 0xFFFFFFFF).astype(_fitting(len(vocab)))
        df = np.concatenate([df, np.zeros(len(vocab) - len(df), dtype=np.int64)])
        df += np.bincount(tokens, minlength=len(vocab))
        batches.append((postings, tokens, tf.astype(_fitting(int(tf.max(initial=0))))))
        lengths.append(doc_lengths)
        del pairs, tf, flat, tokens
    if not vocab:
        return None
    doc_lengths = np.concatenate(lengths)
    documents = len(doc_lengths)
    average = doc_lengths.mean()  # bm25s: np.array of the lengths, .mean(): exact for integer sums below 2**53
    # Lucene idf, computed per token in Python floats as bm25s does, then stored as float32
    idf = np.array([math.log(1 + (documents - d + 0.5) / (d + 0.5)) for d in df.tolist()], dtype=np.float64)
    idf = idf.astype(np.float32)

    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    data = np.empty(int(indptr[-1]), dtype=np.float32)
    indices = np.empty(int(indptr[-1]), dtype=np.int32)
    heads = indptr[:-1].copy()  # where each column's next posting goes
    work = _working_dtype()
    first_row = 0
    for number, doc_lengths_of_batch in enumerate(lengths):
        postings, tokens, tf = batches[number]
        batches[number] = None  # type: ignore[call-overload]  # freed as it is used
        rows = np.repeat(np.arange(first_row, first_row + len(postings), dtype=np.int32), postings)
        first_row += len(postings)
        # bm25s, per document: tf / (k1 * ((1 - b) + b * l_d / l_avg) + tf), times idf; l_d a Python int
        saturation = k1 * ((1 - b) + b * np.repeat(doc_lengths_of_batch, postings).astype(np.float64) / average)
        frequencies = tf.astype(np.float32).astype(work)
        tokens = tokens.astype(np.int64)
        scores = (idf[tokens].astype(work) * (frequencies / (saturation.astype(work) + frequencies))).astype(np.float32)
        # into the columns: rows arrive in ascending order, batch after batch, as the CSC order wants
        order = np.argsort(tokens, kind="stable")
        in_order = tokens[order]
        column, starts, counts = np.unique(in_order, return_index=True, return_counts=True)
        at = heads[in_order] + (np.arange(len(order)) - np.repeat(starts, counts))
        del in_order
        data[at] = scores[order]
        indices[at] = rows[order]
        heads[column] += counts

    index = bm25s.BM25(k1=k1, b=b, method="lucene")
    # what BM25.index sets (bm25s/__init__.py: index, build_index_from_ids)
    index.scores = {"data": data, "indices": indices, "indptr": indptr, "num_docs": documents}
    index.nonoccurrence_array = None
    if "" not in vocab:
        vocab[""] = max(vocab.values()) + 1  # bm25s's empty token (create_empty_token)
    index.vocab_dict = vocab
    index.unique_token_ids_set = set(vocab.values())
    return index
