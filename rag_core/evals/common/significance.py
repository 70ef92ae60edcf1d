"""Paired significance of a difference in per-query scores (two retrievers, or one and its baseline).

A two-sided paired randomization test (Fisher's sign-flip test on the mean of per-query
differences, the test IR evaluation recommends for this): each query's pair of scores is swapped
at random, and the p-value is the share of swaps giving a mean difference at least as large as
the one observed. scipy runs it; with up to 13 queries it enumerates every swap (exact), beyond
that it draws ``RESAMPLES`` of them from a fixed seed, so the same scores give the same p-value
on every machine and every run: a CI gate must not flap on its own statistics.
"""

from __future__ import annotations

from typing import Mapping

from rag_core._optional import require

RESAMPLES = 10_000
SEED = 0


def paired_p_value(now: Mapping[str, float], before: Mapping[str, float],
                   resamples: int = RESAMPLES, seed: int = SEED) -> float | None:
    """p-value of the mean difference over the queries both score; None with fewer than 2 such queries."""
    np = require("numpy", extra="evals", feature="the retrieval gate's significance test")
    permutation_test = require("scipy.stats", extra="evals", feature="the retrieval gate's significance test",
                               package="scipy").permutation_test

    queries = sorted(now.keys() & before.keys())
    if len(queries) < 2:
        return None
    a = np.array([now[q] for q in queries], dtype=np.float64)
    b = np.array([before[q] for q in queries], dtype=np.float64)
    if np.array_equal(a, b):
        return 1.0

    def mean_difference(x: "np.ndarray", y: "np.ndarray", axis: int) -> "np.ndarray":
        return np.mean(x - y, axis=axis)

    result = permutation_test((a, b), mean_difference, permutation_type="samples", vectorized=True,
                              n_resamples=resamples, alternative="two-sided", random_state=seed)
    return float(min(1.0, result.pvalue))


def pairwise(per_query: Mapping[str, Mapping[str, float]]) -> dict[tuple[str, str], float | None]:
    """p-values for every pair of retrievers (name -> query -> score), each pair once, in name order."""
    names = sorted(per_query)
    return {(a, b): paired_p_value(per_query[a], per_query[b]) for i, a in enumerate(names) for b in names[i + 1:]}
