"""Reranker: reorders retrieved candidates with a stronger (usually cross-encoder) model."""

from __future__ import annotations

from abc import ABC, abstractmethod

from rag_core.document import Document


class Reranker(ABC):
    @abstractmethod
    def rerank(self, query: str, documents: list[Document]) -> list[Document]:
        """The documents, best first; each carries its score in ``meta_data["reranking_score"]``."""
