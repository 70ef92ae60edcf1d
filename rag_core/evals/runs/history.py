"""The last runs as series: the pass rate, and each gated metric of each retriever.

A retriever's gated metrics are its primary metric (the one its baseline gate and significance
test use) and every metric it has a threshold for.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rag_core.evals.runs.schema import RunRecord
from rag_core.evals.runs.tally import tally


@dataclass
class HistoryPoint:
    id: str
    started: str
    commit: str | None
    dirty: bool
    pass_rate: float | None
    cases: int
    failed: int
    metrics: dict[str, float] = field(default_factory=dict)  # series name -> value in this run


def series_name(suite: str, retriever: str, metric: str) -> str:
    return f"{suite}/{retriever} {metric}"


def history(records: list[RunRecord]) -> list[HistoryPoint]:
    """One point per record, in the order given (oldest first)."""
    points = []
    for record in records:
        counts = tally(record)
        point = HistoryPoint(record.id, record.started, record.git.commit if record.git else None,
                             bool(record.git and record.git.dirty), counts.pass_rate, counts.cases, counts.failed)
        for retriever in record.retrieval:
            gated = [m for m in [retriever.primary, *retriever.thresholds] if m in retriever.metrics]
            for metric in dict.fromkeys(gated):
                point.metrics[series_name(retriever.suite, retriever.retriever, metric)] = retriever.metrics[metric]
        points.append(point)
    return points


def series(points: list[HistoryPoint]) -> list[str]:
    """Every metric series any point has, in the order they first appear."""
    return list(dict.fromkeys(name for point in points for name in point.metrics))
