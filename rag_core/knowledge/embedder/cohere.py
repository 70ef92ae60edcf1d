"""Agno's ``agno.knowledge.embedder.cohere``."""

from rag_core.embedder.cohere import CohereEmbedder

__all__ = ["CohereEmbedder"]
