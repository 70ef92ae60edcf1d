"""The knowledge search as a tool the model can call: ``search_knowledge_base``.

What the tool does lives in ``rag_core.knowledge.search_tool``; each run binds it to the agent's
knowledge, filters and references format and to the run's references. What the model sees of it
(the definition) and the validation of its arguments are the same for every binding, so they are
made once, here (``SEARCH_KNOWLEDGE_FUNCTION``), and every binding shares them: a tool bound per
run costs no more than one made once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rag_core.knowledge.references import ReferencesFormat
from rag_core.knowledge.search_tool import KNOWLEDGE_SEARCH_BLOCK, knowledge_search_tool
from rag_core.tools.function import Function

if TYPE_CHECKING:
    from rag_core.document import Document
    from rag_core.knowledge.source import KnowledgeSource


class _NoKnowledge:
    """The knowledge behind ``SEARCH_KNOWLEDGE_FUNCTION`` itself, which no agent binds: it finds nothing."""

    def search(self, query: str, max_results: int | None = None,
               filters: dict[str, Any] | None = None) -> list[Document]:
        return []

    def build_context(self) -> str:
        return KNOWLEDGE_SEARCH_BLOCK


SEARCH_KNOWLEDGE_FUNCTION = Function.from_callable(knowledge_search_tool(_NoKnowledge(), []))


def knowledge_search_function(knowledge: KnowledgeSource, references: list[dict[str, Any]], *,
                              filters: dict[str, Any] | None = None,
                              references_format: ReferencesFormat = "json") -> Function:
    """``search_knowledge_base`` searching ``knowledge`` and recording each search in ``references``."""
    tool = knowledge_search_tool(knowledge, references, filters=filters, references_format=references_format)
    return SEARCH_KNOWLEDGE_FUNCTION.with_entrypoint(tool)
