"""pytest plugin for retrieval suites: one test per retriever, plus one per ``identical`` group.

Loaded through the ``pytest11`` entry point; a test module opts in by asking for the
``retrieval_target`` fixture (see ``evals/test_retrieval.py``).
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import pytest

if TYPE_CHECKING:  # imported lazily below: a project without retrieval suites never loads them
    from rag_core.evals.retrieval.datasets import Dataset
    from rag_core.evals.retrieval.evaluate import RetrieverResult
    from rag_core.evals.retrieval.suite import SuiteSpec


@dataclass
class Target:
    id: str
    suite: SuiteSpec | None = None
    retriever: str | None = None  # None: an `identical` group check or a sweep
    group: list[str] | None = None
    sweep: int | None = None  # index into suite.sweep
    error: str | None = None
    # the tests that reuse one another's retriever results or tables (identical groups, sweeps,
    # the retrievers they read, PgVector retrievers sharing a table) share a process under
    # pytest-xdist's --dist loadgroup
    shares_results: bool = False

    def marks(self) -> list[Any]:
        marks = [pytest.mark.xdist_group(f"{self.suite.name}/shared")] if self.shares_results and self.suite else []
        return marks + [getattr(pytest.mark, tag) for tag in self.tags()]

    def tags(self) -> list[str]:
        """The ``tags:`` of the retrievers this test runs: a group or a sweep needs what each of them needs."""
        if self.suite is None:
            return []
        names = self.group or ([self.suite.sweep[self.sweep].retriever] if self.sweep is not None else
                               [self.retriever] if self.retriever else [])
        return list(dict.fromkeys(tag for name in names for tag in self.suite.retriever(name).tags))


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rag-core", "rag-core golden cases and retrieval suites")
    group.addoption("--update-baselines", action="store_true", default=False,
                    help="write each retriever's numbers as its new baseline")
    group.addoption("--report-dir", default=None, metavar="DIR",
                    help="write retrieval.json, retrieval.md, TREC run files and the figures there")
    group.addoption("--retrieval-threads", type=int, default=None, metavar="N",
                    help="run the retrievers over Chroma, PgVector and LanceDB in N background threads from "
                         "the session's first test on (default: one per core, at most 4; none on one core, in "
                         "pytest-xdist workers or when recording); 0 runs each when its test does, so its "
                         "timings are taken alone")
    parser.addini("rag_core_retrieval", "folder of retrieval suite files", default="fixtures/retrieval")


def _targets(config: pytest.Config) -> list[Target]:
    from rag_core.evals.common.paths import shown
    from rag_core.evals.retrieval.suite import SuiteFileError, load_suite, suite_files

    targets: list[Target] = []
    loaded: list[SuiteSpec | Target] = []
    for path in suite_files(Path(config.rootpath) / config.getini("rag_core_retrieval")):
        try:
            loaded.append(load_suite(path))
        except SuiteFileError as exc:
            loaded.append(Target(path.stem, error=str(exc)))
    files: dict[str, list[Path]] = {}
    for suite in loaded:
        if not isinstance(suite, Target):
            files.setdefault(suite.name, []).append(suite.source)
    for suite in loaded:
        if isinstance(suite, Target):
            targets.append(suite)
            continue
        if len(files[suite.name]) > 1:  # their baselines (keyed by suite name) and results would be one another's
            targets.append(Target(suite.source.stem, error=f"{' and '.join(shown(p) for p in files[suite.name])} "
                                                           f"both define the suite {suite.name!r}; rename one"))
            continue
        reused = {name for g in suite.identical for name in g} | {s.retriever for s in suite.sweep}
        # PgVector retrievers that can share a loaded table (see evaluate.SharedTables)
        tables = Counter(r.exact for r in suite.retrievers if r.store == "pgvector")
        reused |= {r.name for r in suite.retrievers if r.store == "pgvector" and tables[r.exact] > 1}
        targets += [Target(f"{suite.name}/{r.name}", suite, r.name, shares_results=r.name in reused)
                    for r in suite.retrievers]
        targets += [Target(f"{suite.name}/identical:{'='.join(g)}", suite, None, g, shares_results=True)
                    for g in suite.identical]
        targets += [Target(f"{suite.name}/sweep:{s.retriever}" + (f"#{n}" if n else ""), suite, sweep=n,
                           shares_results=True) for n, s in enumerate(suite.sweep)]
    return targets


def pytest_configure(config: pytest.Config) -> None:
    from rag_core.evals.orphans import mark_session_start

    mark_session_start(config)  # for both plugins' --prune-orphans: nothing modified since is deleted
    folder = config.getoption("report_dir", None)
    if folder:
        from rag_core.evals.plugins.golden import writable_report_path

        writable_report_path("--report-dir", folder, folder=True)
    config.pluginmanager.register(_Summary(config), "rag_core_retrieval_summary")
    # pytest-xdist registers this mark itself; without it the marks would be unknown ones
    config.addinivalue_line("markers", "xdist_group(name): run the tests of one group in one pytest-xdist worker")
    _register_tags(config)


def _register_tags(config: pytest.Config) -> None:
    """The retrievers' ``tags:`` as markers, known from the start as the golden cases' tags are:
    under --strict-markers any test module may mark with them (and ``-m`` select by them)."""
    folder = Path(config.rootpath) / config.getini("rag_core_retrieval")
    if not any(folder.glob("*.yaml")):  # no suites: the suite models are not even imported
        return
    from rag_core.evals.retrieval.suite import SuiteFileError, load_suite, suite_files

    tags: set[str] = set()
    for path in suite_files(folder):
        try:
            tags |= {tag for retriever in load_suite(path).retrievers for tag in retriever.tags}
        except SuiteFileError:
            pass  # its test reports it
    known = {line.split(":", 1)[0].split("(", 1)[0].strip() for line in config.getini("markers")}
    for tag in sorted(tags - known):
        config.addinivalue_line("markers", f"{tag}: retrievers tagged {tag!r}")


def golden_folder(config: pytest.Config, ini: str, default: str) -> Path:
    """A folder the golden plugin's ini option names (its default where that plugin is disabled)."""
    try:
        folder = config.getini(ini)
    except (ValueError, AttributeError):
        folder = default
    return Path(config.rootpath) / folder


