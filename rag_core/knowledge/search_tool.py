"""The knowledge search tool, ``search_knowledge_base``, that an agent with knowledge offers the
model, and the system-message block that tells the model about it.

The tool closes over everything a search needs: the knowledge source, the filters, the references
format, and the run's ``references`` list where each search is recorded. It knows nothing of the
agent. Its definition as the model sees it is made once, in ``rag_core.tools.knowledge``.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable

from rag_core.knowledge.references import ReferencesFormat, search_result_text

if TYPE_CHECKING:
    from rag_core.knowledge.source import KnowledgeSource

__all__ = ["KNOWLEDGE_SEARCH_BLOCK", "knowledge_search_tool", "search_and_record"]

KNOWLEDGE_SEARCH_BLOCK = (
    "<knowledge_base>\n"
    "You have a knowledge base you can search using the search_knowledge_base tool. "
    "Search before answering questions—don't assume you know the answer. "
    "For ambiguous questions, search first rather than asking for clarification.\n"
    "</knowledge_base>"
)


def search_and_record(knowledge: KnowledgeSource, query: str, references: list[dict[str, Any]],
                     filters: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Search ``knowledge``, record the search in ``references``, return the documents
    (``Document.to_dict()`` shapes)."""
    started = time.perf_counter()
    kwargs: dict[str, Any] = {"max_results": None}
    if filters:
        kwargs["filters"] = filters
    docs = [d.to_dict() for d in knowledge.search(query, **kwargs)]
    elapsed = time.perf_counter() - started
    references.append({"query": query, "references": docs, "time": round(elapsed, 4)})
    return docs


def knowledge_search_tool(knowledge: KnowledgeSource, references: list[dict[str, Any]], *,
                          filters: dict[str, Any] | None = None,
                          references_format: ReferencesFormat = "json") -> Callable[[str], str]:
    """The ``search_knowledge_base`` function of one run, recording its searches in ``references``."""

    def search_knowledge_base(query: str) -> str:
        """Use this function to search the knowledge base for information about a query.

        Args:
            query: The query to search for.
        """
        return search_result_text(search_and_record(knowledge, query, references, filters), references_format)

    return search_knowledge_base
