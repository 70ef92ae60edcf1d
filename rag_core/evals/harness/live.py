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
import random
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from rag_core.evals.harness.case import GoldenCase
from rag_core.evals.harness.checks import HAND_WRITTEN, run_checks
from rag_core.evals.harness.cost import Price, price_of
from rag_core.evals.harness.failure import Failure
from rag_core.evals.harness.paths import shown
from rag_core.evals.harness import routing
from rag_core.evals.harness.live_limits import AdaptiveLimit, ProviderLimits
from rag_core.evals.harness.provider_env import forget_answers
from rag_core.evals.harness.pushback import RETRYABLE, Pushback, backoff
from rag_core.evals.harness.runner import (Settings, _in_chain, _timeout_types, observe_run, play_subjects,
                                           snapshot_failures)
from rag_core.evals.harness.subjects import subject_of


@dataclass
class LiveRun:
    seconds: float
    tokens: int
    failures: list[Failure]
    repeat: int = 0
    retries: int = 0  # runs before this one that the provider pushed back
    answer: str | None = None  # the answer's text, when it is text
    price: Price | None = None  # its calls (the judges' too) at list prices; None without genai-prices
    resumed: bool = False  # made by an earlier session that was cut short (--resume)

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

    @property
    def tokens_total(self) -> int:
        return sum(run.tokens for run in self.runs)

    @property
    def retries(self) -> int:
        return sum(run.retries for run in self.runs)

    @property
    def resumed(self) -> int:
        return sum(run.resumed for run in self.runs)

    @property
    def price(self) -> Price | None:
        """Every run's calls at list prices (None without genai-prices)."""
        prices = [run.price for run in self.runs if run.price is not None]
        return sum(prices[1:], prices[0]) if prices else None

    def to_dict(self) -> dict[str, object]:
        from rag_core.evals.runs.failures import entry

        return {"id": self.case_id, "runs": len(self.runs), "passes": self.passes, "pass_rate": self.pass_rate,
                "min_pass_rate": self.min_pass_rate, "p50": self.seconds(50), "p95": self.seconds(95),
                "tokens": self.tokens, "ok": self.ok, "tokens_total": self.tokens_total, "retries": self.retries,
                "resumed": self.resumed, **_priced(self.price),
                "repeats": [{"repeat": run.repeat, "passed": run.passed, "seconds": round(run.seconds, 4),
                             "tokens": run.tokens, "retries": run.retries, "answer": run.answer, **_priced(run.price),
                             "failures": [entry(f).to_json() for f in run.failures]} for run in self.runs]}


def _priced(price: Price | None) -> dict[str, object]:
    """A price as the run record keeps it: US dollars (to the micro-dollar), and the models no
    price was found for; nothing without genai-prices."""
    if price is None:
        return {}
    return {"cost_usd": float(round(price.usd, 6)), **({"unpriced": list(price.unpriced)} if price.unpriced else {})}


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


def _attempt(case: GoldenCase, settings: Settings, selector: str) -> tuple[LiveRun, list[Pushback], bool]:
    """One run of the case, recorded into a scratch folder of its own that is thrown away: what
    it came to, the pushbacks it met, and whether it failed because of them (a retryable status
    the client did not get past, or a timeout)."""
    forget_answers()  # a framework's memory of an earlier repeat's answers (DSPy's)
    with tempfile.TemporaryDirectory(prefix="rag-core-live-") as scratch, routing.own_run():
        scratch_settings = dataclasses.replace(settings, cassettes_dir=Path(scratch), record_mode="all",
                                               update_goldens=False)
        played, other = play_subjects(case, scratch_settings, selector)
        run = observe_run(case, played, other)  # checked against the case alone: no golden
        # a provider error status or an emulator script too short, when the run itself did not fail
        failures = []
        if played.problem and played.error is None and played.judge_error is None:
            failures.append(Failure("recording", "cassette", shown(played.recorder.path), "", played.problem))
        failures += snapshot_failures(run) + run_checks(run, HAND_WRITTEN)
        output = run.observed.get("output")
        answer = output.get("equals") if isinstance(output, dict) and isinstance(output.get("equals"), str) else None
        subjects = [played] + ([other] if other is not None else [])
        live_run = LiveRun(played.seconds, run.observed["usage"].get("total_tokens", 0), failures, answer=answer,
                           price=price_of([e for each in subjects for e in each.replay.exchanges]))
    pushbacks = [p for each in subjects for p in each.replay.pushbacks]
    unrecovered = any(status in RETRYABLE for each in subjects for _, _, status in each.replay.recorded)
    timed_out = any(_in_chain(error, _timeout_types()) is not None
                    for each in subjects for error in (each.error, each.judge_error))
    provider_failed = bool(failures) and case.expect.error is None and (unrecovered or timed_out)
    return live_run, pushbacks, provider_failed


