"""InMemoryVectorDb: exact search in process memory, the reference the other stores match.

Vector search is exact cosine over one float32 matrix (``vector_matrix.py``); keyword search
is BM25 (bm25s); hybrid fuses both with reciprocal rank fusion. Documents are kept without
their embedding lists (the matrix holds the vectors; a fetched document gets its row back).
"""

from __future__ import annotations

import copy
from typing import Any

from rag_core.document import Document
from rag_core.vectordb.base import Ranking, VectorDb, VectorDbError, matches
from rag_core.vectordb.bm25_index import BM25_B, BM25_K1, BM25Index
from rag_core.vectordb.vector_matrix import VectorMatrix


class InMemoryVectorDb(VectorDb):
    def __init__(self, embedder: Any = None, search_type: Any = None, hybrid_rrf_k: int = 60, reranker: Any = None,
                 candidate_depth: int | None = None, name: str | None = None, description: str | None = None,
                 bm25_k1: float = BM25_K1, bm25_b: float = BM25_B) -> None:
        super().__init__(embedder, search_type, hybrid_rrf_k, reranker, candidate_depth, name, description)
        self._docs: dict[str, Document] = {}
        self._bm25 = BM25Index(k1=bm25_k1, b=bm25_b)
        self._vectors = VectorMatrix()

    def count(self) -> int:
        return len(self._docs)

    def _existing_ids(self, ids: list[str]) -> set[str]:
        return {i for i in ids if i in self._docs}

    def _write(self, documents: list[Document], replace_name: str | None = None, upsert: bool = False) -> None:
        dimensions = self._vectors.dimensions
        for doc in documents:
            if doc.embedding is None:
                continue
            dimensions = dimensions or len(doc.embedding)
            if len(doc.embedding) != dimensions:
                raise VectorDbError(
                    f"document {doc.name or doc.id!r} has a {len(doc.embedding)}-dimensional embedding; "
                    f"the store holds {dimensions}-dimensional ones"
                )
        if replace_name is not None:
            self._delete(None, replace_name)
        self._vectors.remove(d.id for d in documents if d.embedding is None and d.id in self._docs)
        self._vectors.put((d.id, d.embedding) for d in documents if d.embedding is not None)
        for doc in documents:
            kept = _detached(doc)  # the caller's later changes to its documents do not reach the store
            kept.embedding = None  # the matrix holds it
            self._docs[doc.id] = kept  # type: ignore[index]
        self._bm25.add((d.id, d.content) for d in documents)  # type: ignore[misc]

    def _delete(self, ids: list[str] | None, name: str | None) -> int:
        wanted = set(ids or ())
        doomed = [i for i, d in self._docs.items() if i in wanted or (name is not None and d.name == name)]
        for doc_id in doomed:
            del self._docs[doc_id]
        self._bm25.remove(doomed)
        self._vectors.remove(doomed)
        return len(doomed)

    def _fetch(self, ids: list[str]) -> dict[str, Document]:
        found = {}
        for doc_id in ids:
            if doc_id in self._docs:
                # a document of its own, as every other store returns: changing a result's metadata
                # must not change what the store holds
                doc = found[doc_id] = _detached(self._docs[doc_id])
                doc.embedding = self._vectors.vector(doc_id)
        return found

    def _allowed(self, filters: dict[str, Any] | None) -> set[str] | None:
        return None if not filters else {i for i, d in self._docs.items() if matches(d.meta_data, filters)}

    def _keyword_ranking(self, query: str, depth: int, filters: dict[str, Any] | None) -> Ranking:
        return self._bm25.rank(query, depth, self._allowed(filters))

    def _vector_ranking(self, vector: list[float], depth: int, filters: dict[str, Any] | None) -> Ranking:
        stored = self._vectors.dimensions
        if stored is None:
            return []
        if len(vector) != stored:
            raise VectorDbError(f"query embedding has {len(vector)} dimensions, the store holds {stored}")
        return self._vectors.rank(vector, depth, self._allowed(filters))


_IMMUTABLE = (str, int, float, bool, type(None))


def _detached(doc: Document) -> Document:
    """A copy of ``doc`` sharing nothing mutable with it (its metadata is copied in depth).

    Made directly rather than with ``copy.copy``/``copy.deepcopy``, which took about half of
    a SciFact top-10 search (every result is detached): the attributes are copied as they
    are, and metadata whose values are all immutable needs only a new dict."""
    copied = object.__new__(type(doc))
    copied.__dict__.update(doc.__dict__)
    meta = doc.meta_data
    flat = all(type(value) in _IMMUTABLE for value in meta.values())
    copied.meta_data = dict(meta) if flat else copy.deepcopy(meta)
    return copied