def embedding_mode(config: pytest.Config) -> str:
    """Replay unless recording was asked for (a --record-mode other than none, outside CI and
    without --block-network): a session never calls an embedding provider, nor rewrites a
    committed cache, by accident."""
    import os

    asked = config.getoption("record_mode", "none") not in (None, "none")
    if asked and not os.environ.get("CI") and not config.getoption("block_network", False):
        return "record"
    return "replay"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "retrieval_target" in metafunc.fixturenames:
        targets = _targets(metafunc.config)
        # no suite yet (a new project: rag-core init writes this module before any suite) skips, naming where one goes
        folder = metafunc.config.getini("rag_core_retrieval")
        metafunc.parametrize("retrieval_target", [pytest.param(t, id=t.id, marks=t.marks()) for t in targets] or [
            pytest.param(Target("no-suites"), id="no-suites", marks=pytest.mark.skip(
                reason=f"no retrieval suites in {folder}/ (the rag_core_retrieval setting) yet: each suite file "
                       "there makes one test per retriever"))])


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
            cassettes=golden_folder(config, "rag_core_cassettes", "cassettes") / FOLDER,
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


@pytest.fixture(scope="session")
def retrieval_runner(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RetrievalRunner]:
    runner = RetrievalRunner(request.config, tmp_path_factory)
    yield runner
    runner.close()


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


def _external_retrievers(items: list[pytest.Item]) -> list[tuple[SuiteSpec, Any]]:
    """The retrievers over stores other than memory that the session's tests read, in test order."""
    wanted: dict[tuple[str, str], tuple[SuiteSpec, Any]] = {}
    for item in items:
        target = getattr(item, "callspec", None) and item.callspec.params.get("retrieval_target")
        if not isinstance(target, Target) or target.suite is None or target.error:
            continue
        suite = target.suite
        if target.sweep is not None:
            spec = suite.sweep[target.sweep]
            specs = [suite.retriever(spec.retriever), *suite.variants(spec)]
        else:
            specs = [suite.retriever(name) for name in (target.group or [target.retriever])]
        for spec in specs:
            if spec.runs_in_background:
                wanted.setdefault((suite.name, spec.name), (suite, spec))
    return list(wanted.values())


@pytest.fixture(scope="session", autouse=True)
def _rag_core_background_retrievers(request: pytest.FixtureRequest) -> None:
    """From the session's first test on, the selected retrievers over external stores run in the background."""
    threads = background_threads(request.config)
    wanted = _external_retrievers(request.session.items) if threads else []
    if wanted:
        runner: RetrievalRunner = request.getfixturevalue("retrieval_runner")
        runner.start(wanted, threads)


