"""The retrievers of a session's suites computed once each, shared by every test that reads them
(an ``identical`` group, a sweep), those over external stores in background threads from the
session's first test on; PgVector tables shared by a suite's retrievers, dropped at its end."""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from rag_core.evals.plugins import options
from rag_core.evals.plugins.options import embedding_mode

if TYPE_CHECKING:  # imported lazily below: a project without retrieval suites never loads them
    from rag_core.evals.retrieval.datasets import Dataset
    from rag_core.evals.retrieval.evaluate import RetrieverResult
    from rag_core.evals.retrieval.suite import SuiteSpec


class RetrievalRunner:
    """Runs retrievers, caching results and datasets for the rest of the session (process).

    Retrievers over Chroma, PgVector and LanceDB can start in background threads (``start``):
    their work happens mostly outside the interpreter (the PostgreSQL server, Chroma's and
    LanceDB's native cores), so it overlaps with the tests running meanwhile, and a test asking
    for such a result waits for it. In-memory retrievers stay in the test's own thread: their
    work holds the interpreter, so running them beside the tests would only take turns with them.
    """

    def __init__(self, config: pytest.Config, tmp: pytest.TempPathFactory) -> None:
        self.config = config
        self.root = Path(config.rootpath)
        self.tmp = tmp
        self.datasets: dict[str, Dataset] = {}
        self.embedders: dict[str, Any] = {}  # one embedding cache per suite, read from disk once
        self.results: dict[tuple[str, str], Future[RetrieverResult]] = {}
        self.shared: dict[str, Any] = {}  # per suite: the PgVector tables its retrievers share
        self._lock = threading.Lock()  # ``results``: which thread computes a result
        self._loading = threading.Lock()  # ``datasets``, ``embedders``, ``shared``: read once per suite
        # pytest's TempPathFactory is not thread-safe: two threads making the session's first
        # folder at once both create its base folder (FileExistsError), or one empties it under the other
        self._temp_dirs = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self.threads = 0  # background threads running retrievers in this session
        # the node id of the retrieval test function, less its parameter: set by the first check
        self.test_function = "evals/test_retrieval.py::test_retrieval"

    def _pg_url(self) -> str:
        from rag_core.evals.postgres import NoPostgres, postgres_url, required

        try:
            with self._temp_dirs:
                data_dir = self.tmp.mktemp("pg")
            return postgres_url(data_dir)
        except NoPostgres as exc:
            if required():
                pytest.fail(str(exc))
            pytest.skip(str(exc))

    def result(self, suite: SuiteSpec, name: str) -> RetrieverResult:
        return self.run(suite, suite.retriever(name))

    def run(self, suite: SuiteSpec, spec: Any) -> RetrieverResult:
        """The retriever's result: computed here (also when it is queued for a background thread
        that has not started it: no test waits idle), or awaited if a background thread has it."""
        future = self._future(suite, spec)
        self._compute(future, suite, spec)
        return future.result()

    def start(self, wanted: list[tuple[SuiteSpec, Any]], threads: int) -> None:
        """Compute these retrievers' results in background threads, in this order."""
        self.threads = threads
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="rag-core-retriever")
        for suite, spec in wanted:
            self._pool.submit(self._compute, self._future(suite, spec), suite, spec)

    def _future(self, suite: SuiteSpec, spec: Any) -> Future[RetrieverResult]:
        """The one future of this retriever's result in the session."""
        with self._lock:
            return self.results.setdefault((suite.name, spec.name), Future())

    def _claim(self, future: Future[RetrieverResult]) -> bool:
        with self._lock:
            return not (future.running() or future.done()) and future.set_running_or_notify_cancel()

    def _compute(self, future: Future[RetrieverResult], suite: SuiteSpec, spec: Any) -> None:
        """Compute the result into ``future``, unless another thread has claimed it."""
        from rag_core.evals.retrieval.evaluate import SharedTables, build_embedder, load_dataset, run_retriever

        if not self._claim(future):
            return
        try:
            from rag_core.evals.retrieval.retrievers import skip_unless_runnable

            # what needs a framework (requires:) or --live (live: true) is skipped before any work
            skip_unless_runnable(suite, spec, self.replay_settings(), self.selector(suite.name, spec.name))
            with self._loading:  # a suite's dataset and embedding cache are read once, whichever thread asks first
                if suite.name not in self.datasets:
                    # without the texts: each store reads them from the corpus file as it indexes,
                    # so a memory store's copy is the only one in memory (the session held all of
                    # them as Python strings, 2.3 KB a SciFact abstract, for its whole length)
                    self.datasets[suite.name] = load_dataset(suite, self.root, texts=False)
                if suite.embedder and suite.name not in self.embedders:
                    self.embedders[suite.name] = build_embedder(suite.embedder, self.root, embedding_mode(self.config))
                shared = self.shared.setdefault(suite.name, SharedTables())
            if spec.kind == "builtin" and spec.runs_in_background:
                result = run_retriever(suite, spec, self.datasets[suite.name], self.embedders.get(suite.name),
                                       self._pg_url, shared)
            else:
                result = self._in_test_thread(suite, spec, shared, run_retriever)
            result.background_threads = self.threads
        except BaseException as exc:  # pytest's skip and fail too: they reach every test that waits for it
            future.set_exception(exc)
        else:
            future.set_result(result)

    def _in_test_thread(self, suite: SuiteSpec, spec: Any, shared: Any, run_retriever: Any) -> RetrieverResult:
        """A retriever that runs where its test runs (retrievers.py): a run file; a target or a
        reranking store, recorded or replayed; an in-memory store, behind the network guard
        (unless the session records embeddings)."""
        from rag_core.evals.retrieval import retrievers

        dataset, embedder = self.datasets[suite.name], self.embedders.get(suite.name)
        if spec.kind == "run":
            return retrievers.run_file_result(suite, spec, dataset, self.root)
        if spec.records_traffic:
            return retrievers.recorded_result(suite, spec, dataset, embedder, self._pg_url, shared, self.root,
                                              self.replay_settings(), self.selector(suite.name, spec.name))
        if embedding_mode(self.config) == "record":
            return run_retriever(suite, spec, dataset, embedder, self._pg_url, shared)
        return retrievers.guarded_built_in(suite, spec, dataset, embedder, self._pg_url, shared, run_retriever)

    def replay_settings(self) -> Any:
        """The session's recording options (recording.ReplaySettings), as golden cases read them."""
        from rag_core.evals.retrieval.recording import FOLDER, ReplaySettings

        config = self.config
        strict = config.getoption("strict_cassettes", None)
        return ReplaySettings(
            cassettes=options.folder(config, "rag_core_cassettes", "cassettes") / FOLDER,
            record_mode=config.getoption("record_mode", None) or "none",
            emulator=bool(config.getoption("emulator", False)),
            block_network=bool(config.getoption("block_network", False)),
            strict=bool(os.environ.get("CI")) if strict is None else bool(strict),
            live=bool(config.getoption("live", False)),
        )

    def selector(self, suite: str, retriever: str) -> str:
        """The node id of the test that runs this retriever (a sweep point: its sweep's), for commands."""
        swept, point, _ = retriever.partition("[")
        return f"{self.test_function}[{suite}/{f'sweep:{swept}' if point else retriever}]"

    def close(self) -> None:
        """Cancel what has not started, wait for what has, then drop the tables the suites' retrievers shared."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        for future in self.results.values():
            future.cancel()  # queued ones nobody computed (a stopped session): nothing waits for them
        for tables in self.shared.values():
            tables.drop_all()


def background_threads(config: pytest.Config) -> int:
    """--retrieval-threads, else one per core (at most 4: each holds a store and its corpus),
    none on one core, in a pytest-xdist worker (xdist spreads the tests already) or when
    recording (one provider call at a time)."""
    asked = config.getoption("retrieval_threads", None)
    if asked is not None:
        return max(asked, 0)
    if hasattr(config, "workerinput") or embedding_mode(config) == "record":
        return 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return min(cores, 4) if cores >= 2 else 0
