"""Cases of a pytest session run at once (``--concurrency N``, live runs and recordings).

pytest runs one test at a time, and its reporting stays as it is: at the session's first case,
every selected case's runs are handed to one pool of threads, and each case's test then waits
for its own and reports it. Later cases go on while earlier ones are reported. Under
pytest-xdist a worker does not know which cases it will get: it runs a case's live repeats at
once, but its cases one after another.

The case's environment (``provider_environment``) is held open for the whole session: runs in
threads cannot each set and unset process-wide variables. The async targets' one event loop
runs in a thread of its own, for the runs to share.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from functools import partial
from typing import Any, Callable, Iterable

from rag_core.evals.recording import routing
from rag_core.evals.golden.case import GoldenCase
from rag_core.evals.golden.live_runs import LiveResult, LiveRun, LiveRunsStopped, gathered, run_live, submit_live
from rag_core.evals.common.errors import RecordingFailed
from rag_core.evals.golden.interrupts import DeferredInterrupt
from rag_core.evals.golden.live_journal import LiveJournal
from rag_core.evals.recording.provider_limits import AdaptiveLimit, ProviderLimits
from rag_core.evals.recording.retrying import Tried, asked_wait, retried
from rag_core.evals.recording.provider_env import provider_environment
from rag_core.evals.golden.runner import CaseResult, Settings, run_case
from rag_core.evals.golden.subjects import subject_of


class _Concurrent:
    """The pools, the providers' limits and what the runs share, for one session."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.limits = ProviderLimits(settings.concurrency)
        self.stop = threading.Event()
        self.at_once = settings.concurrency > 1
        self._pools: dict[str | None, ThreadPoolExecutor] = {}
        self._lock = threading.Lock()
        self._held = ExitStack()
        self.interrupt = DeferredInterrupt()  # Ctrl-C taken where the main thread holds nothing
        if self.at_once:
            from rag_core.evals.golden.targets import start_shared_loop

            _import_before_the_runs()

            self._held.enter_context(provider_environment())
            start_shared_loop()
            self.interrupt.install()

    def pool_of(self, provider: str | None) -> ThreadPoolExecutor:
        """A pool per provider, of as many threads as its limit lets runs be in flight: a
        provider that pushes back holds its own runs, never another provider's."""
        with self._lock:
            if provider not in self._pools:
                self._pools[provider] = ThreadPoolExecutor(self.settings.concurrency,
                                                           thread_name_prefix=f"rag-core-run-{provider or 'target'}")
            return self._pools[provider]

    def close(self) -> None:
        """No run begins after this; runs under way end on their own (a run waiting for room or
        for a provider's pause stops waiting), and the session's environment is held until they
        have."""
        self.interrupt.restore()
        self.stop.set()
        for pool in self._pools.values():
            pool.shutdown(wait=False, cancel_futures=True)
        for pool in self._pools.values():
            pool.shutdown(wait=True)
        self._held.close()

    def finished(self) -> list[tuple[str, CaseResult]]:
        """(selector, result) of each case whose run ended with a result (what it recorded is
        written). After ``close``, those of a session cut short (Ctrl-C) too: their tests may not
        have reported them."""
        return []


def _import_before_the_runs() -> None:
    """numpy (the vector stores, bm25s, chromadb and scipy import it on first use) imported in the
    session's thread: imported by several runs' threads at once, its circular imports handed one
    of them a half-initialized module (``cannot import name 'NDArray' from partially initialized
    module``). The harness's own first use of what every run needs (vcrpy for its scratch
    cassette, genai-prices for its price, the credential ruleset for what it writes) is made here
    too, once: made by the first runs at once, each of them waits for it, holding the
    interpreter, before the next runs can begin."""
    from rag_core.evals.secret_rules import RulesetError, ruleset
    from rag_core.evals.wire.cost import available

    try:
        import numpy  # noqa: F401
    except ImportError:  # the harness alone: no run of this session uses it
        pass
    import vcr  # noqa: F401

    available()
    try:
        ruleset()
    except RulesetError:  # refused by the first write, which names the cause, as without runs at once
        pass


