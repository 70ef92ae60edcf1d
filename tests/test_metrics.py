"""Metrics agree with ir-measures (trec_eval's definitions) to 1e-6 on generated runs and qrels."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_core.evals.retrieval.metrics import evaluate, parse_metric, per_query, ranked, recall_curve, run_from_ranking

ir_measures = pytest.importorskip("ir_measures")

DOCS = [f"d{i}" for i in range(12)]
QUERIES = ["q1", "q2", "q3", "q4"]

qrels_strategy = st.dictionaries(
    st.sampled_from(QUERIES),
    st.dictionaries(st.sampled_from(DOCS), st.integers(0, 3), min_size=1, max_size=8),
    min_size=1, max_size=4,
)
# few distinct scores, so ties are common and tie-breaking is exercised
run_strategy = st.dictionaries(
    st.sampled_from(QUERIES),
    st.dictionaries(st.sampled_from(DOCS), st.sampled_from([0.1, 0.5, 0.5, 1.0, 2.0, 3.5]), min_size=0, max_size=12),
    max_size=4,
)


def _ir_measure(name: str):
    kind, k = parse_metric(name)
    return {
        "recall": ir_measures.R, "precision": ir_measures.P, "hit_rate": ir_measures.Success,
        "ndcg": ir_measures.nDCG, "map": ir_measures.AP,
    }[kind] @ k


CUT_METRICS = [f"{m}@{k}" for m in ("recall", "precision", "hit_rate", "ndcg", "map") for k in (1, 3, 10)]


def _reference(measures, qrels, run):
    """Per-query values from trec_eval's own code (pytrec_eval, through ir-measures)."""
    provider = ir_measures.providers.registry["pytrec_eval"]
    return {(str(r.measure), r.query_id): r.value for r in provider.iter_calc(measures, qrels, run)}


def _judged(qrels):
    # trec_eval leaves out queries without a relevant document; so does the comparison
    return {q: rel for q, rel in qrels.items() if any(g >= 1 for g in rel.values())}


@settings(max_examples=150, deadline=None)
@given(qrels=qrels_strategy, run=run_strategy)
def test_cut_metrics_match_trec_eval(qrels, run):
    qrels = _judged(qrels)
    reference = _reference([_ir_measure(m) for m in CUT_METRICS], qrels, run)
    for metric in CUT_METRICS:
        ours = per_query(metric, qrels, run)
        for query in qrels:
            expected = reference.get((str(_ir_measure(metric)), query), 0.0)  # a query the run lacks scores 0
            assert ours[query] == pytest.approx(expected, abs=1e-6), (metric, query)


@settings(max_examples=150, deadline=None)
@given(qrels=qrels_strategy, run=run_strategy, k=st.sampled_from([1, 3, 10]))
def test_mrr_at_k_matches_trec_eval_recip_rank_of_the_top_k(qrels, run, k):
    qrels = _judged(qrels)
    truncated = {q: {d: scores[d] for d in ranked(scores)[:k]} for q, scores in run.items()}
    reference = _reference([ir_measures.RR], qrels, truncated)
    ours = per_query(f"mrr@{k}", qrels, run)
    for query in qrels:
        assert ours[query] == pytest.approx(reference.get(("RR", query), 0.0), abs=1e-6)


@settings(max_examples=50, deadline=None)
@given(run=run_strategy, seed=st.integers(0, 1000))
def test_ranking_does_not_depend_on_input_order(run, seed):
    for scores in run.values():
        items = list(scores.items())
        random.Random(seed).shuffle(items)
        assert ranked(dict(items)) == ranked(scores)


def test_run_from_ranking_keeps_the_order():
    order = ["b", "a", "z", "c"]
    assert ranked(run_from_ranking(order)) == order


def test_graded_ndcg_by_hand():
    qrels = {"q": {"a": 2, "b": 1, "c": 0}}
    run = {"q": run_from_ranking(["b", "a", "x"])}
    import math

    dcg = 1 / math.log2(2) + 2 / math.log2(3)
    idcg = 2 / math.log2(2) + 1 / math.log2(3)
    assert evaluate(["ndcg@3"], qrels, run)["ndcg@3"] == pytest.approx(dcg / idcg)


def test_unknown_metrics_are_refused():
    with pytest.raises(ValueError, match="unknown metric 'ndcg@0'"):
        parse_metric("ndcg@0")
    with pytest.raises(ValueError, match="unknown metric 'f1@10'"):
        evaluate(["f1@10"], {}, {})


@settings(max_examples=150, deadline=None)
@given(qrels=qrels_strategy, run=run_strategy, depth=st.integers(1, 25))
def test_the_recall_curve_is_recall_at_every_k(qrels, run, depth):
    """One pass per ranking gives what evaluating recall@1..depth one by one gives."""
    by_metric = evaluate([f"recall@{k}" for k in range(1, depth + 1)], qrels, run)
    curve = recall_curve(qrels, run, depth)
    assert curve == pytest.approx([by_metric[f"recall@{k}"] for k in range(1, depth + 1)], abs=1e-12)
