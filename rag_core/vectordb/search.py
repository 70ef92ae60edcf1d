"""Agno's ``agno.vectordb.search``."""

from rag_core.vectordb.search_type import SearchType

__all__ = ["SearchType"]
