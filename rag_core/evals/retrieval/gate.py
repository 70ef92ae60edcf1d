"""Thresholds and baselines: the regression gate of a retrieval suite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rag_core.evals.atomic import write_checked
from rag_core.evals.retrieval.evaluate import RetrieverResult
from rag_core.evals.retrieval.significance import paired_p_value
from rag_core.evals.retrieval.suite import SuiteSpec


DECIMALS = 6  # baselines keep 6 decimals; compared values are rounded alike


def _rounded(values: dict[str, float]) -> dict[str, float]:
    return {q: round(v, DECIMALS) for q, v in values.items()}


def baseline_file(suite: SuiteSpec, root: Path, retriever: str) -> Path | None:
    return root / suite.baseline / f"{retriever}.json" if suite.baseline else None


def load_baseline(path: Path | None) -> dict[str, Any] | None:
    if path is None or not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc}); fix it or rewrite it with --update-baselines") from exc


def write_baseline(path: Path, suite: SuiteSpec, result: RetrieverResult) -> None:
    """The metrics and every metric's per-query values (what a significance test pairs with)."""
    data = {
        "suite": suite.name,
        "retriever": result.retriever,
        "metrics": _rounded(result.metrics),
        "per_query": {m: _rounded(dict(sorted(result.per_query[m].items()))) for m in suite.metrics},
    }
    write_checked(path, json.dumps(data, indent=1, sort_keys=False) + "\n")


def worse_queries(suite: SuiteSpec, result: RetrieverResult, baseline: dict[str, Any] | None) -> list[tuple[str, float, float]]:
    """(query, before, now) for queries whose primary metric dropped by more than the suite's
    tolerance, worst first. Baselines keep 6 decimals, so a smaller drop is rounding, not a change."""
    primary = suite.metrics[0]
    before = (baseline or {}).get("per_query", {}).get(primary, {})
    now = result.per_query[primary]
    allowed = max(suite.tolerance, 5e-7)  # never finer than the baseline's rounding
    drops = [(q, before[q], now[q]) for q in now if q in before and now[q] < before[q] - allowed]
    return sorted(drops, key=lambda d: (d[2] - d[1], d[0]))


def check(suite: SuiteSpec, result: RetrieverResult, baseline: dict[str, Any] | None) -> tuple[list[str], str]:
    """Failures (empty when the gate passes) and a table of every metric, before and after, with
    the p-value of the change where the baseline has per-query values for the metric."""
    gates = suite.thresholds.get(result.retriever, {})
    old = (baseline or {}).get("metrics", {})
    old_per_query = (baseline or {}).get("per_query", {})
    rows = [f"{'metric':<14} {'threshold':>9} {'baseline':>9} {'now':>9} {'delta':>9} {'p':>7}  status"]
    failures = []
    for metric in suite.metrics:
        now = result.metrics[metric]
        floor = gates.get(metric)
        before = old.get(metric)
        # rounded as the baseline was: an unchanged query differs by 0, not by rounding noise
        p = (paired_p_value(_rounded(result.per_query[metric]), old_per_query[metric])
             if metric in old_per_query else None)
        status = "ok"
        if floor is not None and now < floor:
            status = "BELOW THRESHOLD"
            failures.append(f"{metric} = {now:.4f} is below its threshold {floor:.4f}")
        if before is not None and now < before - suite.tolerance:
            drop = f"{metric} = {now:.4f} fell below the baseline {before:.4f} by more than {suite.tolerance}"
            if suite.significance is not None and p is not None and p >= suite.significance:
                status = "ok (drop not significant)" if status == "ok" else status
            else:
                status = "REGRESSED" if status == "ok" else status + ", REGRESSED"
                failures.append(drop + (f" (p = {p:.4f}, paired randomization test)" if p is not None else ""))
        rows.append(
            f"{metric:<14} {floor if floor is not None else '-':>9} "
            f"{f'{before:.4f}' if before is not None else '-':>9} {now:>9.4f} "
            f"{f'{now - before:+.4f}' if before is not None else '-':>9} "
            f"{f'{p:.4f}' if p is not None else '-':>7}  {status}"
        )
    if suite.significance is not None:
        rows.append(f"(a drop beyond {suite.tolerance} fails only with p < {suite.significance})")
    return failures, "\n".join(rows)
