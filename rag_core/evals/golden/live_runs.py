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
import threading
from collections import deque
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Mapping

from rag_core.evals.golden.case import GoldenCase
from rag_core.evals.golden.checks import evaluate
from rag_core.evals.wire.cost import Price, price_of
from rag_core.evals.common.failure import Failure
from rag_core.evals.common.paths import shown
from rag_core.evals.recording import routing, seeded_randomness
from rag_core.evals.recording.provider_limits import AdaptiveLimit, LiveRunsStopped, ProviderLimits
from rag_core.evals.recording.throttling import RETRYABLE, Pushback
from rag_core.evals.recording.retrying import Tried, asked_wait, retried
from rag_core.evals.common.raised import in_chain
from rag_core.evals.golden.playing import Settings, play_subjects
from rag_core.evals.golden.runner import observe_run
from rag_core.evals.recording.play import timeout_types
from rag_core.evals.golden.subjects import subject_of


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
    stored: dict[str, Any] | None = None  # a resumed run's entry, as the earlier session wrote it

    @property
    def passed(self) -> bool:
        return not self.failures

    def to_json(self) -> dict[str, Any]:
        """The run as the run record (and the journal of a session cut short) keeps it."""
        from rag_core.evals.runs.failures import entry

        if self.stored is not None:
            return self.stored
        return {"repeat": self.repeat, "passed": self.passed, "seconds": round(self.seconds, 4), "tokens": self.tokens,
                "retries": self.retries, "answer": self.answer, **_priced(self.price),
                "failures": [entry(f).to_json() for f in self.failures]}


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
        return {"id": self.case_id, "runs": len(self.runs), "passes": self.passes, "pass_rate": self.pass_rate,
                "min_pass_rate": self.min_pass_rate, "p50": self.seconds(50), "p95": self.seconds(95),
                "tokens": self.tokens, "ok": self.ok, "tokens_total": self.tokens_total, "retries": self.retries,
                "resumed": self.resumed, **_priced(self.price), "repeats": [run.to_json() for run in self.runs]}


def _priced(price: Price | None) -> dict[str, Any]:
    """A price as the run record keeps it (``runs.schema.Cost``): US dollars to the micro-dollar,
    and the models no price was found for; nothing without genai-prices."""
    from rag_core.evals.runs.schema import Cost

    return {} if price is None else Cost(float(round(price.usd, 6)), price.unpriced).to_json()


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
    with tempfile.TemporaryDirectory(prefix="rag-core-live-") as scratch, routing.own_run(case.id):
        scratch_settings = dataclasses.replace(settings, cassettes_dir=Path(scratch), record_mode="all",
                                               update_goldens=False)
        played, other = play_subjects(case, scratch_settings, selector)
        seen = observe_run(case, played, other)
        # a provider error status or an emulator script too short, when the run itself did not fail
        failures = []
        if played.problem and played.error is None and played.judge_error is None:
            failures.append(Failure("recording", "cassette", shown(played.recorder.path), "", played.problem))
        found = evaluate(seen.run(None), "live")  # checked against the case alone: no golden
        failures += found.snapshot + found.hand_written
        output = seen.observed.get("output")
        answer = output.get("equals") if isinstance(output, dict) and isinstance(output.get("equals"), str) else None
        subjects = [played] + ([other] if other is not None else [])
        live_run = LiveRun(played.seconds, seen.observed["usage"].get("total_tokens", 0), failures, answer=answer,
                           price=price_of([e for each in subjects for e in each.replay.exchanges]))
    pushbacks = [p for each in subjects for p in each.replay.pushbacks]
    unrecovered = any(status in RETRYABLE for each in subjects for _, _, status in each.replay.recorded)
    timed_out = any(in_chain(error, timeout_types()) is not None
                    for each in subjects for error in (each.error, each.judge_error))
    provider_failed = bool(failures) and case.expect.error is None and (unrecovered or timed_out)
    return live_run, pushbacks, provider_failed


