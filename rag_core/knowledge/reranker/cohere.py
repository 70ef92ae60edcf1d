"""Agno's ``agno.knowledge.reranker.cohere``."""

from rag_core.reranker.cohere import CohereReranker

__all__ = ["CohereReranker"]
