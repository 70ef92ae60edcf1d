"""A run's outcome in numbers: cases per status, retrieval gates, tokens, time."""

from __future__ import annotations

from dataclasses import dataclass

from rag_core.evals.runs.schema import RunRecord


@dataclass(frozen=True)
class Tally:
    cases: int
    passed: int  # passed, new and updated goldens alike
    failed: int
    skipped: int
    new: int
    updated: int
    tokens: int
    seconds: float
    gates_passed: int
    gates_failed: int

    @property
    def pass_rate(self) -> float | None:
        """Passing cases among those that ran (skipped ones did not); None when none ran."""
        ran = self.cases - self.skipped
        return self.passed / ran if ran else None


def tally(record: RunRecord) -> Tally:
    statuses = [case.status for case in record.cases]
    return Tally(cases=len(statuses), passed=sum(case.passing for case in record.cases),
                 failed=statuses.count("failed"), skipped=statuses.count("skipped"), new=statuses.count("new"),
                 updated=statuses.count("updated"), tokens=sum(case.tokens for case in record.cases),
                 seconds=record.seconds, gates_passed=sum(r.gate == "pass" for r in record.retrieval),
                 gates_failed=sum(r.gate != "pass" for r in record.retrieval))
