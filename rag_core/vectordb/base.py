"""VectorDb: the contract every store fulfils, and the search logic they share.

A store implements storage and two rankings (vector, keyword). Everything else — ids,
idempotent ingestion, embedding, filters, hybrid fusion, tie-breaking, reranking — lives
here once, so swapping stores does not change results for exact search.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from rag_core.document import Document
from rag_core.errors import RagCoreError
from rag_core.text import without_surrogates
from rag_core.vectordb.fusion import reciprocal_rank_fusion
from rag_core.vectordb.search_type import SearchType

if TYPE_CHECKING:
    from rag_core.embedder.base import Embedder

Ranking = list[tuple[str, float]]


class VectorDbError(RagCoreError):
    """A store refused an operation (bad name, dimension mismatch, unreachable database)."""


def matches(meta_data: dict[str, Any], filters: dict[str, Any] | None) -> bool:
    """Metadata filter semantics shared by all stores: every key must be equal."""
    return not filters or all(meta_data.get(k) == v for k, v in filters.items())


class VectorDb(ABC):
    def __init__(
        self,
        embedder: Embedder | None = None,
        search_type: SearchType | str | None = None,
        hybrid_rrf_k: int = 60,
        reranker: Any = None,
        candidate_depth: int | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> None:
        self.name = name  # a label, as Agno's stores take it; the table or collection is named apart
        self.description = description
        default = SearchType.hybrid if embedder is not None else SearchType.keyword
        self.search_type = SearchType(search_type) if search_type is not None else default
        if self.search_type is not SearchType.keyword and embedder is None:
            raise ValueError(f"search_type={self.search_type.value!r} needs an embedder")
        if hybrid_rrf_k < 1:
            raise ValueError(f"hybrid_rrf_k must be at least 1, got {hybrid_rrf_k}")
        self.embedder = embedder
        self.hybrid_rrf_k = hybrid_rrf_k
        self.reranker = reranker
        self.candidate_depth = candidate_depth

    # ----------------------------------------------------------- what a store implements
    @abstractmethod
    def count(self) -> int: ...

    @abstractmethod
    def _existing_ids(self, ids: list[str]) -> set[str]: ...

    @abstractmethod
    def _write(self, documents: list[Document], replace_name: str | None = None, upsert: bool = False) -> int | None:
        """Store documents (ids and embeddings set) in one step; with ``replace_name``, first
        remove every document of that name. All of it happens, or none of it. Returns the rows
        really written when the store can tell (a concurrent writer may have stored some first)."""

    @abstractmethod
    def _delete(self, ids: list[str] | None, name: str | None) -> int: ...

    @abstractmethod
    def _fetch(self, ids: list[str]) -> dict[str, Document]: ...

    @abstractmethod
    def _vector_ranking(self, vector: list[float], depth: int, filters: dict[str, Any] | None) -> Ranking: ...

    @abstractmethod
    def _keyword_ranking(self, query: str, depth: int, filters: dict[str, Any] | None) -> Ranking: ...

    def _hybrid_ranking(self, query: str, vector: list[float], depth: int, filters: dict[str, Any] | None) -> Ranking:
        return reciprocal_rank_fusion(
            [[i for i, _ in self._vector_ranking(vector, depth, filters)],
             [i for i, _ in self._keyword_ranking(query, depth, filters)]],
            k=self.hybrid_rrf_k,
        )

    # ----------------------------------------------------------- ingestion
    def _prepare(self, documents: list[Document], progress: bool = False) -> list[Document]:
        unique: dict[str, Document] = {}
        for doc in documents:
            if not doc.content.strip():
                raise VectorDbError(f"document {doc.name or doc.id or '(unnamed)'!r} has no content")
            doc.id = doc.id or doc.content_hash
            unique.setdefault(doc.id, doc)
        docs = list(unique.values())
        if self.embedder is not None:
            todo = [d for d in docs if d.embedding is None]
            if todo:
                vectors = self.embedder.embed([d.content for d in todo], "document", progress=progress)
                for doc, vector in zip(todo, vectors):
                    doc.embedding = [float(x) for x in vector]
        return docs

    @staticmethod
    def _clean(documents: list[Document]) -> list[Document]:
        """Text that is not valid Unicode is repaired before anything hashes or stores it (rag_core.text)."""
        for doc in documents:
            label = doc.name or doc.id or "(unnamed)"
            doc.content = without_surrogates(doc.content, f"the text of document {label!r}")
            doc.meta_data = {k: without_surrogates(v, f"meta_data[{k!r}] of document {label!r}") if isinstance(v, str) else v
                             for k, v in doc.meta_data.items()}
            if doc.name is not None:
                doc.name = without_surrogates(doc.name, "a document name")
        return documents

    def insert(self, documents: list[Document], progress: bool = False) -> int:
        """Store the documents not present yet (by id); returns how many were added."""
        documents = self._clean(documents)
        candidates = {(d.id or d.content_hash): d for d in documents}
        existing = self._existing_ids(list(candidates))
        new = self._prepare([d for i, d in candidates.items() if i not in existing], progress)
        if not new:
            return 0
        written = self._write(new)
        return len(new) if written is None else written

    def upsert(self, documents: list[Document], progress: bool = False) -> int:
        """Store the documents, replacing any with the same id."""
        docs = self._prepare(self._clean(documents), progress)
        if docs:
            self._write(docs, upsert=True)
        return len(docs)

    def replace(self, name: str, documents: list[Document], progress: bool = False) -> int:
        """Replace every document called ``name`` by ``documents``, atomically."""
        docs = self._prepare(self._clean(documents), progress)
        self._write(docs, replace_name=name, upsert=True)
        return len(docs)

    def delete(self, ids: list[str] | None = None, name: str | None = None) -> int:
        if ids is None and name is None:
            raise ValueError("delete: give ids=[...] or name=...")
        return self._delete(ids, name)

    # ----------------------------------------------------------- search
    def depth_for(self, limit: int) -> int:
        """How many candidates each ranking contributes (to fusion and to the reranker)."""
        return self.candidate_depth or max(3 * limit, 30)

    def rank(self, query: str, limit: int, filters: dict[str, Any] | None = None) -> Ranking:
        """(id, score) pairs, best first, before reranking."""
        # a single ranking shown as it is needs no candidates beyond the limit; fusion and a
        # reranker get a deeper list to work on
        alone = self.search_type is not SearchType.hybrid and self.reranker is None and self.candidate_depth is None
        depth = limit if alone else self.depth_for(limit)
        if self.search_type is SearchType.keyword:
            return self._keyword_ranking(query, depth, filters)
        vector = self.embedder.embed([query], "query")[0]  # type: ignore[union-attr]
        if self.search_type is SearchType.vector:
            return self._vector_ranking(vector, depth, filters)
        return self._hybrid_ranking(query, vector, depth, filters)

    def search(self, query: str, limit: int, filters: dict[str, Any] | None = None) -> list[Document]:
        """The ``limit`` best documents for ``query`` among those matching ``filters``."""
        if limit <= 0 or not query.strip():
            return []
        ranking = self.rank(query, limit, filters)
        if self.reranker is None:
            ranking = ranking[:limit]
        found = self._fetch([i for i, _ in ranking])
        docs = [found[i] for i, _ in ranking if i in found]
        if self.reranker is not None:
            docs = self.reranker.rerank(query, docs)[:limit]
        return docs