def run_repeat(case: GoldenCase, repeat: int, settings: Settings, selector: str, limit: AdaptiveLimit,
               sleep: Callable[[float], None] = time.sleep, stop: threading.Event | None = None) -> LiveRun:
    """Repeat ``repeat`` of the case under its provider's limit, run again (after the wait the
    provider asked for, or a backoff) while the provider pushes back, ``settings.retries`` times
    at most; a run that runs out of retries fails naming the status and the request."""
    run_case = repeat_case(case, repeat)
    for attempt in range(settings.retries + 1):
        with limit.slot():
            live_run, pushbacks, provider_failed = _attempt(run_case, settings, selector)
        live_run.repeat, live_run.retries = repeat, attempt
        if pushbacks:
            limit.pushed_back(max((p.retry_after or 0.0 for p in pushbacks), default=0.0))
        else:
            limit.succeeded()
        if not provider_failed:
            return live_run
        last = pushbacks[-1] if pushbacks else None
        if attempt == settings.retries or (stop is not None and stop.is_set()):
            what = str(last) if last is not None else "a provider request timed out"
            live_run.failures.append(Failure(
                "live", "provider", shown(case.source), "",
                f"the provider pushed back and the run gave up after {attempt} retr{'y' if attempt == 1 else 'ies'} "
                f"(--retries {settings.retries}): {what}"))
            return live_run
        sleep(backoff(attempt + 1, last.retry_after if last is not None else None, jitter=random.random()))
    raise AssertionError("unreachable")


def run_live(case: GoldenCase, settings: Settings, selector: str, limits: ProviderLimits | None = None,
             stop: threading.Event | None = None, finished: Mapping[int, LiveRun] | None = None,
             keep: Callable[[LiveRun], None] | None = None) -> LiveResult:
    """The case's ``settings.repeat`` runs, one after another, each under its provider's limit;
    those ``finished`` already (by a session cut short) are taken as they are, each new one is
    handed to ``keep`` as it ends."""
    limit = (limits or ProviderLimits(1)).of(subject_of(case, case.target).provider)
    result = LiveResult(case.id, case.min_pass_rate)
    for repeat in range(settings.repeat):
        if finished and repeat in finished:
            result.runs.append(finished[repeat])
            continue
        if stop is not None and stop.is_set():
            raise LiveRunsStopped(f"{case.id}: the session ended before run {repeat + 1} began")
        result.runs.append(_kept(run_repeat(case, repeat, settings, selector, limit, stop=stop), keep))
    return result


def submit_live(case: GoldenCase, settings: Settings, selector: str, limits: ProviderLimits,
                pool: ThreadPoolExecutor, stop: threading.Event, finished: Mapping[int, LiveRun] | None = None,
                keep: Callable[[LiveRun], None] | None = None) -> list[Future[LiveRun]]:
    """The case's runs handed to ``pool``, to run at once with other cases' (at most
    ``case.max_concurrency`` of its own), each under its provider's limit; in repeat order. Those
    ``finished`` already are done futures; each new one is handed to ``keep`` as it ends."""
    limit = limits.of(subject_of(case, case.target).provider)
    own = threading.BoundedSemaphore(case.max_concurrency or settings.repeat)

    def one(repeat: int) -> LiveRun:
        with own:
            if stop.is_set():
                raise LiveRunsStopped(f"{case.id}: the session ended before run {repeat + 1} began")
            return _kept(run_repeat(case, repeat, settings, selector, limit, stop=stop), keep)

    futures = []
    for repeat in range(settings.repeat):
        if finished and repeat in finished:
            done: Future[LiveRun] = Future()
            done.set_result(finished[repeat])
            futures.append(done)
        else:
            futures.append(pool.submit(one, repeat))
    return futures


def _kept(run: LiveRun, keep: Callable[[LiveRun], None] | None) -> LiveRun:
    if keep is not None:
        keep(run)
    return run


def gathered(case: GoldenCase, futures: list[Future[LiveRun]]) -> LiveResult:
    """The case's result once each of its runs has ended (an error in one is raised here)."""
    result = LiveResult(case.id, case.min_pass_rate)
    result.runs = [future.result() for future in futures]
    return result


class LiveRunsStopped(Exception):
    """The session ended (an interrupt, or -x) before a run began."""