@pytest.fixture
def retrieval_check(retrieval_runner: RetrievalRunner, request: pytest.FixtureRequest):
    def check(target: Target) -> None:
        from rag_core.embedder.cache import EmbeddingCacheMiss
        from rag_core.evals.credentials import CredentialError
        from rag_core.evals.common.paths import shown
        from rag_core.evals.retrieval.datasets import DatasetError
        from rag_core.evals.retrieval.evaluate import DatasetUnavailable
        from rag_core.evals.retrieval.gate import BaselineError
        from rag_core.evals.retrieval.recording import RecordingError
        from rag_core.evals.retrieval.run_files import RunFileError
        from rag_core.evals.retrieval.retriever_targets import RetrieverTargetError

        if target.error:
            pytest.fail(target.error, pytrace=False)
        assert target.suite is not None
        retrieval_runner.test_function = request.node.nodeid.partition("[")[0]
        failure = None
        try:
            if target.sweep is not None:
                _check_sweep(retrieval_runner, target, request)
            elif target.retriever is None:
                _check_identical(retrieval_runner, target)
            else:
                _check_retriever(retrieval_runner, target, request)
        except DatasetUnavailable as exc:
            pytest.skip(str(exc))
        # CredentialError: a file the run writes (an embedding cache's manifest) holds what looks like one
        except (DatasetError, BaselineError, RetrieverTargetError, RecordingError, RunFileError,
                CredentialError) as exc:
            failure = str(exc)
        except EmbeddingCacheMiss as exc:
            suite_file = shown(target.suite.source) if target.suite.source else target.suite.name
            failure = (f"suite {target.suite.name}: the embedding cache {shown(exc.path)} has no vector for {exc.missing} "
                       f"of {exc.total} {exc.input_type} text(s) (first: {exc.sample[:80]!r}); nothing was recorded, as "
                       f"none was asked for.\nRecord the suite's embeddings: rag-core cache record {suite_file}")
        if failure is not None:  # outside the except block: no chained traceback in the report
            pytest.fail(failure, pytrace=False)

    return check


def _check_retriever(runner: RetrievalRunner, target: Target, request: pytest.FixtureRequest) -> None:
    from rag_core.evals.retrieval import gate

    suite = target.suite
    assert suite is not None and target.retriever is not None
    result = runner.result(suite, target.retriever)
    for note in result.notes:  # a stale cassette whose rankings still came out the same (recording.py)
        request.node.warn(pytest.PytestWarning(note))
    path = gate.baseline_file(suite, runner.root, target.retriever)
    update = runner.config.getoption("update_baselines") and path is not None
    try:
        baseline = gate.load_baseline(suite, runner.root, target.retriever)
    except gate.BaselineError as exc:
        # --update-baselines rewrites a broken file of this retriever, never another suite's
        if not update or (exc.foreign and exc.path == path):
            raise
        baseline = None
    worse = gate.worse_queries(suite, result, baseline)
    failures, table = gate.check(suite, result, baseline)
    if update:
        threshold_failures = [f for f in failures if "threshold" in f]
        gate.write_baseline(path, suite, result)
        failures = threshold_failures  # a new baseline is accepted; thresholds still hold
    summary = {**result.summary(), "gate": "FAIL" if failures else "pass",
               "baseline_per_query": (baseline or {}).get("per_query", {}).get(suite.metrics[0])}
    request.node.user_properties.append(("rag_core_retrieval", {"summary": summary, "worse": worse}))
    # the run record (rag_core/evals/runs): the gate's verdicts, its thresholds and the query texts
    from rag_core.evals.runs.retrieval import gate_property

    request.node.user_properties.append(gate_property(failures, suite.thresholds.get(target.retriever, {}),
                                                      getattr(runner.datasets.get(suite.name), "queries", None)))
    if failures:
        drops = "".join(f"\n  {q}: {b:.4f} -> {n:.4f}" for q, b, n in worse[:15])
        pytest.fail(
            f"{target.id}: " + "; ".join(failures) + f"\n\n{table}"
            + (f"\n\nqueries worse than the baseline ({suite.metrics[0]}):{drops}" if worse else "")
            + "\n\nif the change is intended: pytest evals/ --update-baselines",
            pytrace=False,
        )


