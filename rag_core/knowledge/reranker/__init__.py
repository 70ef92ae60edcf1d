"""Agno's module paths for rerankers (``agno.knowledge.reranker.cohere``): thin aliases of
``rag_core.reranker``."""

from rag_core.reranker import CohereReranker, Reranker

__all__ = ["CohereReranker", "Reranker"]
