"""KnowledgeSource: what an Agent needs of its ``knowledge``.

``Knowledge`` is one; any object with these two methods will do (a search service of your own,
a fake in a test), since the agent only searches and describes it.
"""

from __future__ import annotations

from typing import Any, Protocol

from rag_core.document import Document

__all__ = ["KnowledgeSource"]


class KnowledgeSource(Protocol):
    def search(self, query: str, max_results: int | None = None,
               filters: dict[str, Any] | None = None) -> list[Document]:
        """The best documents for ``query`` among those matching ``filters``, best first: at most
        ``max_results``, or the source's own default number when it is None."""
        ...

    def build_context(self) -> str:
        """The system-message block that tells the model it can search (``KNOWLEDGE_SEARCH_BLOCK``)."""
        ...
