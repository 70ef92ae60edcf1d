"""Agno's ``agno.knowledge.embedder.google``."""

from rag_core.embedder.gemini import GeminiEmbedder

__all__ = ["GeminiEmbedder"]