def _check_sweep(runner: RetrievalRunner, target: Target, request: pytest.FixtureRequest) -> None:
    from rag_core.evals.retrieval import sweep as sweeps

    suite = target.suite
    assert suite is not None and target.sweep is not None
    spec = suite.sweep[target.sweep]
    pinned = runner.result(suite, spec.retriever)
    points = [runner.run(suite, variant) for variant in suite.variants(spec)]
    summary = sweeps.summarize(suite, spec, pinned, points)
    request.node.user_properties.append(("rag_core_sweep", summary))
    failures = sweeps.keep_best_failures(suite, spec, summary, pinned, points)
    if failures:
        pytest.fail(f"{target.id}: " + "; ".join(failures) + "\n\n" + "\n".join(sweeps.table(summary)), pytrace=False)


def _check_identical(runner: RetrievalRunner, target: Target) -> None:
    suite = target.suite
    assert suite is not None and target.group is not None
    results = [runner.result(suite, name) for name in target.group]
    reference = results[0]
    for other in results[1:]:
        differing = [q for q in reference.rankings if reference.rankings[q] != other.rankings[q]]
        metric_gaps = {m: (reference.metrics[m], other.metrics[m]) for m in suite.metrics
                       if abs(reference.metrics[m] - other.metrics[m]) > 1e-12}
        if differing or metric_gaps:
            pytest.fail(
                f"{target.id}: {other.retriever} differs from {reference.retriever}: "
                f"{len(differing)} of {len(reference.rankings)} rankings differ (first: {differing[:5]}); metrics {metric_gaps}",
                pytrace=False,
            )


class _Summary:
    """Collects retriever results (from this process or xdist workers) for one session's reports."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.results: list[dict[str, Any]] = []
        self.worse: dict[str, list[Any]] = {}
        self.sweeps: list[dict[str, Any]] = []
        self.report_lines: list[str] = []  # what writing --report-dir came to (written at session finish)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        for key, info in report.user_properties:
            if key == "rag_core_retrieval":
                self.results.append(info["summary"])
                self.worse[f"{info['summary']['suite']}/{info['summary']['retriever']}"] = info["worse"]
            elif key == "rag_core_sweep":
                self.sweeps.append(info)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not (self.results or self.sweeps) or hasattr(self.config, "workerinput"):
            return
        from rag_core.evals.retrieval import report
        from rag_core.evals.retrieval.sweep import table as sweep_table

        terminalreporter.section("rag-core retrieval suites")
        for line in report.table(self.results):
            terminalreporter.write_line(line)
        for summary in sorted(self.sweeps, key=lambda s: (s["suite"], s["retriever"])):
            for line in [*sweep_table(summary), ""]:
                terminalreporter.write_line(line)
        self._orphans(terminalreporter)
        for line in self.report_lines:
            terminalreporter.write_line(f"report: {line}")

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """Write ``--report-dir`` here, not in the terminal summary (which pytest prints after the
        session's exit status is settled): a report that cannot be written fails the session."""
        folder = self.config.getoption("report_dir", None)
        if not folder or not (self.results or self.sweeps) or hasattr(self.config, "workerinput"):
            return
        from rag_core.evals.credentials import CredentialError
        from rag_core.evals.retrieval import report

        try:
            self.report_lines = report.write(Path(folder), self.results, self.worse, self.sweeps)
        except (OSError, CredentialError) as exc:
            self.report_lines = [f"not written: {exc}"]
            if session.exitstatus == 0:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _orphans(self, terminalreporter: Any) -> None:
        from rag_core.evals.common.paths import shown
        from rag_core.evals.orphans import BaselineFiles, RetrieverRecordings, prune_lines

        # the suite files as they are now (one changed or added meanwhile owns its baselines and recordings)
        root = Path(self.config.rootpath)
        suites = root / self.config.getini("rag_core_retrieval")
        try:  # a golden case may name a recording as its cassette
            cases: Path | None = root / self.config.getini("rag_core_cases")
        except (ValueError, AttributeError):  # the golden plugin is disabled: no case owns anything
            cases = None
        families = [BaselineFiles(root, suites),
                    RetrieverRecordings(golden_folder(self.config, "rag_core_cassettes", "cassettes"), suites, cases)]
        found = [(files, *files.orphans()) for files in families]
        for note in dict.fromkeys(note for _, _, note in found if note):  # both say so when a suite does not load
            terminalreporter.write_line(f"  {note}")
        listed = False
        for files, orphans, _ in found:
            if orphans and self.config.getoption("prune_orphans", False):
                for line in prune_lines(files, orphans, self.config):
                    terminalreporter.write_line(line)
            elif orphans:
                listed = True
                for path in orphans:
                    terminalreporter.write_line(f"  orphan (no retriever uses it): {shown(path)}")
        if listed:
            terminalreporter.write_line("  delete them with --prune-orphans")
