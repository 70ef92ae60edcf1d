"""Every check a case's run goes through, each ``(run: CaseRun) -> list[Failure]``.

The order is the order failures are reported in: how the run went (the network guard, unused
recordings), then the golden snapshot and the hand-written expectations, the LLM judges, and the
comparison with a ``compare_with`` subject.
"""

from __future__ import annotations

from collections.abc import Callable

from rag_core.evals.golden.case_run import CaseRun
from rag_core.evals.golden.checks import agreement, differential, expectations, verdicts, replay, snapshot
from rag_core.evals.common.failure import Failure

Check = Callable[[CaseRun], list[Failure]]

# the checks of what the golden holds: --update-goldens rewrites the golden, then they pass
SNAPSHOT: tuple[Check, ...] = (snapshot.fields, snapshot.tool_calls, snapshot.output, snapshot.error)
# the checks written by hand, and the run's own consistency: --update-goldens changes none of them
HAND_WRITTEN: tuple[Check, ...] = (expectations.retrieved, expectations.usage_limits, expectations.stable_prefix,
                                   agreement.agent_and_wire, verdicts.verdicts, differential.compare_with)
CHECKS: tuple[Check, ...] = (replay.network, replay.no_calls, replay.unused) + SNAPSHOT + HAND_WRITTEN


def run_checks(run: CaseRun, checks: tuple[Check, ...] = CHECKS) -> list[Failure]:
    return [failure for check in checks for failure in check(run)]
