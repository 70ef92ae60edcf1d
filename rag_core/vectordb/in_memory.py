"""InMemoryVectorDb: exact search in process memory, the reference the other stores match.

Vector search is exact cosine over float32 matrices (``vector_matrix.py``); keyword search
is BM25 (bm25s); hybrid fuses both with reciprocal rank fusion. Vectors a document brings as a
float32 row (from an embedding cache) are copied into the matrix as they are.

What it holds per document is what a search needs and no more: the vector as a row of the
matrix, and the text, name and metadata as one tuple (a ``Document`` object with its
attribute and metadata dicts took about three times the memory). The text is held as UTF-8:
Python holds a string with one character beyond Latin-1 at two or four bytes a character (a
SciFact abstract: 2.3 KB as a string, 1.5 KB as UTF-8). It is decoded when a result is made
and, one text at a time, when the BM25 index is built from it. A result is a new ``Document``
built from them, as every store returns one (without its vector), so a caller changing a
result never changes what is stored.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Iterator, Mapping, NamedTuple

from rag_core.document import Document, embedding_of
from rag_core.vectordb.base import Ranking, VectorDb, matches
from rag_core.vectordb.bm25_index import BM25_B, BM25_K1, BM25Index
from rag_core.vectordb.vector_matrix import VectorMatrix

if TYPE_CHECKING:
    from rag_core.embedder.base import Embedder
    from rag_core.reranker.base import Reranker
    from rag_core.vectordb.search_type import SearchType


class _Stored(NamedTuple):
    content: bytes  # UTF-8 (lone surrogates kept: surrogatepass), decoded by text()
    name: str | None
    meta_data: dict[str, Any] | None  # None for no metadata: an empty dict per document adds up

    def text(self) -> str:
        return self.content.decode("utf-8", "surrogatepass")


class _Texts(Mapping[str, str]):
    """The stored texts by id, each decoded as it is read: what the BM25 index is built from."""

    def __init__(self, docs: dict[str, _Stored]) -> None:
        self._docs = docs

    def __getitem__(self, doc_id: str) -> str:
        return self._docs[doc_id].text()

    def __iter__(self) -> Iterator[str]:
        return iter(self._docs)

    def __len__(self) -> int:
        return len(self._docs)


class InMemoryVectorDb(VectorDb):
    def __init__(self, embedder: Embedder | None = None, search_type: SearchType | str | None = None,
                 hybrid_rrf_k: int = 60, reranker: Reranker | None = None, candidate_depth: int | None = None,
                 name: str | None = None, description: str | None = None,
                 bm25_k1: float = BM25_K1, bm25_b: float = BM25_B) -> None:
        super().__init__(embedder, search_type, hybrid_rrf_k, reranker, candidate_depth, name, description)
        self._docs: dict[str, _Stored] = {}
        self._bm25 = BM25Index(k1=bm25_k1, b=bm25_b, held_texts=_Texts(self._docs))
        self._vectors = VectorMatrix()

    def count(self) -> int:
        return len(self._docs)

    def _existing_ids(self, ids: list[str]) -> set[str]:
        return {i for i in ids if i in self._docs}

    def _stored_dimensions(self) -> int | None:
        return self._vectors.dimensions

    def _insert(self, documents: list[Document]) -> None:
        self._put(documents)  # one process, no concurrent writer: the caller's check of present ids holds

    def _upsert(self, documents: list[Document]) -> None:
        self._put(documents)

    def _replace(self, name: str, documents: list[Document]) -> None:
        self._delete(None, name)
        self._put(documents)

    def _put(self, documents: list[Document]) -> None:
        # the store keeps ids of its own making: an id string the caller made sits among the
        # caller's short-lived objects (a batch's lists of floats), and holding it would keep
        # their memory from going back to the system (100k documents: 436 → 332 MB)
        ids = [_own_copy(d.id) for d in documents]  # type: ignore[arg-type]
        vectors = [embedding_of(d) for d in documents]  # as held: float32 rows from a cache stay rows
        self._vectors.remove(i for i, v in zip(ids, vectors) if v is None and i in self._docs)
        self._vectors.put((i, v) for i, v in zip(ids, vectors) if v is not None)
        for doc_id, doc in zip(ids, documents):
            self._docs[doc_id] = _Stored(doc.content.encode("utf-8", "surrogatepass"), doc.name,
                                         _own_meta(doc.meta_data) or None)
        self._bm25.changed()

    def _delete(self, ids: list[str] | None, name: str | None) -> int:
        wanted = set(ids or ())
        doomed = [i for i, d in self._docs.items() if i in wanted or (name is not None and d.name == name)]
        for doc_id in doomed:
            del self._docs[doc_id]
        self._bm25.changed()
        self._vectors.remove(doomed)
        return len(doomed)

    def _fetch(self, ids: list[str]) -> dict[str, Document]:
        # without the vector, as every other store returns a result (and turning 384 float32
        # values per result into Python floats was a quarter of a search)
        found = {}
        docs = self._docs
        for doc_id in ids:
            stored = docs.get(doc_id)
            if stored is not None:
                meta = stored.meta_data
                # (content, meta_data, name, id) by position: a result is made per hit, and the
                # dataclass's keyword handling was a good share of making one
                found[doc_id] = Document(stored.text(), _own_meta(meta) if meta else {}, stored.name, doc_id)
        return found

    def _allowed(self, filters: dict[str, Any] | None) -> set[str] | None:
        return None if not filters else {i for i, d in self._docs.items() if matches(d.meta_data or {}, filters)}

    def _keyword_ranking(self, query: str, depth: int, filters: dict[str, Any] | None) -> Ranking:
        return self._bm25.rank(query, depth, self._allowed(filters))

    def _query_embedding(self, query: str) -> Any:
        # an embedding cache's float32 row as it is: the matrix takes the query as float32, and
        # the row's values are the list's (made from it), without 384 Python floats between
        as_rows = getattr(self.embedder, "embed_float32", None)
        return as_rows([query], "query")[0] if as_rows is not None else super()._query_embedding(query)

    def _vector_ranking(self, vector: list[float], depth: int, filters: dict[str, Any] | None) -> Ranking:
        if self._vectors.dimensions is None:
            return []
        return self._vectors.rank(vector, depth, self._allowed(filters))


_IMMUTABLE = (str, int, float, bool, type(None))


def _own_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``meta`` sharing nothing mutable with it (made directly: metadata whose values
    are all immutable needs only a new dict, and ``copy.deepcopy`` of every result's metadata
    took a large share of a search)."""
    flat = all(type(value) in _IMMUTABLE for value in meta.values())
    return dict(meta) if flat else copy.deepcopy(meta)


def _own_copy(text: str) -> str:
    """An equal string that is a new object (``str(text)`` or slicing would return ``text`` itself)."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")
