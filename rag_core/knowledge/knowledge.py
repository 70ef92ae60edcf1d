"""Knowledge: the documents an agent can search, on top of a vector store."""

from __future__ import annotations

from typing import Any

from rag_core.document import Document
from rag_core.agent.system_message import KNOWLEDGE_SEARCH_BLOCK


class Knowledge:
    def __init__(
        self,
        name: str | None = None,
        description: str | None = None,
        vector_db: Any = None,
        max_results: int = 10,
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

    def insert(
        self,
        text: str | None = None,
        *,
        documents: list[Document] | None = None,
        name: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> int:
        """Add content; returns how many new documents were stored (duplicates are skipped)."""
        docs: list[Document] = list(documents or [])
        if text is not None:
            if not text.strip():
                raise ValueError(f"insert: the text of {name or 'the document'!r} is empty")
            docs.append(Document(content=text, meta_data=dict(metadata or {}), name=name))
        elif metadata:
            for doc in docs:
                doc.meta_data = {**doc.meta_data, **metadata}
        if not docs:
            raise ValueError("insert: give text=... or documents=[...]")
        return self.vector_db.insert(docs)

    def search(
        self, query: str, max_results: int | None = None, filters: dict[str, Any] | None = None
    ) -> list[Document]:
        return self.vector_db.search(query, limit=max_results or self.max_results, filters=filters)

    retrieve = search

    def build_context(self) -> str:
        """The ``<knowledge_base>`` block that tells the model it can search."""
        return KNOWLEDGE_SEARCH_BLOCK
