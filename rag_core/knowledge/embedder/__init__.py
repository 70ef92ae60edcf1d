"""Agno's module paths for embedders (``agno.knowledge.embedder.openai`` and so on), so a program
moves over by changing ``agno`` to ``rag_core`` in its imports. Thin aliases of ``rag_core.embedder``."""

from rag_core.embedder import CohereEmbedder, Embedder, GeminiEmbedder, OpenAIEmbedder

__all__ = ["CohereEmbedder", "Embedder", "GeminiEmbedder", "OpenAIEmbedder"]
