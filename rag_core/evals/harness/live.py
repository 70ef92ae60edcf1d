"""``--live --repeat N``: run a case N times against the providers and report how often it passes.

Models are nondeterministic: one live run says little, N runs give a pass rate. Each run is the
case as CI replays it, but recorded into a scratch folder that is thrown away (no cassette or
golden is written), and judged by the case's hand-written checks only: ``expect`` and its
judges, since a live answer is not expected to equal the golden's. With ``--emulator`` the
runs go to the emulator instead, repeat ``i`` answered by ``emulate_repeats[i]``, so the whole
flow, a flaky case included, runs without keys.
"""

from __future__ import annotations

import dataclasses
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from rag_core.evals.harness.case import GoldenCase
from rag_core.evals.harness.checks import HAND_WRITTEN, run_checks
from rag_core.evals.harness.failure import Failure
from rag_core.evals.harness.paths import shown
from rag_core.evals.harness.runner import Settings, observe_run, play_subjects, snapshot_failures


@dataclass
class LiveRun:
    seconds: float
    tokens: int
    failures: list[Failure]

    @property
    def passed(self) -> bool:
        return not self.failures


@dataclass
class LiveResult:
    case_id: str
    min_pass_rate: float
    runs: list[LiveRun] = field(default_factory=list)

    @property
    def passes(self) -> int:
        return sum(run.passed for run in self.runs)

    @property
    def pass_rate(self) -> float:
        return self.passes / len(self.runs) if self.runs else 0.0

    @property
    def ok(self) -> bool:
        return bool(self.runs) and self.pass_rate >= self.min_pass_rate

    def seconds(self, percent: float) -> float:
        import numpy

        return float(numpy.percentile([run.seconds for run in self.runs], percent)) if self.runs else 0.0

    @property
    def tokens(self) -> int:
        """Median tokens per run (agent and judges' models alike are billed; this counts the agent's)."""
        import statistics

        return int(statistics.median(run.tokens for run in self.runs)) if self.runs else 0

    def to_dict(self) -> dict[str, object]:
        return {"id": self.case_id, "runs": len(self.runs), "passes": self.passes, "pass_rate": self.pass_rate,
                "min_pass_rate": self.min_pass_rate, "p50": self.seconds(50), "p95": self.seconds(95),
                "tokens": self.tokens, "ok": self.ok}


def repeat_case(case: GoldenCase, repeat: int) -> GoldenCase:
    """The case as repeat ``repeat`` (from 0) runs it: with that repeat's emulator script, if any."""
    if not case.emulate_repeats:
        return case
    script = case.emulate_repeats[repeat % len(case.emulate_repeats)]
    variant = case.model_copy(update={
        "emulate": script.emulate if script.emulate is not None else case.emulate,
        "emulate_judge": script.emulate_judge if script.emulate_judge is not None else case.emulate_judge,
    })
    variant.source = case.source
    return variant


def run_live(case: GoldenCase, settings: Settings, selector: str) -> LiveResult:
    result = LiveResult(case.id, case.min_pass_rate)
    with tempfile.TemporaryDirectory(prefix="rag-core-live-") as scratch:
        scratch_settings = dataclasses.replace(settings, cassettes_dir=Path(scratch), record_mode="all",
                                               update_goldens=False)
        for repeat in range(settings.repeat):
            run_case = repeat_case(case, repeat)
            played, other = play_subjects(run_case, scratch_settings, selector)
            run = observe_run(run_case, played, other)  # checked against the case alone: no golden
            # a provider error status or an emulator script too short, when the run itself did not fail
            failures = []
            if played.problem and played.error is None and played.judge_error is None:
                failures.append(Failure("recording", "cassette", shown(played.recorder.path), "", played.problem))
            failures += snapshot_failures(run) + run_checks(run, HAND_WRITTEN)
            result.runs.append(LiveRun(played.seconds, run.observed["usage"].get("total_tokens", 0), failures))
    return result
