"""BM25Index: keyword ranking with bm25s (Lucene variant), for stores without their own.

bm25s builds a static index, so the index is rebuilt lazily after the set of documents
changes (a batch at a time, in bounded memory: bm25_build.py). Tokenisation: lower-case words
of two or more characters, English stop words removed, Snowball stemming when PyStemmer is
installed.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from rag_core._optional import require
from rag_core.vectordb.bm25_build import FEATURE, build_index
from rag_core.vectordb.bm25_tokens import CorpusTokenizer
from rag_core.vectordb.fusion import top_ranked


def _stemmer() -> Any:
    try:
        import Stemmer  # PyStemmer: optional, improves recall

        return Stemmer.Stemmer("english")
    except ImportError:
        return None


# Okapi BM25, Lucene variant: idf = ln(1 + (N - df + 0.5) / (df + 0.5)), term weight
# tf / (tf + k1 * (1 - b + b * dl / avgdl)). PgVector computes the same in SQL (pg_bm25.py).
BM25_K1 = 1.5
BM25_B = 0.75

_NOTHING_INDEXED = False  # an index built over no indexable word: every query ranks nothing

# Indexes built in this process, by what they were built from: agents built per test case (or
# per request) over the same corpus reuse one index instead of tokenising the corpus again.
# An index is only read once built, so sharing it is safe; a few are kept, least recent out.
_BUILT: OrderedDict[bytes, Any] = OrderedDict()
_BUILT_KEPT = 4
# Stores in other threads (a server's request threads, an eval session's background
# retrievers) reorder and evict at once; unguarded, one thread's move_to_end of a key
# another just evicted raises KeyError. Held while building, so one thread builds and
# the others wanting the same index wait for it.
_BUILT_LOCK = threading.Lock()


def _fingerprint(ids: list[str], texts: Iterable[str], settings: tuple[Any, ...]) -> bytes:
    digest = hashlib.blake2b(repr(settings).encode(), digest_size=20)
    for doc_id, text in zip(ids, texts):
        for part in (doc_id, text):
            encoded = part.encode("utf-8", "surrogatepass")
            digest.update(len(encoded).to_bytes(8, "little"))
            digest.update(encoded)
    return digest.digest()


class BM25Index:
    def __init__(self, k1: float = BM25_K1, b: float = BM25_B, stem: bool = True,
                 load_texts: Callable[[], dict[str, str]] | None = None,
                 held_texts: Mapping[str, str] | None = None) -> None:
        """``held_texts``: the texts by id as the caller's store holds them, read when the index
        is built; the index then keeps none of its own (``changed`` says when to rebuild)."""
        self.k1, self.b, self.stem = k1, b, stem
        # a loaded index knows its ids but not its texts; they are fetched only if it must be rebuilt
        self._load_texts = load_texts
        self._held = held_texts is not None
        self._texts: Mapping[str, str] = {} if held_texts is None else held_texts
        self._index: Any = None
        self._ids: list[str] = []
        self._stemmer: Any = None

    def __len__(self) -> int:
        return len(self._ids) if self._index is not None and not self._texts else len(self._texts)

    def _ensure_texts(self) -> None:
        if not self._texts and self._index is not None and self._load_texts is not None:
            self._texts = self._load_texts()

    def add(self, items: Iterable[tuple[str, str]]) -> None:
        self._ensure_texts()
        texts = self._own_texts()
        for doc_id, text in items:
            texts[doc_id] = text
        self._index = None

    def remove(self, ids: Iterable[str]) -> None:
        self._ensure_texts()
        texts = self._own_texts()
        for doc_id in ids:
            texts.pop(doc_id, None)
        self._index = None

    def changed(self) -> None:
        """The held texts changed: the index is rebuilt from them when next ranked."""
        self._index = None

    def _own_texts(self) -> dict[str, str]:
        if self._held:
            raise TypeError("this BM25Index reads the texts its store holds: tell it changed(), not add or remove")
        return self._texts  # type: ignore[return-value]

    def _uses_stemmer(self) -> bool:
        if self.stem and self._stemmer is None:
            self._stemmer = _stemmer() or False
        return bool(self._stemmer)

    def _tokenize(self, texts: list[str], return_ids: bool) -> Any:
        bm25s = require("bm25s", extra="agent", feature=FEATURE)

        self._uses_stemmer()
        return bm25s.tokenize(
            texts, stopwords="en", stemmer=self._stemmer or None, show_progress=False, return_ids=return_ids
        )

    def _texts_in_order(self) -> Iterator[str]:
        # one at a time: held texts are made as they are read (a store holding UTF-8 decodes each),
        # and a list of all of them would be a second copy of the corpus
        return (self._texts[i] for i in self._ids)

    def _build(self) -> None:
        self._ids = sorted(self._texts)
        key = _fingerprint(self._ids, self._texts_in_order(), (self.k1, self.b, self._uses_stemmer()))
        with _BUILT_LOCK:
            if key in _BUILT:
                _BUILT.move_to_end(key)
                self._index = _BUILT[key]
                return
            self._index = self._index_of(self._texts_in_order())
            _BUILT[key] = self._index
            while len(_BUILT) > _BUILT_KEPT:
                _BUILT.popitem(last=False)

    def _index_of(self, texts: Iterable[str]) -> Any:
        # bm25s's index, built a batch of documents at a time (bm25_build.py)
        self._uses_stemmer()
        index = build_index(texts, CorpusTokenizer(self._stemmer or None), self.k1, self.b)
        # None: no documents, or none with a word to index (stop words only): nothing can match
        return _NOTHING_INDEXED if index is None else index

    # ------------------------------------------------------------- persistence
    def save(self, folder: Path) -> None:
        """Write the index (built if needed) and its id list; a crash leaves the old one or none."""
        if self._index is None:
            self._build()
        folder.mkdir(parents=True, exist_ok=True)
        manifest = folder / "ids.json"
        manifest.unlink(missing_ok=True)  # no manifest = no valid index while we write
        if self._index is not _NOTHING_INDEXED:
            self._index.save(str(folder))
        manifest.write_text(json.dumps({"ids": self._ids, "k1": self.k1, "b": self.b, "stemmed": self._uses_stemmer()}))

    def load(self, folder: Path, expected_ids: set[str]) -> bool:
        """Load a saved index if it covers exactly ``expected_ids``; False if absent or stale."""
        bm25s = require("bm25s", extra="agent", feature=FEATURE)

        try:
            manifest = json.loads((folder / "ids.json").read_text())
        except (OSError, ValueError):
            return False
        settings = (manifest.get("k1"), manifest.get("b"), manifest.get("stemmed"))
        if set(manifest.get("ids", [])) != expected_ids or settings != (self.k1, self.b, self._uses_stemmer()):
            return False
        self._ids = list(manifest["ids"])
        if not self._held:
            self._texts = {}
        if not self._ids:
            self._index = None
            return True
        try:
            self._index = bm25s.BM25.load(str(folder))
        except Exception:
            # the files beside the manifest are damaged or missing (bm25s raises whatever its
            # readers raise): the collection is the truth, so rebuild from it rather than fail
            self._ids, self._index = [], None
            return False
        return True

    def rank(self, query: str, depth: int, allowed: set[str] | None = None) -> list[tuple[str, float]]:
        """Documents with a positive score, best first (ties by id), at most ``depth``."""
        if self._index is None:
            if not self._texts:
                return []
            self._build()
        if self._index is _NOTHING_INDEXED or not self._ids:
            return []
        tokens = self._tokenize([query], False)[0]
        if not tokens:
            return []
        scores = self._index.get_scores(tokens)
        np = require("numpy", extra="agent", feature=FEATURE)

        keep = np.flatnonzero(scores > 0)
        if allowed is not None:
            keep = np.asarray([n for n in keep if self._ids[n] in allowed], dtype=np.int64)
        return top_ranked(_IdsAt(self._ids, keep), scores[keep], depth)


class _IdsAt:
    """``[ids[p] for p in positions]`` as a sequence whose entries are looked up when read.

    A query matching most of a large corpus made the list of every matching id (100k documents:
    59k ids, 5 to 11 ms a query, touching each id's string), where ``top_ranked`` reads only the
    few hundred scoring near the top."""

    __slots__ = ("_ids", "_positions")

    def __init__(self, ids: list[str], positions: Any) -> None:
        self._ids, self._positions = ids, positions

    def __len__(self) -> int:
        return len(self._positions)

    def __getitem__(self, index: int) -> str:
        return self._ids[int(self._positions[index])]

    def __iter__(self) -> Any:
        ids = self._ids
        return (ids[p] for p in self._positions.tolist())
