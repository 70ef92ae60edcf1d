"""A retriever's result as the record keeps it: its numbers, each judged query's scores, its
judgements and the first ``TOP_K`` documents returned, and what its gate said.

The retrieval plugin already sends each result's summary to the controller (``rag_core_retrieval``);
``gate_property`` adds what the summary lacks (the gate's verdicts, the thresholds, the query
texts), and ``retriever_entry`` puts the two together there.
"""

from __future__ import annotations

from typing import Any, Mapping

from rag_core.evals.runs.schema import QueryEntry, RetrieverEntry

PROPERTY = "rag_core_gate"
TOP_K = 10  # documents of each ranking the record keeps (the report's drill-down shows them)
JUDGED_LIMIT = 100  # judgements of one query the record keeps
TEXT_LIMIT = 1000  # characters of one query's text


def gate_property(failures: list[str], thresholds: Mapping[str, float],
                  queries: Mapping[str, str] | None) -> tuple[str, dict[str, Any]]:
    """The user property of one retriever test: the gate's failures, its thresholds, the query
    texts (one that looks like a credential withheld, as a failure's values are: the record and its
    report keep the rest of the run)."""
    from rag_core.evals.runs.failures import withheld_text

    return PROPERTY, {"failures": list(failures), "thresholds": dict(thresholds),
                      "queries": {q: withheld_text(text[:TEXT_LIMIT]) for q, text in (queries or {}).items()}}


def _round(value: float) -> float:
    return round(float(value), 6)


def retriever_entry(summary: Mapping[str, Any], gate: Mapping[str, Any] | None, seconds: float) -> RetrieverEntry:
    gate = gate or {}
    texts: Mapping[str, str] = gate.get("queries", {})
    per_query: Mapping[str, Mapping[str, float]] = summary.get("per_query", {})
    rankings: Mapping[str, list[str]] = summary.get("rankings", {})
    qrels: Mapping[str, Mapping[str, int]] = summary.get("qrels", {})
    ids = sorted(set(qrels) | {q for scores in per_query.values() for q in scores}, key=_natural)
    queries = []
    for query in ids:
        judged = dict(sorted(qrels.get(query, {}).items(), key=lambda item: (-item[1], item[0]))[:JUDGED_LIMIT])
        top = [(doc, qrels.get(query, {}).get(doc)) for doc in rankings.get(query, [])[:TOP_K]]
        queries.append(QueryEntry(id=query, text=texts.get(query, ""), judged=judged, top=top,
                                  metrics={m: _round(scores[query]) for m, scores in per_query.items() if query in scores}))
    return RetrieverEntry(
        suite=summary["suite"], retriever=summary["retriever"], gate=summary.get("gate", "pass"),
        gate_failures=list(gate.get("failures", [])), thresholds=dict(gate.get("thresholds", {})),
        metrics={m: _round(v) for m, v in summary.get("metrics", {}).items()},
        index_seconds=float(summary.get("index_seconds", 0.0)), query_ms_p50=float(summary.get("query_ms_p50", 0.0)),
        query_ms_p95=float(summary.get("query_ms_p95", 0.0)),
        recall_curve=[_round(v) for v in summary.get("recall_curve", [])], queries=queries, seconds=seconds)


def _natural(name: str) -> tuple[Any, ...]:
    """q2 before q10: query ids in the order a person counts them."""
    import re

    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))
