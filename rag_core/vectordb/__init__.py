"""Vector stores. Chroma, LanceDB and PostgreSQL drivers are imported only when those stores are used."""

from rag_core.vectordb.base import VectorDb, VectorDbError
from rag_core.vectordb.chroma import ChromaDb
from rag_core.vectordb.in_memory import InMemoryVectorDb
from rag_core.vectordb.lancedb import LanceDb
from rag_core.vectordb.pgvector import PgVector
from rag_core.vectordb.search_type import SearchType

__all__ = ["ChromaDb", "InMemoryVectorDb", "LanceDb", "PgVector", "SearchType", "VectorDb", "VectorDbError"]
