"""PgVector's vector index, under Agno's name: ``PgVector(..., vector_index=HNSW(m=16, ef_search=100))``.

``vector_index=None`` is exact search (every vector scored: recall 1, time linear in the table);
``HNSW(...)`` an approximate index whose query time barely grows with the table. Where one
overtakes the other, and what recall HNSW costs, is measured in docs/stores-at-scale.md.

The defaults are rag-core's (pgvector's own m and ef_construction, and an ef_search of 100),
not Agno's (``ef_search=5``, ``ef_construction=200``): a search asks the index for more
candidates than it returns (``candidate_depth``) and a candidate list of five is short of that.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class HNSW:
    """pgvector's HNSW index: ``m`` links per node and ``ef_construction`` candidates while
    building (fixed once built), ``ef_search`` candidates per query (read at every search)."""

    name: str | None = None  # Agno's field; the index is always named <table>_embedding_idx
    m: int = 16
    ef_search: int = 100
    ef_construction: int = 64
    configuration: dict[str, Any] = field(default_factory=dict)  # Agno's; PostgreSQL settings are not changed

    def __post_init__(self) -> None:
        for setting in ("m", "ef_search", "ef_construction"):
            value = getattr(self, setting)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"HNSW {setting} must be a positive integer, got {value!r}")
        if not 2 <= self.m <= 100:
            raise ValueError(f"HNSW m must be between 2 and 100 (pgvector's range), got {self.m}")
        if self.ef_construction < 2 * self.m:
            raise ValueError(f"HNSW ef_construction must be at least 2 * m = {2 * self.m} (pgvector's rule), "
                             f"got {self.ef_construction}")
        if self.ef_search > 1000:
            raise ValueError(f"HNSW ef_search must be at most 1000 (pgvector's range), got {self.ef_search}")
