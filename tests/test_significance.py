"""The paired randomization test behind the retrieval gate's p-values."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_core.evals.common.significance import paired_p_value, pairwise


def _exact_sign_flip_p(now: list[float], before: list[float]) -> float:
    """Every one of the 2^n sign patterns of the differences, counted directly."""
    diffs = [a - b for a, b in zip(now, before)]
    observed = abs(sum(diffs))
    patterns = list(itertools.product((1, -1), repeat=len(diffs)))
    extreme = sum(1 for signs in patterns if abs(sum(s * d for s, d in zip(signs, diffs))) >= observed - 1e-12)
    return extreme / len(patterns)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.25, 0.5, 0.63, 1.0]), st.sampled_from([0.0, 0.25, 0.5, 1.0])),
                min_size=2, max_size=10))
def test_small_samples_get_the_exact_p_value(pairs):
    now, before = [a for a, _ in pairs], [b for _, b in pairs]
    p = paired_p_value({str(n): v for n, v in enumerate(now)}, {str(n): v for n, v in enumerate(before)})
    assert p == pytest.approx(_exact_sign_flip_p(now, before), abs=1e-9)


def test_a_consistent_drop_is_significant_and_one_query_is_not():
    before = {f"q{n}": 0.8 for n in range(48)}
    assert paired_p_value({q: v - 0.05 for q, v in before.items()}, before) < 0.001
    # one changed query: every sign flip is as extreme (p = 1, estimated from 10,000 random flips)
    assert paired_p_value({**before, "q0": 0.2}, before) > 0.95
    assert paired_p_value(before, before) == 1.0


def test_the_p_value_is_the_same_on_every_run_and_pairs_only_common_queries():
    import random

    rng = random.Random(7)
    now = {f"q{n}": rng.random() for n in range(300)}
    before = {q: v + rng.gauss(0.02, 0.2) for q, v in now.items()}
    first = paired_p_value(now, before)
    assert first == paired_p_value(dict(reversed(list(now.items()))), before)  # order does not matter
    assert paired_p_value({**now, "extra": 5.0}, before) == first  # a query only one side scored is left out
    assert paired_p_value({"q1": 0.5}, {"q1": 0.1}) is None  # nothing to pair with


def test_pairwise_compares_each_pair_once_in_name_order():
    scores = {"b": {"q1": 1.0, "q2": 0.0}, "a": {"q1": 1.0, "q2": 0.0}, "c": {"q1": 0.0, "q2": 1.0}}
    assert set(pairwise(scores)) == {("a", "b"), ("a", "c"), ("b", "c")}
    assert pairwise(scores)[("a", "b")] == 1.0
