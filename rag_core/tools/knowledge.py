"""The ``search_knowledge_base`` tool the agent adds when it has knowledge and search_knowledge is on."""

from __future__ import annotations

from rag_core.tools.context import RunContext
from rag_core.tools.function import Function


def search_knowledge_base(query: str, run_context: RunContext) -> str:
    """Use this function to search the knowledge base for information about a query.

    Args:
        query: The query to search for.
    """
    agent = run_context.agent
    docs = agent.search_knowledge_references(query, run_context.references)
    from rag_core.agent.references import search_result_text

    return search_result_text(docs, agent.references_format)


SEARCH_KNOWLEDGE_FUNCTION = Function.from_callable(search_knowledge_base)
