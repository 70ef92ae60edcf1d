"""Vector stores. Heavy backends (Chroma, PostgreSQL) import their drivers only when used."""

from rag_core.vectordb.base import VectorDb
from rag_core.vectordb.in_memory import InMemoryVectorDb
from rag_core.vectordb.search_type import SearchType

__all__ = ["InMemoryVectorDb", "SearchType", "VectorDb"]
