"""Cosine similarity computed one way for every store.

Stores hold the same float32 vectors but compute distances differently (numpy, hnswlib,
pgvector), so near-equal scores could fall differently from store to store. Every store
therefore ranks its candidates with this function: cosine in float64 from the stored
values. The same inputs then give the same scores to ~1e-15, and ``SIMILARITY_PRECISION``
(9 decimals) absorbs what is left, so exact search ranks identically everywhere.
"""

from __future__ import annotations

import math
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
    # the norms as ``numpy.linalg.norm(matrix, axis=1)`` sums them (the same values, bit for
    # bit) without its argument handling, and the rows divided in place: a search calls this
    # for every query, and those fixed costs were a good share of a small corpus's search
    squares = matrix * matrix
    norms = np.sqrt(np.add.reduce(squares, axis=1, keepdims=True, out=squares[:, :1]))
    # a zero row stays zero (divided by 1e-300 as by 1): a row of float32 values that is not
    # zero has a norm of at least 1.4e-45, which this leaves as it is
    matrix /= np.maximum(norms, 1e-300, out=norms)
    return matrix


def unit_vector(query: Sequence[float]) -> Any:
    """``query`` as every cosine here takes it: its float32 values at unit length in float64."""
    np = require("numpy", extra="agent", feature=FEATURE)

    vector = np.asarray(query, dtype=np.float32)
    if vector.ndim != 1:
        return normalized_rows(vector)[0]
    vector = vector.astype(np.float64)
    norm = math.sqrt(np.add.reduce(vector * vector))  # as normalized_rows sums a row
    vector /= norm or 1.0
    return vector


def cosine_scores(normalized_matrix: Any, query: Sequence[float]) -> Any:
    """Cosine of each (unit-length) row with ``query``."""
    return normalized_matrix @ unit_vector(query)


def candidate_margin(depth: int) -> int:
    """How many extra candidates an approximate or differently-computed ranking should fetch,
    so rescoring can settle near-ties at the cut-off."""
    return depth // 10 + 10
