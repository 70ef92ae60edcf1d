"""Every check a case's run goes through, each ``(run: CaseRun) -> list[Failure]``, and the one
function that runs them (``evaluate``): in replay, while recording and in live runs alike.

The order is the order failures are reported in: how the run went (it raised, the network guard,
no provider call, unused recordings), then the golden snapshot (the golden's own fields first:
what ``--update-goldens`` rewrites) and the hand-written expectations, the LLM judges and the
comparison with a ``compare_with`` subject; last, the requests that differ from the recording
(stale), which the caller reports as failures or warnings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from rag_core.evals.common.failure import Failure
from rag_core.evals.golden.case_run import CaseRun
from rag_core.evals.golden.checks import agreement, differential, expectations, replay, snapshot, verdicts

Check = Callable[[CaseRun], list[Failure]]
Mode = Literal["replay", "record", "live"]

# how the run went: replayed, every one applies; while recording, the recording itself refused
# what the guard saw, an idle run and an unused script before any check runs
HOW_IT_WENT: dict[Mode, tuple[Check, ...]] = {
    "replay": (replay.raised, replay.network, replay.no_calls, replay.unused),
    "record": (replay.raised,),
    "live": (),
}
# the checks of what the golden holds: --update-goldens rewrites the golden, then they pass
SNAPSHOT: tuple[Check, ...] = (snapshot.fields, snapshot.tool_calls, snapshot.output, snapshot.error)
# the checks written by hand, and the run's own consistency: --update-goldens changes none of them
HAND_WRITTEN: tuple[Check, ...] = (expectations.retrieved, expectations.usage_limits, expectations.stable_prefix,
                                   agreement.agent_and_wire, verdicts.verdicts, differential.compare_with)
# the checks that say a run did not complete: it raised (and no error was expected), or it made no
# provider call (and the case does not say that is what it does)
UNFINISHED = ("raised", "no_calls")


@dataclass(frozen=True)
class Findings:
    """What the checks found in one run, by kind, each kind in its report order."""

    how_it_went: list[Failure]
    snapshot: list[Failure]  # the golden's own fields first, then the case's exact values
    hand_written: list[Failure]
    stale: list[Failure]  # replayed requests that differ from the recording, an edited emulate: script

    @property
    def completed(self) -> bool:
        """The run completed: it did not raise (unless the case expects it) and made a provider call."""
        return not any(failure.check in UNFINISHED for failure in self.how_it_went)

    @property
    def golden_changed(self) -> bool:
        """A field of the golden differs: what ``--update-goldens`` would rewrite."""
        return any(failure.source == "golden" for failure in self.snapshot)


def _run(run: CaseRun, checks: tuple[Check, ...]) -> list[Failure]:
    return [failure for check in checks for failure in check(run)]


def evaluate(run: CaseRun, mode: Mode) -> Findings:
    """Every check the run goes through in ``mode``, in report order."""
    found = _run(run, SNAPSHOT)
    return Findings(how_it_went=_run(run, HOW_IT_WENT[mode]),
                    snapshot=[f for f in found if f.source == "golden"] + [f for f in found if f.source != "golden"],
                    hand_written=_run(run, HAND_WRITTEN),
                    stale=replay.stale(run) if mode == "replay" else [])
