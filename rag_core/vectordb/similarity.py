"""Cosine similarity computed one way for every store.

Stores hold the same float32 vectors but compute distances differently (numpy, hnswlib,
pgvector), so near-equal scores could fall differently from store to store. Every store
therefore ranks its candidates with this function: cosine in float64 from the stored
values. The same inputs then give the same scores to ~1e-15, and ``SIMILARITY_PRECISION``
(9 decimals) absorbs what is left, so exact search ranks identically everywhere.
"""

from __future__ import annotations

from typing import Any, Sequence

from rag_core._optional import require

FEATURE = "vector search"  # what a missing numpy is named for

SIMILARITY_PRECISION = 9


def normalized_rows(vectors: Any) -> Any:
    """Rows as float32 (what every store keeps), then scaled to unit length in float64."""
    np = require("numpy", extra="agent", feature=FEATURE)

    matrix = np.asarray(vectors, dtype=np.float32).astype(np.float64)
    if matrix.ndim == 1:
        matrix = matrix.reshape(1, -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def unit_vector(query: Sequence[float]) -> Any:
    """``query`` as every cosine here takes it: its float32 values at unit length in float64."""
    return normalized_rows(query)[0]


def cosine_scores(normalized_matrix: Any, query: Sequence[float]) -> Any:
    """Cosine of each (unit-length) row with ``query``."""
    return normalized_matrix @ unit_vector(query)


def candidate_margin(depth: int) -> int:
    """How many extra candidates an approximate or differently-computed ranking should fetch,
    so rescoring can settle near-ties at the cut-off."""
    return depth // 10 + 10