class LiveSession(_Concurrent):
    """``--live``: each case's repeats, and the cases, at once; each run kept in ``journal`` as it
    ends, and under ``--resume`` the runs it kept taken instead of made again."""

    def __init__(self, settings: Settings, journal: LiveJournal | None = None, resume: bool = False) -> None:
        super().__init__(settings)
        self.journal, self.resume = journal, resume
        self.submitted: dict[str, list[Future[LiveRun]]] = {}

    def submit(self, cases: Iterable[tuple[GoldenCase, str]]) -> None:
        """Start the runs of these (case, selector) pairs, in order, unless started already."""
        if not self.at_once:
            return
        for case, selector in cases:
            if case.id not in self.submitted:
                provider = subject_of(case, case.target).provider
                self.submitted[case.id] = submit_live(case, self.settings, selector, self.limits.of(provider),
                                                      self.pool_of(provider), self.stop, self._finished(case),
                                                      partial(self._keep, case))

    def result(self, case: GoldenCase, selector: str) -> LiveResult:
        if not self.at_once:
            return run_live(case, self.settings, selector, self.limits, self.stop, self._finished(case),
                            partial(self._keep, case))
        self.submit([(case, selector)])
        futures = self.submitted.pop(case.id)
        for future in futures:
            self.interrupt.wait(future)
        return gathered(case, futures)

    def _finished(self, case: GoldenCase) -> dict[int, LiveRun]:
        return self.journal.finished(case) if self.journal is not None and self.resume else {}

    def _keep(self, case: GoldenCase, run: LiveRun) -> None:
        """Keep a finished run for a resumed session; one that cannot be kept (a folder that
        cannot be written, or an answer the credential detector refuses to write) is made again
        by that session, and costs this one nothing."""
        from rag_core.evals.credentials import CredentialError

        if self.journal is not None:
            try:
                self.journal.keep(case, run)
            except (OSError, CredentialError):
                pass


class RecordingSession(_Concurrent):
    """Recording (live, or against the emulator): the cases at once, each committed on its own
    when it succeeds, exactly as one at a time would (same files, same bytes). A session cut
    short (Ctrl-C) lets the runs under way end, and commit: ``finished`` names what they
    wrote, for the summary and the run record to list."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.submitted: dict[str, Future[CaseResult]] = {}  # kept to the end: see ``finished``
        self.selectors: dict[str, str] = {}

    def _record(self, case: GoldenCase, selector: str) -> CaseResult:
        if self.stop.is_set():
            raise LiveRunsStopped(f"{case.id}: the session ended before the case began")
        limit = self.limits.of(subject_of(case, case.target).provider)
        return record_with_retries(case, self.settings, selector, limit, self.stop)

    def submit(self, cases: Iterable[tuple[GoldenCase, str]]) -> None:
        if not self.at_once:
            return
        for case, selector in cases:
            if case.id not in self.submitted:
                pool = self.pool_of(subject_of(case, case.target).provider)
                self.submitted[case.id] = pool.submit(self._record, case, selector)
                self.selectors[case.id] = selector

    def result(self, case: GoldenCase, selector: str) -> Any:
        if not self.at_once:
            return self._record(case, selector)
        self.submit([(case, selector)])
        return self.interrupt.wait(self.submitted[case.id])

    def finished(self) -> list[tuple[str, CaseResult]]:
        # a run that failed wrote nothing; one cancelled never began
        return [(self.selectors[case_id], future.result()) for case_id, future in self.submitted.items()
                if future.done() and not future.cancelled() and future.exception() is None]


def record_with_retries(case: GoldenCase, settings: Settings, selector: str, limit: AdaptiveLimit,
                        stop: threading.Event, pause: Callable[[float], bool] | None = None) -> CaseResult:
    """Record the case under its provider's limit; a recording the provider failed with a 429 or
    5xx (nothing of it was written) is made again (``retrying.py``), then fails as it did,
    saying so."""

    def make() -> Tried[CaseResult]:
        with routing.own_run(case.id):
            try:
                result = run_case(case, settings, selector)
            except RecordingFailed as exc:
                if not exc.pushed_back:
                    raise
                return Tried(error=exc, pushed_back=True, provider_failed=True, asked=exc.wait)
        return Tried(result, pushbacks=result.pushbacks, pushed_back=bool(result.pushbacks),
                     asked=asked_wait(result.pushbacks))

    tried = retried(make, limit, settings.retries, stop, pause)
    if tried.error is not None:
        raise RecordingFailed(f"{tried.error} (the recording {tried.gave_up})") from None
    assert tried.value is not None
    return tried.value
