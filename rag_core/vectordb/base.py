"""VectorDb: the contract every store fulfils, and everything the stores share.

A store implements storage (insert, upsert, replace a named source, delete, fetch) and two
rankings (vector, keyword). Everything else lives here once, so swapping stores does not change
results for exact search: ids, idempotent ingestion, embedding, the check that embeddings have
the store's size, the write lock around every change, filters, hybrid fusion, the float64
rescoring of a store's own vector candidates, tie-breaking and reranking.

No store changes its caller's objects. The base fills in each document's id and embedding, as
Agno's stores do (callers read them: a corpus embedded once goes into several stores), and
nothing else: a document whose text must be repaired is stored as a repaired copy.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ContextManager

from rag_core._optional import require
from rag_core.document import Document, embedding_of
from rag_core.errors import RagCoreError
from rag_core.text import has_surrogates, without_surrogates
from rag_core.vectordb.fusion import reciprocal_rank_fusion, top_ranked
from rag_core.vectordb.search_type import SearchType
from rag_core.vectordb.similarity import SIMILARITY_PRECISION, candidate_margin, cosine_scores, normalized_rows

if TYPE_CHECKING:
    from rag_core.embedder.base import Embedder
    from rag_core.reranker.base import Reranker

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
        reranker: Reranker | None = None,
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
        self._file_lock: Any = None

    # ----------------------------------------------------------- what a store implements
    @abstractmethod
    def count(self) -> int: ...

    @abstractmethod
    def _existing_ids(self, ids: list[str]) -> set[str]: ...

    @abstractmethod
    def _stored_dimensions(self) -> int | None:
        """The size of the embeddings the store holds, or None while any size may come (nothing
        stored yet)."""

    @abstractmethod
    def _insert(self, documents: list[Document]) -> int | None:
        """Store the documents (ids and embeddings set) whose ids are not stored yet, in one step.
        Returns the rows really written when the store can tell (a concurrent writer may have
        stored some since the caller looked)."""

    @abstractmethod
    def _upsert(self, documents: list[Document]) -> None:
        """Store the documents, replacing those with the same ids, in one step."""

    @abstractmethod
    def _replace(self, name: str, documents: list[Document]) -> None:
        """Replace every document called ``name`` by ``documents``: all of it happens, or none of it."""

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

    def _write_lock(self) -> ContextManager[Any]:
        """Held around every write and delete: nothing by default; a store that several processes
        may write at once returns its cross-process lock (``_file_lock_at``)."""
        return nullcontext()

    @property
    def _keeps_embeddings(self) -> bool:
        """Whether the store keeps the documents' embeddings (a keyword-only LanceDB does not)."""
        return True

    def _describe(self) -> str:
        """How messages name the store: its kind and where its documents are."""
        return type(self).__name__ + (f" {self.name!r}" if self.name else "")

    # ----------------------------------------------------------- what the stores share
    def _file_lock_at(self, path: Path, extra: str) -> Any:
        """A lock on ``path`` across processes, made once (re-entrant within this store); ``extra``
        is the one that brings this store (and the lock's library)."""
        if self._file_lock is None:
            FileLock = require("filelock", extra=extra, feature=type(self).__name__).FileLock

            path.parent.mkdir(parents=True, exist_ok=True)
            self._file_lock = FileLock(str(path))
        return self._file_lock

    def _dimension_error(self, expected: int, got: int, source: str) -> VectorDbError:
        """The one message for an embedding of the wrong size, whatever the store and wherever met."""
        return VectorDbError(f"{self._describe()} expects {expected}-dimensional embeddings, got {got} dimensions "
                             f"from {source}; use the embedder the store was built with, or another store")

    def _check_document_dimensions(self, documents: list[Document]) -> None:
        """Every embedding has the store's size; in a store still empty, the size of the first."""
        if not self._keeps_embeddings:
            return
        expected = self._stored_dimensions()
        for doc in documents:
            embedding = embedding_of(doc)
            if embedding is None:
                continue
            if expected is None:
                expected = len(embedding)
            elif len(embedding) != expected:
                raise self._dimension_error(expected, len(embedding), f"document {doc.name or doc.id!r}")

    def _check_query_dimensions(self, vector: list[float]) -> None:
        # read from the store, not assumed from this process's embedder: another embedder may have filled it
        expected = self._stored_dimensions()
        if expected is not None and len(vector) != expected:
            raise self._dimension_error(expected, len(vector), f"the query (embedded by {self.embedder.cache_key})")  # type: ignore[union-attr]

    @staticmethod
    def _candidates(depth: int) -> int:
        """How many candidates to ask a store's own vector search for: a few beyond ``depth``, so
        the rescoring (``_rescored``) settles near-ties at the cut-off."""
        return depth + candidate_margin(depth)

    @staticmethod
    def _rescored(ids: list[str], vectors: Any, query: list[float], depth: int) -> Ranking:
        """A store's own vector candidates ranked by the shared float64 cosine and tie rule
        (similarity.py): the store computed its distances its own way, and exact search must
        rank the same in every store."""
        if not ids:
            return []
        return top_ranked(ids, cosine_scores(normalized_rows(vectors), query), depth, SIMILARITY_PRECISION)

    # ----------------------------------------------------------- ingestion
    def _prepare(self, documents: list[Document], progress: bool = False) -> list[Document]:
        """The documents to store, once each, with their ids (content hashes) and embeddings filled in."""
        unique: dict[str, Document] = {}
        for doc in documents:
            if not doc.content.strip():
                raise VectorDbError(f"document {doc.name or doc.id or '(unnamed)'!r} has no content")
            doc.id = doc.id or doc.content_hash
            unique.setdefault(doc.id, doc)
        docs = list(unique.values())
        if self.embedder is not None:
            todo = [d for d in docs if embedding_of(d) is None]
            if todo:
                texts = [d.content for d in todo]
                as_rows = getattr(self.embedder, "embed_float32", None)
                if as_rows is not None:
                    # an embedding cache holds float32 already: its rows go to the documents as they
                    # are (views of one read-only matrix), and no Python float is made per value
                    matrix = as_rows(texts, "document", progress=progress)
                    matrix.flags.writeable = False
                    for doc, row in zip(todo, matrix):
                        doc.embedding = row
                else:
                    # an embedder's own values, unrounded, as a caller reading them back expects
                    vectors = self.embedder.embed(texts, "document", progress=progress)
                    for doc, vector in zip(todo, vectors):
                        doc.embedding = [float(x) for x in vector]
        return docs

    @staticmethod
    def _clean(documents: list[Document]) -> list[Document]:
        """Text that is not valid Unicode is repaired before anything hashes or stores it
        (rag_core.text), in a copy: the caller's document keeps its text."""
        return [_repaired(doc) for doc in documents]

    def insert(self, documents: list[Document], progress: bool = False) -> int:
        """Store the documents not present yet (by id); returns how many were added."""
        documents = self._clean(documents)
        candidates = {(d.id or d.content_hash): d for d in documents}
        existing = self._existing_ids(list(candidates))
        new = self._prepare([d for i, d in candidates.items() if i not in existing], progress)
        if not new:
            return 0
        with self._write_lock():
            self._check_document_dimensions(new)
            written = self._insert(new)
        return len(new) if written is None else written

    def upsert(self, documents: list[Document], progress: bool = False) -> int:
        """Store the documents, replacing any with the same id."""
        docs = self._prepare(self._clean(documents), progress)
        if docs:
            with self._write_lock():
                self._check_document_dimensions(docs)
                self._upsert(docs)
        return len(docs)

    def replace(self, name: str, documents: list[Document], progress: bool = False) -> int:
        """Replace every document called ``name`` by ``documents``, atomically."""
        docs = self._prepare(self._clean(documents), progress)
        with self._write_lock():
            self._check_document_dimensions(docs)
            self._replace(name, docs)
        return len(docs)

    def delete(self, ids: list[str] | None = None, name: str | None = None) -> int:
        if ids is None and name is None:
            raise ValueError("delete: give ids=[...] or name=...")
        with self._write_lock():
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
        vector = self._query_embedding(query)
        self._check_query_dimensions(vector)
        if self.search_type is SearchType.vector:
            return self._vector_ranking(vector, depth, filters)
        return self._hybrid_ranking(query, vector, depth, filters)

    def _query_embedding(self, query: str) -> Any:
        """The query's embedding as this store's rankings take it: a list of floats (a store
        that takes a float32 row returns one when its embedder holds them)."""
        return self.embedder.embed([query], "query")[0]  # type: ignore[union-attr]

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


def _repaired(doc: Document) -> Document:
    """``doc`` itself, or, when its text, metadata or name hold lone surrogates, a copy with them replaced."""
    if not (has_surrogates(doc.content) or (doc.name is not None and has_surrogates(doc.name))
            or any(isinstance(v, str) and has_surrogates(v) for v in doc.meta_data.values())):
        return doc  # the common case: no copy
    label = doc.name or doc.id or "(unnamed)"
    return replace(
        doc,
        content=without_surrogates(doc.content, f"the text of document {label!r}"),
        meta_data={k: without_surrogates(v, f"meta_data[{k!r}] of document {label!r}") if isinstance(v, str) else v
                   for k, v in doc.meta_data.items()},
        name=without_surrogates(doc.name, "a document name") if doc.name is not None else None,
    )
