"""pytest plugin for retrieval suites: one test per retriever, plus one per ``identical`` group.

Loaded through the ``pytest11`` entry point; a test module opts in by asking for the
``retrieval_target`` fixture (see ``evals/test_retrieval.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import pytest

from rag_core.evals.plugins import options
from rag_core.evals.plugins.retrieval_checks import check_identical, check_retriever, check_sweep
from rag_core.evals.plugins.retrieval_runner import RetrievalRunner, background_threads
from rag_core.evals.plugins.retrieval_tests import Target, collect_targets

if TYPE_CHECKING:  # imported lazily below: a project without retrieval suites never loads them
    from rag_core.evals.retrieval.suite import SuiteSpec


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_retrieval_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    from rag_core.evals.orphans import mark_session_start

    mark_session_start(config)  # for both plugins' --prune-orphans: nothing modified since is deleted
    folder = config.getoption("report_dir", None)
    if folder:
        options.writable_report_path("--report-dir", folder, is_folder=True)
    from rag_core.evals.plugins.summary import RetrievalSummary

    config.pluginmanager.register(RetrievalSummary(config), "rag_core_retrieval_summary")
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


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "retrieval_target" in metafunc.fixturenames:
        targets = collect_targets(metafunc.config)
        # no suite yet (a new project: rag-core init writes this module before any suite) skips, naming where one goes
        folder = metafunc.config.getini("rag_core_retrieval")
        metafunc.parametrize("retrieval_target", [pytest.param(t, id=t.id, marks=t.marks()) for t in targets] or [
            pytest.param(Target("no-suites"), id="no-suites", marks=pytest.mark.skip(
                reason=f"no retrieval suites in {folder}/ (the rag_core_retrieval setting) yet: each suite file "
                       "there makes one test per retriever"))])


@pytest.fixture(scope="session")
def retrieval_runner(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RetrievalRunner]:
    runner = RetrievalRunner(request.config, tmp_path_factory)
    yield runner
    runner.close()


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
                check_sweep(retrieval_runner, target, request)
            elif target.retriever is None:
                check_identical(retrieval_runner, target)
            else:
                check_retriever(retrieval_runner, target, request)
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