def run_repeat(case: GoldenCase, repeat: int, settings: Settings, selector: str, limit: AdaptiveLimit,
               stop: threading.Event | None = None, pause: Callable[[float], bool] | None = None) -> LiveRun:
    """Repeat ``repeat`` of the case under its provider's limit, made again while the provider
    fails it (``retrying.py``); a run the provider failed to the end fails naming the status and
    the request."""
    run_case = repeat_case(case, repeat)

    def make() -> Tried[LiveRun]:
        with seeded_randomness.repeat(repeat):  # a sequence of its own, the same again when retried
            live_run, pushbacks, provider_failed = _attempt(run_case, settings, selector)
        return Tried(live_run, pushbacks=pushbacks, pushed_back=bool(pushbacks), provider_failed=provider_failed,
                     asked=asked_wait(pushbacks))

    tried = retried(make, limit, settings.retries, stop or threading.Event(), pause)
    live_run = tried.value
    assert live_run is not None
    live_run.repeat, live_run.retries = repeat, tried.retries
    if tried.gave_up:
        last = tried.pushbacks[-1] if tried.pushbacks else None
        cause = "the provider pushed back" if last is not None else "a provider request timed out"
        live_run.failures.append(Failure("live", "provider", shown(case.source), "",
                                         f"{cause} and the run {tried.gave_up}" + (f": {last}" if last else "")))
    return live_run


def run_live(case: GoldenCase, settings: Settings, selector: str, limits: ProviderLimits | None = None,
             stop: threading.Event | None = None, finished: Mapping[int, LiveRun] | None = None,
             keep: Callable[[LiveRun], None] | None = None) -> LiveResult:
    """The case's ``settings.repeat`` runs, one after another, each under its provider's limit;
    those ``finished`` already (by a session cut short) are taken as they are, each new one is
    handed to ``keep`` as it ends."""
    limit = (limits or ProviderLimits(1)).of(subject_of(case, case.target).provider)
    result = LiveResult(case.id, case.min_pass_rate)
    for repeat in range(settings.repeat):
        made = (finished or {}).get(repeat)
        result.runs.append(made or _kept(run_repeat(case, repeat, settings, selector, limit, stop), keep))
    return result


def submit_live(case: GoldenCase, settings: Settings, selector: str, limit: AdaptiveLimit, pool: Executor,
                stop: threading.Event, finished: Mapping[int, LiveRun] | None = None,
                keep: Callable[[LiveRun], None] | None = None) -> list[Future[LiveRun]]:
    """The case's runs, in repeat order, made in ``pool`` at once with other cases' under their
    provider's ``limit``. At most ``case.max_concurrency`` of them are handed to the pool at a
    time, the next when one ends, so that a case that limits itself holds no thread of the pool
    waiting. Those ``finished`` already are done futures; each new one is handed to ``keep`` as
    it ends."""
    futures: list[Future[LiveRun]] = [Future() for _ in range(settings.repeat)]
    waiting: deque[int] = deque()
    for repeat, future in enumerate(futures):
        if finished and repeat in finished:
            future.set_result(finished[repeat])
        else:
            waiting.append(repeat)
    lock = threading.Lock()

    def one(repeat: int) -> LiveRun:
        return _kept(run_repeat(case, repeat, settings, selector, limit, stop), keep)

    def stopped(repeat: int) -> None:
        futures[repeat].set_exception(LiveRunsStopped(f"{case.id}: the session ended before run {repeat + 1} began"))

    def ended(repeat: int, done: Future[LiveRun]) -> None:
        if done.cancelled():  # the pool was shut down before the run began
            stopped(repeat)
        elif done.exception() is not None:
            futures[repeat].set_exception(done.exception())  # type: ignore[arg-type]
        else:
            futures[repeat].set_result(done.result())
        start_next()

    def start_next() -> None:
        while True:
            with lock:
                if not waiting:
                    return
                repeat = waiting.popleft()
            if not stop.is_set():
                try:
                    submitted = pool.submit(one, repeat)
                except RuntimeError:  # the pool is shut down: the session is stopping
                    pass
                else:
                    submitted.add_done_callback(partial(ended, repeat))
                    return
            stopped(repeat)

    for _ in range(min(case.max_concurrency or len(waiting), len(waiting))):
        start_next()
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
