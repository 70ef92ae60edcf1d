from __future__ import annotations

from enum import Enum


class SearchType(str, Enum):
    """How a store ranks documents for a query."""

    vector = "vector"  # cosine similarity of embeddings
    keyword = "keyword"  # BM25 full-text ranking
    hybrid = "hybrid"  # reciprocal rank fusion of the two
