"""Reciprocal rank fusion and the deterministic ordering every store shares."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from rag_core._optional import require

FEATURE = "ranking search results"  # what a missing numpy is named for


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

# every how many scores ``kth_largest`` samples
SAMPLE_STRIDE = 8


def top_ranked(ids: Sequence[str], scores: Any, depth: int, precision: int | None = None) -> list[tuple[str, float]]:
    """``rank_order`` of (ids, scores) cut to ``depth``; beyond ``SORT_AT_MOST`` scores, the
    candidates are selected with numpy first.

    Everything scoring at least the depth-th best score (after rounding) is kept, so ties
    at the cut are still broken by id, exactly as a full sort would.
    """
    np = require("numpy", extra="agent", feature=FEATURE)

    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0 or depth <= 0:
        return []
    if scores.size <= SORT_AT_MOST or scores.size <= depth:
        return _strictly_ordered_top(ids, scores, depth, precision) or rank_order(zip(ids, scores.tolist()),
                                                                                   precision)[:depth]
    keyed = np.round(scores, precision) if precision is not None else scores
    threshold = kth_largest(keyed, depth)
    chosen = np.flatnonzero(keyed >= threshold)
    return rank_order(zip([ids[i] for i in chosen.tolist()], scores[chosen].tolist()), precision)[:depth]


def _strictly_ordered_top(ids: Sequence[str], scores: Any, depth: int,
                          precision: int | None) -> list[tuple[str, float]] | None:
    """``rank_order(zip(ids, scores), precision)[:depth]`` when no tie decides it, else None.

    The best ``depth + 1`` scores are ordered by value. When each is apart from the next by more
    than rounding to ``precision`` decimals can close (``_apart``), their rounded keys strictly
    decrease, and every other score's key is below the depth-th (rounding never reverses an
    order): the sort of all of them would give these ``depth``, in this order, so no id is
    compared and no score rounded. A tie among them, or a NaN anywhere (it has no order), leaves
    it to the full sort. For the few scores ``top_ranked`` sorts directly: plain Python is
    faster on them than numpy's calls.
    """
    values = scores.tolist()
    total = sum(values)
    if total != total:  # NaN: a score is NaN (or two are opposite infinities)
        return None
    order = sorted(range(len(values)), key=values.__getitem__, reverse=True)[: depth + 1]
    best = [values[n] for n in order]
    if not _apart(best, precision):
        return None
    return [(ids[n], score) for n, score in zip(order[:depth], best)]


def _apart(descending: list[float], precision: int | None) -> bool:
    """Whether rounding to ``precision`` decimals (Python's ``round``, or none) leaves these
    scores strictly decreasing; False whenever that is not sure, and for a NaN.

    Scores more than 2·10⁻ᵖ apart round to different multiples of 10⁻ᵖ, each at most half of
    10⁻ᵖ from its score; below ``2⁵⁰·10⁻ᵖ`` doubles are spaced at most a quarter of 10⁻ᵖ, so
    those multiples are distinct doubles too, in the same order.
    """
    pairs = zip(descending, descending[1:])
    if precision is None:
        return all(higher > lower for higher, lower in pairs)
    apart, limit = 2 * 10.0 ** -precision, 2.0 ** 50 * 10.0 ** -precision
    return (all(higher - lower > apart for higher, lower in pairs)
            and -limit < descending[-1] and descending[0] < limit)


def kth_largest(values: Any, k: int) -> Any:
    """The ``k``-th largest of ``values`` (1 ≤ k ≤ len(values)), found in a sample first.

    The k-th largest of every ``SAMPLE_STRIDE``-th value is never above the k-th largest of
    all, so the values at least that large hold the top k, and the k-th largest is found among
    those few (SciFact, 5,183 scores, k = 21: 32 µs partitioning all of them, about 10 this way).
    """
    np = require("numpy", extra="agent", feature=FEATURE)

    if len(values) >= 4 * SAMPLE_STRIDE * k:
        sample = values[::SAMPLE_STRIDE]
        bound = np.partition(sample, len(sample) - k)[len(sample) - k]
        kept = values[values >= bound]
        if len(kept) >= k:  # fewer only when NaNs fill the sample's top: then partition them all
            values = kept
    return np.partition(values, len(values) - k)[len(values) - k]
