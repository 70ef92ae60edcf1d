"""Agno's ``agno.knowledge.embedder.openai``."""

from rag_core.embedder.openai import OpenAIEmbedder

__all__ = ["OpenAIEmbedder"]
