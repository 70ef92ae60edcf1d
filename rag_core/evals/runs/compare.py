"""One run against an earlier one (the run it is compared with: ``--compare BASE``): which cases
changed and how, whether its time changed beyond noise, and per retriever how each metric moved,
whether the move is significant, and which queries got worse.

Regressions come first everywhere: they are what a person comparing two runs looks for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from rag_core.evals.runs.schema import CaseEntry, RetrieverEntry, RunRecord

ChangeKind = Literal["regressed", "changed", "added", "fixed", "removed", "same"]
# the order a comparison lists them in: what got worse first
ORDER: dict[str, int] = {"regressed": 0, "changed": 1, "added": 2, "fixed": 3, "removed": 4, "same": 5}


@dataclass
class CaseChange:
    id: str
    kind: ChangeKind
    now: CaseEntry | None  # None: the case is gone from the run
    before: CaseEntry | None  # None: the case is new since the run compared with


def case_kind(now: CaseEntry | None, before: CaseEntry | None) -> ChangeKind:
    if before is None:
        return "added"
    if now is None:
        return "removed"
    if before.passing and now.status == "failed":
        return "regressed"
    if before.status == "failed" and now.passing:
        return "fixed"
    if before.status != now.status and "skipped" in (before.status, now.status):
        return "changed"  # ran in one run only
    if [f.fingerprint() for f in now.failures] != [f.fingerprint() for f in before.failures]:
        return "changed"  # failed in both, but not in the same way
    if now.status == "failed" and now.reason != before.reason:
        return "changed"
    return "same"


def case_changes(run: RunRecord, base: RunRecord) -> list[CaseChange]:
    """Every case of either run, regressions first, then in the run's order (gone ones last)."""
    before = {case.id: case for case in base.cases}
    now_ids = {case.id for case in run.cases}
    changes = [CaseChange(case.id, case_kind(case, before.get(case.id)), case, before.get(case.id)) for case in run.cases]
    changes += [CaseChange(case.id, "removed", None, case) for case in base.cases if case.id not in now_ids]
    return sorted(changes, key=lambda change: ORDER[change.kind])  # stable: the run's order within a kind


# A run's time moves with the machine's load, not only with the code: on a shared machine an
# unchanged replay of a few seconds moves by a second or more. A change counts as slower or
# faster only beyond both bounds of this band.
NOISE_SECONDS = 2.0
NOISE_SHARE = 0.25  # of the earlier run's time

TimingChange = Literal["slower", "faster", "noise"]


def timing_change(now: float, before: float) -> TimingChange:
    """A run's time against the time of the run it is compared with: ``noise`` within
    ``NOISE_SECONDS`` or within ``NOISE_SHARE`` of the earlier time, whichever is wider."""
    if abs(now - before) <= max(NOISE_SECONDS, NOISE_SHARE * before):
        return "noise"
    return "slower" if now > before else "faster"


@dataclass
class MetricDelta:
    metric: str
    now: float
    before: float
    p: float | None  # paired randomization test on the per-query values; None without them

    @property
    def delta(self) -> float:
        return self.now - self.before


@dataclass
class QueryDelta:
    id: str
    text: str
    now: float
    before: float

    @property
    def delta(self) -> float:
        return self.now - self.before


@dataclass
class RetrieverDelta:
    suite: str
    retriever: str
    gate_now: str
    gate_before: str
    metrics: list[MetricDelta] = field(default_factory=list)
    queries: list[QueryDelta] = field(default_factory=list)  # on the primary metric, worst change first

    @property
    def key(self) -> str:
        return f"{self.suite}/{self.retriever}"

    @property
    def worse(self) -> list[QueryDelta]:
        return [q for q in self.queries if q.delta < 0]


def _p_value(now: RetrieverEntry, before: RetrieverEntry, metric: str) -> float | None:
    try:
        from rag_core.evals.common.significance import paired_p_value
    except ImportError:  # pragma: no cover - scipy comes with the evals extra; a report without it has no p
        return None
    a = {q.id: q.metrics[metric] for q in now.queries if metric in q.metrics}
    b = {q.id: q.metrics[metric] for q in before.queries if metric in q.metrics}
    try:
        return paired_p_value(a, b)
    except ImportError:
        return None


def retriever_delta(now: RetrieverEntry, before: RetrieverEntry) -> RetrieverDelta:
    out = RetrieverDelta(now.suite, now.retriever, now.gate, before.gate)
    for metric, value in now.metrics.items():
        if metric in before.metrics:
            out.metrics.append(MetricDelta(metric, value, before.metrics[metric], _p_value(now, before, metric)))
    primary = now.primary
    if primary is not None:
        earlier = {q.id: q.metrics[primary] for q in before.queries if primary in q.metrics}
        out.queries = sorted((QueryDelta(q.id, q.text, q.metrics[primary], earlier[q.id]) for q in now.queries
                              if primary in q.metrics and q.id in earlier), key=lambda q: (q.delta, q.id))
    return out


def retriever_deltas(run: RunRecord, base: RunRecord) -> list[RetrieverDelta]:
    """The retrievers both runs measured, the one whose primary metric fell most first."""
    before = {r.key: r for r in base.retrieval}
    deltas = [retriever_delta(r, before[r.key]) for r in run.retrieval if r.key in before]
    return sorted(deltas, key=lambda d: (d.metrics[0].delta if d.metrics else 0.0, d.key))
