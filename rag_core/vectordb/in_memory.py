"""InMemoryVectorDb: exact search in process memory, the reference the other stores match.

Vector search is brute-force cosine with numpy; keyword search is BM25 (bm25s, Lucene
variant, k1=1.5, b=0.75); hybrid fuses both with reciprocal rank fusion.
"""

from __future__ import annotations

from typing import Any

from rag_core.document import Document
from rag_core.vectordb.base import VectorDb, matches
from rag_core.vectordb.fusion import rank_order, reciprocal_rank_fusion
from rag_core.vectordb.search_type import SearchType


class InMemoryVectorDb(VectorDb):
    def __init__(
        self,
        embedder: Any = None,
        search_type: SearchType | str | None = None,
        hybrid_rrf_k: int = 60,
    ) -> None:
        self.embedder = embedder
        default = SearchType.hybrid if embedder is not None else SearchType.keyword
        self.search_type = SearchType(search_type) if search_type is not None else default
        if self.search_type is not SearchType.keyword and embedder is None:
            raise ValueError(f"search_type={self.search_type.value!r} needs an embedder")
        self.hybrid_rrf_k = hybrid_rrf_k
        self._docs: dict[str, Document] = {}
        self._bm25: Any = None
        self._bm25_ids: list[str] = []
        self._matrix: Any = None
        self._matrix_ids: list[str] = []

    def count(self) -> int:
        return len(self._docs)

    def insert(self, documents: list[Document]) -> int:
        added = 0
        new: list[Document] = []
        for doc in documents:
            doc_id = doc.id or doc.content_hash
            if doc_id in self._docs:
                continue
            doc.id = doc_id
            new.append(doc)
        if new and self.embedder is not None:
            missing = [d for d in new if d.embedding is None]
            if missing:
                vectors = self.embedder.get_embeddings([d.content for d in missing])
                for doc, vector in zip(missing, vectors):
                    doc.embedding = list(vector)
        for doc in new:
            self._docs[doc.id] = doc  # type: ignore[index]
            added += 1
        if added:
            self._bm25, self._matrix = None, None
        return added

    def search(self, query: str, limit: int, filters: dict[str, Any] | None = None) -> list[Document]:
        allowed = {i for i, d in self._docs.items() if matches(d.meta_data, filters)}
        if not allowed or limit <= 0:
            return []
        if self.search_type is SearchType.keyword:
            ranked = self._keyword(query, allowed)
        elif self.search_type is SearchType.vector:
            ranked = self._vector(query, allowed)
        else:
            fused = reciprocal_rank_fusion(
                [[i for i, _ in self._vector(query, allowed)], [i for i, _ in self._keyword(query, allowed)]],
                k=self.hybrid_rrf_k,
            )
            ranked = fused
        return [self._docs[i] for i, _ in ranked[:limit]]

    def _keyword(self, query: str, allowed: set[str]) -> list[tuple[str, float]]:
        import bm25s

        if self._bm25 is None:
            self._bm25_ids = sorted(self._docs)
            tokens = bm25s.tokenize(
                [self._docs[i].content for i in self._bm25_ids], stopwords="en", show_progress=False
            )
            self._bm25 = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
            self._bm25.index(tokens, show_progress=False)
        query_tokens = bm25s.tokenize([query], stopwords="en", show_progress=False, return_ids=False)[0]
        if not query_tokens:
            return []
        scores = self._bm25.get_scores(query_tokens)
        return rank_order(
            (doc_id, float(score))
            for doc_id, score in zip(self._bm25_ids, scores)
            if score > 0 and doc_id in allowed
        )

    def _vector(self, query: str, allowed: set[str]) -> list[tuple[str, float]]:
        import numpy as np

        if self._matrix is None:
            self._matrix_ids = sorted(self._docs)
            matrix = np.asarray([self._docs[i].embedding for i in self._matrix_ids], dtype=np.float32)
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            self._matrix = matrix / np.where(norms == 0, 1, norms)
        q = np.asarray(self.embedder.get_embedding(query), dtype=np.float32)
        q = q / (np.linalg.norm(q) or 1.0)
        scores = self._matrix @ q
        return rank_order(
            (doc_id, float(score)) for doc_id, score in zip(self._matrix_ids, scores) if doc_id in allowed
        )
