"""Reciprocal rank fusion and the deterministic ordering every store shares."""

from __future__ import annotations

from typing import Any, Iterable, Sequence


def rank_order(scored: Iterable[tuple[str, float]], precision: int | None = None) -> list[tuple[str, float]]:
    """Sort by score descending, then by id ascending, so ties never depend on input order.

    With ``precision``, scores equal to that many decimals count as ties (see
    ``similarity.SIMILARITY_PRECISION``).
    """
    if precision is None:
        return sorted(scored, key=lambda item: (-item[1], item[0]))
    return sorted(scored, key=lambda item: (-round(item[1], precision), item[0]))


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], k: int = 60) -> list[tuple[str, float]]:
    """Fuse ranked id lists: score(d) = sum over lists of 1 / (k + rank), rank starting at 1."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, doc_id in enumerate(ranking, start=1):
            scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (k + rank)
    return rank_order(scores.items())


# up to this many scores, sorting them all is faster than selecting with numpy first
SORT_AT_MOST = 64


def top_ranked(ids: Sequence[str], scores: Any, depth: int, precision: int | None = None) -> list[tuple[str, float]]:
    """``rank_order`` of (ids, scores) cut to ``depth``; beyond ``SORT_AT_MOST`` scores, the
    candidates are selected with numpy first.

    Everything scoring at least the depth-th best score (after rounding) is kept, so ties
    at the cut are still broken by id, exactly as a full sort would.
    """
    import numpy as np

    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0 or depth <= 0:
        return []
    if scores.size <= SORT_AT_MOST or scores.size <= depth:
        return rank_order(zip(ids, scores.tolist()), precision)[:depth]
    keyed = np.round(scores, precision) if precision is not None else scores
    threshold = np.partition(keyed, scores.size - depth)[scores.size - depth]
    chosen = np.flatnonzero(keyed >= threshold)
    return rank_order(zip([ids[i] for i in chosen.tolist()], scores[chosen].tolist()), precision)[:depth]
