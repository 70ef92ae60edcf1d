"""VectorDb: what every store offers to Knowledge."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from rag_core.document import Document


class VectorDb(ABC):
    @abstractmethod
    def insert(self, documents: list[Document]) -> int:
        """Store documents not already present (by id); return how many were added."""

    @abstractmethod
    def search(self, query: str, limit: int, filters: dict[str, Any] | None = None) -> list[Document]:
        """The ``limit`` best documents for ``query`` that match ``filters``, best first."""

    @abstractmethod
    def count(self) -> int: ...


def matches(meta_data: dict[str, Any], filters: dict[str, Any] | None) -> bool:
    """Metadata filter semantics shared by all stores: every key must be equal."""
    return not filters or all(meta_data.get(k) == v for k, v in filters.items())
