"""InMemoryVectorDb: exact search in process memory, the reference the other stores match.

Vector search is brute-force cosine with numpy; keyword search is BM25 (bm25s);
hybrid fuses both with reciprocal rank fusion.
"""

from __future__ import annotations

import copy
from typing import Any

from rag_core.document import Document
from rag_core.vectordb.base import Ranking, VectorDb, VectorDbError, matches
from rag_core.vectordb.bm25_index import BM25Index
from rag_core.vectordb.fusion import top_ranked
from rag_core.vectordb.similarity import SIMILARITY_PRECISION, cosine_scores, normalized_rows


class InMemoryVectorDb(VectorDb):
    def __init__(self, embedder: Any = None, search_type: Any = None, hybrid_rrf_k: int = 60, reranker: Any = None,
                 candidate_depth: int | None = None, name: str | None = None, description: str | None = None) -> None:
        super().__init__(embedder, search_type, hybrid_rrf_k, reranker, candidate_depth, name, description)
        self._docs: dict[str, Document] = {}
        self._bm25 = BM25Index()
        self._matrix: Any = None
        self._matrix_ids: list[str] = []
        self._dimensions: int | None = None

    def count(self) -> int:
        return len(self._docs)

    def _existing_ids(self, ids: list[str]) -> set[str]:
        return {i for i in ids if i in self._docs}

    def _write(self, documents: list[Document], replace_name: str | None = None, upsert: bool = False) -> None:
        for doc in documents:
            if doc.embedding is None:
                continue
            self._dimensions = self._dimensions or len(doc.embedding)
            if len(doc.embedding) != self._dimensions:
                raise VectorDbError(
                    f"document {doc.name or doc.id!r} has a {len(doc.embedding)}-dimensional embedding; "
                    f"the store holds {self._dimensions}-dimensional ones"
                )
        if replace_name is not None:
            self._delete(None, replace_name)
        for doc in documents:
            self._docs[doc.id] = copy.copy(doc)  # type: ignore[index]
        self._bm25.add((d.id, d.content) for d in documents)  # type: ignore[misc]
        self._matrix = None

    def _delete(self, ids: list[str] | None, name: str | None) -> int:
        wanted = set(ids or ())
        doomed = [i for i, d in self._docs.items() if i in wanted or (name is not None and d.name == name)]
        for doc_id in doomed:
            del self._docs[doc_id]
        self._bm25.remove(doomed)
        self._matrix = None
        return len(doomed)

    def _fetch(self, ids: list[str]) -> dict[str, Document]:
        return {i: copy.copy(self._docs[i]) for i in ids if i in self._docs}

    def _allowed(self, filters: dict[str, Any] | None) -> set[str] | None:
        return None if not filters else {i for i, d in self._docs.items() if matches(d.meta_data, filters)}

    def _keyword_ranking(self, query: str, depth: int, filters: dict[str, Any] | None) -> Ranking:
        return self._bm25.rank(query, depth, self._allowed(filters))

    def _vector_ranking(self, vector: list[float], depth: int, filters: dict[str, Any] | None) -> Ranking:
        if not self._docs:
            return []
        if self._matrix is None:
            self._matrix_ids = sorted(self._docs)
            self._matrix = normalized_rows([self._docs[i].embedding for i in self._matrix_ids])
        if len(vector) != self._matrix.shape[1]:
            raise VectorDbError(f"query embedding has {len(vector)} dimensions, the store holds {self._matrix.shape[1]}")
        scores = cosine_scores(self._matrix, vector)
        ids = self._matrix_ids
        allowed = self._allowed(filters)
        if allowed is not None:
            keep = [n for n, doc_id in enumerate(ids) if doc_id in allowed]
            ids, scores = [ids[n] for n in keep], scores[keep]
        return top_ranked(ids, scores, depth, SIMILARITY_PRECISION)
