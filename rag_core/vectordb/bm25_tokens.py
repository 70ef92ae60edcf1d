"""CorpusTokenizer: bm25s's ``tokenize`` of a corpus, a batch at a time, as arrays of stem ids.

``bm25s.tokenize`` walks every token of every text in a Python loop (a stop word test and a
vocabulary lookup each, and a set of the stop words made again for each text), then a second
loop maps each token to its stem: most of what building a BM25 index cost. Here the work per
token is done in C (the regex's ``findall``, then ``map`` of one dict's lookup into a small
integer array), a text at a time, while its words are still in the processor's cache (looking a
whole batch's words up after splitting them all was no faster than bm25s's loop: each word's
string was fetched from memory again), and a batch's arrays are joined once (one array grown
through a batch left memory behind that the allocator kept). Python code runs once per distinct
word: is it a stop word, what is its stem. Stems are numbered as they are first met, across
batches, so no batch's ids need renumbering.

A document's stems come out as bm25s makes them (lower-casing, stop words and stemmer as there,
in the same order; ``tests/test_bm25_build.py`` compares both), so the index built from them is
bm25s's.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from rag_core._optional import require

FEATURE = "BM25 keyword search"  # what a missing bm25s or numpy is named for

# the words bm25s.tokenize's default pattern finds, ``(?u)\b\w\w+\b``, without its word
# boundaries: a greedy run of word characters ends where the run does, and a match can start
# inside a run only after one failed at the run's start, which a run of two or more cannot.
# The boundary tests cost a quarter of the split.
TOKEN_PATTERN = r"\w\w+"

_STOP_WORD = -1  # the id of a word that is dropped


class _StemIds(dict):  # type: ignore[type-arg]
    """A word as split -> its stem's id (or _STOP_WORD); a word not met before is looked up
    once, by ``__missing__``, which dict's own lookup calls."""

    def __init__(self, stop_words: frozenset[str], stem: Callable[[str], str] | None) -> None:
        super().__init__()
        self.stop_words, self.stem = stop_words, stem
        self.vocab: dict[str, int] = {}  # stem -> id, in order of first use

    def __missing__(self, word: str) -> int:
        if word in self.stop_words:
            number = _STOP_WORD
        else:
            stem = self.stem(word) if self.stem is not None else word
            number = self.vocab.setdefault(stem, len(self.vocab))
        self[word] = number
        return number


class CorpusTokenizer:
    """Tokenizes batches of texts as ``bm25s.tokenize(texts, stopwords="en", stemmer=stemmer)``
    does; ``vocab`` maps each stem met so far to its id (numbered in order of first use)."""

    def __init__(self, stemmer: Any = None) -> None:
        bm25s_stopwords = require("bm25s.stopwords", extra="agent", feature=FEATURE)

        self._split = re.compile(TOKEN_PATTERN).findall
        self._ids = _StemIds(frozenset(bm25s_stopwords.STOPWORDS_EN), stemmer.stemWord if stemmer is not None else None)
        self.vocab = self._ids.vocab

    def ids(self, texts: Sequence[str]) -> tuple[Any, Any]:
        """(indexed words per text, their stem ids, text after text) as int64 arrays."""
        np = require("numpy", extra="agent", feature=FEATURE)

        split, lookup, fromiter, int64 = self._split, self._ids.__getitem__, np.fromiter, np.int64
        per_text = []
        for text in texts:
            words = split(text.lower())
            ids = fromiter(map(lookup, words), dtype=int64, count=len(words))
            per_text.append(ids[ids != _STOP_WORD])
        counts = np.fromiter(map(len, per_text), dtype=np.int64, count=len(per_text))
        return counts, np.concatenate(per_text) if per_text else np.empty(0, dtype=np.int64)
