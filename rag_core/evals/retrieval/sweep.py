"""Sweeps: one retriever over a grid of settings, the best setting per metric, and the gate that
the retriever's own (pinned) setting is still the best one on a chosen metric."""

from __future__ import annotations

from typing import Any

from rag_core.evals.retrieval.evaluate import RetrieverResult
from rag_core.evals.common.significance import paired_p_value
from rag_core.evals.retrieval.suite import SuiteSpec, SweepSpec


def summarize(suite: SuiteSpec, sweep: SweepSpec, pinned: RetrieverResult,
              points: list[RetrieverResult]) -> dict[str, Any]:
    """Every grid point's metrics, the pinned setting's, and the best point per metric (ties: the
    first in grid order, so the choice does not depend on the order results arrived in)."""
    base = suite.retriever(sweep.retriever)
    rows = [{"retriever": r.retriever, "settings": {s: v.setting(s) for s in sweep.grid}, "metrics": r.metrics}
            for r, v in zip(points, suite.variants(sweep))]
    best = {m: max(rows, key=lambda row: row["metrics"][m])["retriever"] for m in suite.metrics}  # max keeps the first
    return {"suite": suite.name, "retriever": sweep.retriever, "keep_best": sweep.keep_best,
            "pinned": {"settings": {s: base.setting(s) for s in sweep.grid}, "metrics": pinned.metrics},
            "points": rows, "best": best}


def keep_best_failures(suite: SuiteSpec, sweep: SweepSpec, summary: dict[str, Any], pinned: RetrieverResult,
                       points: list[RetrieverResult]) -> list[str]:
    """Why the pinned setting is no longer the best on ``keep_best`` (empty if it still is)."""
    metric = sweep.keep_best
    if metric is None:
        return []
    winner = next(r for r in points if r.retriever == summary["best"][metric])
    gain = winner.metrics[metric] - pinned.metrics[metric]
    if gain <= suite.tolerance:
        return []
    p = paired_p_value(winner.per_query[metric], pinned.per_query[metric])
    if suite.significance is not None and p is not None and p >= suite.significance:
        return []
    return [f"{winner.retriever} scores {metric} {winner.metrics[metric]:.4f}, above the pinned setting's "
            f"{pinned.metrics[metric]:.4f} by {gain:.4f} (more than the tolerance {suite.tolerance}"
            + (f"; p = {p:.4f}" if p is not None else "") + f"): set it on retriever {sweep.retriever} in the suite"]


def table(summary: dict[str, Any]) -> list[str]:
    """The grid as rows (pinned setting first), best value per metric marked with *."""
    metrics = list(summary["pinned"]["metrics"])
    settings = list(summary["pinned"]["settings"])
    width = max(12, *(len(s) + 2 for s in settings))
    lines = [f"sweep {summary['suite']}/{summary['retriever']}"
             + (f" (keep_best: {summary['keep_best']})" if summary["keep_best"] else ""),
             "".join(f"{s:<{width}}" for s in settings) + "".join(f"{m:>15}" for m in metrics)]

    def row(values: dict[str, Any], scores: dict[str, float], name: str | None, note: str = "") -> str:
        cells = "".join(f"{'default' if values[s] is None else str(values[s]):<{width}}" for s in settings)
        marks = "".join(f"{scores[m]:>14.4f}{'*' if name is not None and summary['best'][m] == name else ' '}"
                        for m in metrics)
        return cells + marks + note

    lines.append(row(summary["pinned"]["settings"], summary["pinned"]["metrics"], None, "  (pinned)"))
    lines += [row(p["settings"], p["metrics"], p["retriever"]) for p in summary["points"]]
    return lines
