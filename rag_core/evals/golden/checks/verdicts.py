"""The case's LLM judges: each verdict at or above its threshold, and every judge gave one."""

from __future__ import annotations

from rag_core.evals.golden.case_run import CaseRun
from rag_core.evals.common.failure import Failure
from rag_core.evals.common.paths import shown


def verdicts(run: CaseRun) -> list[Failure]:
    """One failure per judge whose score is below its threshold, with the reason and the
    unsupported claims; and one for the judge that gave no verdict."""
    if not run.case.expect.judge:
        return []
    case_file = shown(run.case.source)
    where = f"{case_file}:expect.judge"
    failures = []
    for index, j in enumerate(run.subject.judgements):
        if not j.passed:
            unsupported = f"; not supported: {j.unsupported}" if j.unsupported else ""
            failures.append(Failure("judge", "case", case_file, f"expect.judge[{index}]",
                                    f"{where}[{index}] ({j.metric}): score {j.score:.2f} is below the threshold "
                                    f"{j.threshold:g}: {j.verdict.reason}{unsupported}"))
    error = run.subject.judge_error
    if error is not None:
        index = len(run.subject.judgements)
        metric = (run.case.expect.judge or [])[index].metric
        failures.append(Failure("judge", "case", case_file, f"expect.judge[{index}]",
                                f"{where}[{index}] ({metric}): the judge gave no verdict: {type(error).__name__}: "
                                f"{error}"))
    return failures
