"""Knowledge: the documents an agent can search, on top of a vector store."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from rag_core._optional import http_library
from rag_core.document import Document
from rag_core.knowledge.chunking import ChunkingStrategy
from rag_core.knowledge.readers import ReaderError, aread_url, read_path, read_text, read_url
from rag_core.knowledge.search_tool import KNOWLEDGE_SEARCH_BLOCK

if TYPE_CHECKING:
    from rag_core.db.protocols import ContentsDb
    from rag_core.db.records import ContentRecord
    from rag_core.vectordb.base import VectorDb


class Knowledge:
    def __init__(
        self,
        name: str | None = None,
        description: str | None = None,
        vector_db: VectorDb | None = None,
        max_results: int = 10,
        chunking: ChunkingStrategy | None = None,
        contents_db: ContentsDb | None = None,
    ) -> None:
        if vector_db is None:
            from rag_core.vectordb.in_memory import InMemoryVectorDb

            vector_db = InMemoryVectorDb()
        if max_results < 1:
            raise ValueError(f"max_results must be at least 1, got {max_results}")
        self.name = name
        self.description = description
        self.vector_db = vector_db
        self.max_results = max_results
        self.chunking = chunking or ChunkingStrategy()
        self.contents_db = contents_db

    # ----------------------------------------------------------- reading
    def read(
        self,
        text: str | None = None,
        *,
        path: str | Path | None = None,
        url: str | None = None,
        documents: list[Document] | None = None,
        name: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> list[Document]:
        """The chunked documents ``insert`` would store, without storing them."""
        given = [x is not None for x in (text, path, url, documents)]
        if sum(given) != 1:
            raise ValueError("give exactly one of text=..., path=..., url=... or documents=[...]")
        meta = dict(metadata or {})
        if text is not None:
            return read_text(text, name=name, metadata=meta, chunking=self.chunking)
        if path is not None:
            return read_path(path, name=name, metadata=meta, chunking=self.chunking)
        if url is not None:
            return read_url(url, name=name, metadata=meta, chunking=self.chunking)
        docs = list(documents or [])
        for doc in docs:
            if meta:
                doc.meta_data = {**doc.meta_data, **meta}
            if name is not None and doc.name is None:
                doc.name = name
        if not docs:
            raise ReaderError("documents=[] holds no documents")
        return docs

    # ----------------------------------------------------------- writing
    def insert(self, text: str | None = None, *, path: str | Path | None = None, url: str | None = None,
               documents: list[Document] | None = None, name: str | None = None,
               metadata: dict[str, Any] | None = None) -> int:
        """Read, chunk, embed and store content; returns how many new chunks were stored.

        Chunks are identified by a hash of their content, so inserting the same content
        again stores nothing.
        """
        docs = self.read(text, path=path, url=url, documents=documents, name=name, metadata=metadata)
        return self._store(docs, lambda: self.vector_db.insert(docs, progress=True))

    def upsert(self, text: str | None = None, *, path: str | Path | None = None, url: str | None = None,
               documents: list[Document] | None = None, name: str | None = None,
               metadata: dict[str, Any] | None = None) -> int:
        """Like insert, but content that is already stored under the same name is replaced."""
        docs = self.read(text, path=path, url=url, documents=documents, name=name, metadata=metadata)
        names = {d.name for d in docs}
        if len(names) == 1 and None not in names:
            name = next(iter(names))
            return self._store(docs, lambda: self.vector_db.replace(name, docs, progress=True))
        return self._store(docs, lambda: self.vector_db.upsert(docs, progress=True))

    def _store(self, docs: list[Document], write: Callable[[], int]) -> int:
        """Run ``write`` and, with a ``contents_db``, record each source's status around it."""
        if self.contents_db is None:
            return write()
        records = self._content_records(docs)
        self.contents_db.record_contents(records)  # one transaction per batch, not per source
        try:
            added = write()
        except Exception as exc:
            for record in records:
                record.status, record.error = "failed", f"{type(exc).__name__}: {exc}"
            self.contents_db.record_contents(records)
            raise
        for record in records:
            record.status = "completed"
        self.contents_db.record_contents(records)
        return added

    def _content_records(self, docs: list[Document]) -> list[ContentRecord]:
        import hashlib

        from rag_core.db.records import ContentRecord

        groups: dict[tuple[str | None, str | None], list[Document]] = {}
        for doc in docs:
            groups.setdefault((doc.name, doc.meta_data.get("source")), []).append(doc)
        records = []
        for (name, source), members in groups.items():
            identity = hashlib.sha256(f"{self.name}|{name}|{source}".encode()).hexdigest()[:32]
            digest = hashlib.sha256("".join(d.content_hash for d in members).encode()).hexdigest()
            records.append(ContentRecord(id=identity, knowledge=self.name, name=name, source=source,
                                         content_hash=digest, status="processing", chunks=len(members)))
        return records

    def insert_many(self, items: list[dict[str, Any]]) -> int:
        """Insert several sources; each item holds the keyword arguments of one ``insert``."""
        return sum(self.insert(**item) for item in items)

    async def ainsert_many(self, items: list[dict[str, Any]] | None = None, *, urls: list[str] | None = None) -> int:
        """Insert several sources, fetching URLs concurrently."""
        httpx = http_library("reading documents by URL")

        items = list(items or []) + [{"url": u} for u in urls or []]
        web = [i for i in items if "url" in i]
        async with httpx.AsyncClient(timeout=30.0) as client:
            fetched = await asyncio.gather(*(
                aread_url(i["url"], client, name=i.get("name"), metadata=dict(i.get("metadata") or {}), chunking=self.chunking)
                for i in web
            ))
        added = sum(self._store(docs, lambda docs=docs: self.vector_db.insert(docs, progress=True)) for docs in fetched)
        return added + sum(self.insert(**i) for i in items if "url" not in i)

    def delete(self, ids: list[str] | None = None, name: str | None = None) -> int:
        return self.vector_db.delete(ids=ids, name=name)

    # ----------------------------------------------------------- searching
    def search(self, query: str, max_results: int | None = None, filters: dict[str, Any] | None = None) -> list[Document]:
        return self.vector_db.search(query, limit=max_results or self.max_results, filters=filters)

    retrieve = search

    def build_context(self) -> str:
        """The ``<knowledge_base>`` block that tells the model it can search."""
        return KNOWLEDGE_SEARCH_BLOCK
