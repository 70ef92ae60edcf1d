"""pytest plugin for retrieval suites: one test per retriever, plus one per ``identical`` group.

Loaded through the ``pytest11`` entry point; a test module opts in by asking for the
``retrieval_target`` fixture (see ``evals/test_retrieval.py``).
"""

from __future__ import annotations

from collections import Counter
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
        return [pytest.mark.xdist_group(f"{self.suite.name}/shared")] if self.shares_results and self.suite else []


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rag-core", "rag-core golden cases and retrieval suites")
    group.addoption("--update-baselines", action="store_true", default=False,
                    help="write each retriever's numbers as its new baseline")
    group.addoption("--report-dir", default=None, metavar="DIR",
                    help="write retrieval.json, retrieval.md, TREC run files and the figures there")
    parser.addini("rag_core_retrieval", "folder of retrieval suite files", default="fixtures/retrieval")


def _targets(config: pytest.Config) -> list[Target]:
    from rag_core.evals.retrieval.suite import SuiteFileError, load_suite, suite_files

    targets: list[Target] = []
    for path in suite_files(Path(config.rootpath) / config.getini("rag_core_retrieval")):
        try:
            suite = load_suite(path)
        except SuiteFileError as exc:
            targets.append(Target(path.stem, error=str(exc)))
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
    folder = config.getoption("report_dir", None)
    if folder:
        from rag_core.evals.harness.plugin import writable_report_path

        writable_report_path("--report-dir", folder, folder=True)
    config.pluginmanager.register(_Summary(config), "rag_core_retrieval_summary")
    # pytest-xdist registers this mark itself; without it the marks would be unknown ones
    config.addinivalue_line("markers", "xdist_group(name): run the tests of one group in one pytest-xdist worker")


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
        metafunc.parametrize("retrieval_target", [pytest.param(t, id=t.id, marks=t.marks()) for t in targets] or [
            pytest.param(Target("no-suites", error="no retrieval suites found"), id="no-suites")])


class RetrievalRunner:
    """Runs retrievers, caching results and datasets for the rest of the session (process)."""

    def __init__(self, config: pytest.Config, tmp: pytest.TempPathFactory) -> None:
        self.config = config
        self.root = Path(config.rootpath)
        self.tmp = tmp
        self.datasets: dict[str, Dataset] = {}
        self.embedders: dict[str, Any] = {}  # one embedding cache per suite, read from disk once
        self.results: dict[tuple[str, str], RetrieverResult] = {}
        self.shared: dict[str, Any] = {}  # per suite: the PgVector tables its retrievers share

    def _pg_url(self) -> str:
        from rag_core.evals.postgres import NoPostgres, postgres_url, required

        try:
            return postgres_url(self.tmp.mktemp("pg"))
        except NoPostgres as exc:
            if required():
                pytest.fail(str(exc))
            pytest.skip(str(exc))

    def result(self, suite: SuiteSpec, name: str) -> RetrieverResult:
        return self.run(suite, suite.retriever(name))

    def run(self, suite: SuiteSpec, spec: Any) -> RetrieverResult:
        from rag_core.evals.retrieval.evaluate import SharedTables, build_embedder, load_dataset, run_retriever

        key = (suite.name, spec.name)
        if key not in self.results:
            if suite.name not in self.datasets:
                self.datasets[suite.name] = load_dataset(suite, self.root)
            if suite.embedder and suite.name not in self.embedders:
                self.embedders[suite.name] = build_embedder(suite.embedder, self.root, embedding_mode(self.config))
            self.results[key] = run_retriever(suite, spec, self.datasets[suite.name], self.embedders.get(suite.name),
                                              self._pg_url, self.shared.setdefault(suite.name, SharedTables()))
        return self.results[key]

    def close(self) -> None:
        """Drop the tables the suites' retrievers shared."""
        for tables in self.shared.values():
            tables.drop_all()


@pytest.fixture(scope="session")
def retrieval_runner(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RetrievalRunner]:
    runner = RetrievalRunner(request.config, tmp_path_factory)
    yield runner
    runner.close()


@pytest.fixture
def retrieval_check(retrieval_runner: RetrievalRunner, request: pytest.FixtureRequest):
    def check(target: Target) -> None:
        from rag_core.embedder.cache import EmbeddingCacheMiss
        from rag_core.evals.harness.paths import shown
        from rag_core.evals.retrieval.datasets import DatasetError
        from rag_core.evals.retrieval.evaluate import DatasetUnavailable

        if target.error:
            pytest.fail(target.error, pytrace=False)
        assert target.suite is not None
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
        except DatasetError as exc:
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
    path = gate.baseline_file(suite, runner.root, target.retriever)
    baseline = gate.load_baseline(path)
    worse = gate.worse_queries(suite, result, baseline)
    failures, table = gate.check(suite, result, baseline)
    if runner.config.getoption("update_baselines") and path is not None:
        threshold_failures = [f for f in failures if "threshold" in f]
        gate.write_baseline(path, suite, result)
        failures = threshold_failures  # a new baseline is accepted; thresholds still hold
    summary = {**result.summary(), "gate": "FAIL" if failures else "pass",
               "baseline_per_query": (baseline or {}).get("per_query", {}).get(suite.metrics[0])}
    request.node.user_properties.append(("rag_core_retrieval", {"summary": summary, "worse": worse}))
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
        folder = self.config.getoption("report_dir")
        if folder:
            from rag_core.evals.credentials import CredentialError

            try:
                lines = report.write(Path(folder), self.results, self.worse, self.sweeps)
            except (OSError, CredentialError) as exc:
                lines = [f"not written: {exc}"]
            for line in lines:
                terminalreporter.write_line(f"report: {line}")

    def _orphans(self, terminalreporter: Any) -> None:
        from rag_core.evals.harness.paths import shown
        from rag_core.evals.orphans import baseline_orphans, prune
        from rag_core.evals.retrieval.suite import SuiteFileError, load_suite, suite_files

        try:
            suites = [load_suite(p) for p in suite_files(Path(self.config.rootpath) / self.config.getini("rag_core_retrieval"))]
        except SuiteFileError:
            return  # a suite that does not load still owns its baselines
        orphans = baseline_orphans(suites, Path(self.config.rootpath))
        if orphans and self.config.getoption("prune_orphans", False):
            for path in prune(orphans):
                terminalreporter.write_line(f"  orphan deleted: {shown(path)}")
        elif orphans:
            for path in orphans:
                terminalreporter.write_line(f"  orphan (no retriever uses it): {shown(path)}")
            terminalreporter.write_line("  delete them with --prune-orphans")
