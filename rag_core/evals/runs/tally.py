"""A run's outcome in numbers: cases per status, goldens written, recordings, retrieval gates,
tokens, time. The terminal summary, the markdown summary and the report all count with it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from rag_core.evals.runs.schema import CaseEntry, RunRecord


@dataclass(frozen=True)
class Tally:
    cases: int
    passed: int  # passed, new and updated goldens alike
    failed: int
    skipped: int
    new: int  # goldens written for the first time (by a failed case too)
    updated: int  # goldens rewritten
    tokens: int
    seconds: float = 0.0
    gates_passed: int = 0
    gates_failed: int = 0
    recorded: int = 0
    stale: int = 0

    @property
    def pass_rate(self) -> float | None:
        """Passing cases among those that ran (skipped ones did not); None when none ran."""
        ran = self.cases - self.skipped
        return self.passed / ran if ran else None


def tally_cases(cases: Sequence[CaseEntry]) -> Tally:
    statuses = [case.status for case in cases]
    written = [case.wrote for case in cases]
    return Tally(cases=len(statuses), passed=sum(case.passing for case in cases), failed=statuses.count("failed"),
                 skipped=statuses.count("skipped"), new=written.count("new"), updated=written.count("updated"),
                 tokens=sum(case.tokens for case in cases), recorded=sum(case.recorded for case in cases),
                 stale=sum(case.stale for case in cases))


def tally(record: RunRecord) -> Tally:
    cases = tally_cases(record.cases)
    return Tally(**{**cases.__dict__, "seconds": record.seconds,
                    "gates_passed": sum(r.gate == "pass" for r in record.retrieval),
                    "gates_failed": sum(r.gate != "pass" for r in record.retrieval)})
