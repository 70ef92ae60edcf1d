"""Embedders. Provider SDKs and local models load on first use."""

from rag_core.embedder.base import Embedder, InputType
from rag_core.embedder.cache import EmbeddingCache, EmbeddingCacheMiss
from rag_core.embedder.cohere import CohereEmbedder
from rag_core.embedder.gemini import GeminiEmbedder
from rag_core.embedder.local import LocalEmbedder
from rag_core.embedder.openai import OpenAIEmbedder

__all__ = [
    "CohereEmbedder",
    "Embedder",
    "EmbeddingCache",
    "EmbeddingCacheMiss",
    "GeminiEmbedder",
    "InputType",
    "LocalEmbedder",
    "OpenAIEmbedder",
]
