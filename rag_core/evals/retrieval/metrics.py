"""Retrieval metrics with trec_eval's definitions (pure functions).

Inputs: ``qrels`` {query: {doc: grade}} and a ``run`` {query: {doc: score}}. A run is
ranked by score descending, ties broken by document id *descending* — trec_eval's rule,
so results agree with trec_eval, pytrec_eval and ir-measures to the last digit. Use
``run_from_ranking`` to turn an ordered list into scores that keep its order exactly.

A document is relevant when its grade is >= 1. Each metric is averaged over the queries
in ``qrels``; a query the run does not answer scores 0.

* ``recall@k``   relevant documents in the top k / all relevant documents
* ``precision@k``  relevant documents in the top k / k
* ``hit_rate@k`` 1 if any relevant document is in the top k (trec_eval ``success_k``)
* ``mrr@k``      1 / rank of the first relevant document in the top k (0 if none)
* ``ndcg@k``     DCG@k / ideal DCG@k, gain = grade, discount = log2(rank + 1)
* ``map@k``      sum of precision at each relevant rank within k / all relevant documents
"""

from __future__ import annotations

import math
import re
from typing import Callable, Mapping, Sequence

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float]]

METRIC = re.compile(r"^(recall|precision|hit_rate|mrr|ndcg|map)@(\d+)$")


def ranked(scores: Mapping[str, float]) -> list[str]:
    """Document ids in trec_eval order: score descending, then id descending."""
    return [doc for doc, _ in sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)]


def run_from_ranking(ranking: Sequence[str]) -> dict[str, float]:
    """Scores that reproduce ``ranking`` exactly under trec_eval ordering."""
    return {doc: float(len(ranking) - position) for position, doc in enumerate(ranking)}


def _recall(rel: Mapping[str, int], top: list[str], k: int) -> float:
    relevant = sum(1 for g in rel.values() if g >= 1)
    return sum(1 for d in top if rel.get(d, 0) >= 1) / relevant if relevant else 0.0


def _precision(rel: Mapping[str, int], top: list[str], k: int) -> float:
    return sum(1 for d in top if rel.get(d, 0) >= 1) / k


def _hit_rate(rel: Mapping[str, int], top: list[str], k: int) -> float:
    return 1.0 if any(rel.get(d, 0) >= 1 for d in top) else 0.0


def _mrr(rel: Mapping[str, int], top: list[str], k: int) -> float:
    for rank, doc in enumerate(top, start=1):
        if rel.get(doc, 0) >= 1:
            return 1.0 / rank
    return 0.0


def _ndcg(rel: Mapping[str, int], top: list[str], k: int) -> float:
    dcg = sum(max(rel.get(d, 0), 0) / math.log2(rank + 1) for rank, d in enumerate(top, start=1))
    ideal_gains = sorted((g for g in rel.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(rank + 1) for rank, g in enumerate(ideal_gains, start=1))
    return dcg / idcg if idcg else 0.0


def _map(rel: Mapping[str, int], top: list[str], k: int) -> float:
    relevant = sum(1 for g in rel.values() if g >= 1)
    if not relevant:
        return 0.0
    hits, total = 0, 0.0
    for rank, doc in enumerate(top, start=1):
        if rel.get(doc, 0) >= 1:
            hits += 1
            total += hits / rank
    return total / relevant


_FUNCTIONS: dict[str, Callable[[Mapping[str, int], list[str], int], float]] = {
    "recall": _recall, "precision": _precision, "hit_rate": _hit_rate, "mrr": _mrr, "ndcg": _ndcg, "map": _map,
}


def parse_metric(name: str) -> tuple[str, int]:
    match = METRIC.match(name)
    if not match or int(match.group(2)) < 1:
        raise ValueError(
            f"unknown metric {name!r}: use recall@k, precision@k, hit_rate@k, mrr@k, ndcg@k or map@k"
        )
    return match.group(1), int(match.group(2))


def ranked_runs(qrels: Qrels, run: Run) -> dict[str, list[str]]:
    """Each judged query's run in trec_eval order, sorted once for every metric and cut-off."""
    return {q: ranked(run.get(q, {})) for q in qrels}


def per_query(metric: str, qrels: Qrels, run: Run, ordered: Mapping[str, list[str]] | None = None) -> dict[str, float]:
    """The metric for each query in ``qrels`` (``ordered``: ``ranked_runs(qrels, run)``, if at hand)."""
    kind, k = parse_metric(metric)
    function = _FUNCTIONS[kind]
    ordered = ranked_runs(qrels, run) if ordered is None else ordered
    return {q: function(rel, ordered[q][:k], k) for q, rel in qrels.items()}


def evaluate(metrics: Sequence[str], qrels: Qrels, run: Run,
             ordered: Mapping[str, list[str]] | None = None) -> dict[str, float]:
    """The mean of each metric over the queries in ``qrels``."""
    ordered = ranked_runs(qrels, run) if ordered is None else ordered
    out = {}
    for metric in metrics:
        values = per_query(metric, qrels, run, ordered)
        out[metric] = sum(values.values()) / len(values) if values else 0.0
    return out


def recall_curve(qrels: Qrels, run: Run, depth: int, ordered: Mapping[str, list[str]] | None = None) -> list[float]:
    """Mean recall@k for k = 1..depth (what ``evaluate`` gives for each ``recall@k``), from one
    pass over each ranking: the relevant documents found so far, divided by all relevant."""
    totals = [0.0] * depth
    ordered = ranked_runs(qrels, run) if ordered is None else ordered
    for query, ranking in ordered.items():
        relevant = sum(1 for g in qrels[query].values() if g >= 1)
        if not relevant:
            continue
        found = 0
        for position in range(depth):
            if position < len(ranking) and qrels[query].get(ranking[position], 0) >= 1:
                found += 1
            totals[position] += found / relevant
    return [total / len(qrels) for total in totals] if qrels else [0.0] * depth
