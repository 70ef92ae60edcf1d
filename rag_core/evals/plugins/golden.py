"""The pytest plugin of golden cases: each case file under the ``rag_core_cases`` folder becomes
one test (two with ``stream: [false, true]``) of a module that asks for the ``golden_case``
fixture (see ``evals/test_goldens.py``). Its options are in ``options.py``, a case's test in
``golden_harness.py``, the summaries in ``summary.py``, the run record in ``run_record.py``.

Loaded through the ``pytest11`` entry point. Everything heavy (pydantic, YAML, vcrpy, the agent)
is imported inside the hooks that need it, so projects without golden cases pay only for this
module.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import pytest

from rag_core.evals.golden.discovery import CaseRef  # a test's parameter: a case, or a case file's error
from rag_core.evals.plugins import options
from rag_core.evals.plugins.golden_harness import HEADLINE, SESSION, GoldenHarness, live_journal
from rag_core.evals.recording import seeded_randomness

# now, as pytest loads its plugins: before conftest.py and the project's modules are imported, so
# that a name they bind at import (``from uuid import uuid4``) is the dispatcher a run seeds
seeded_randomness.install()

if TYPE_CHECKING:  # imported lazily below: a project without golden cases never loads them
    from rag_core.evals.golden.playing import Settings


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    options.add_golden_options(parser, pluginmanager)


class _Cases:
    """The session's golden cases, read at their first use (collection, or ``--markers``), not at
    configure: an xdist controller collects nothing, and read them all for its workers to read
    again. Under ``--case``, only the files that can matter to the selection are read whole
    (``discovery.py``)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self._refs: list[CaseRef] | None = None

    @property
    def refs(self) -> list[CaseRef]:
        if self._refs is None:
            from rag_core.evals.golden.discovery import discover, tags_of

            self._refs = discover(options.folder(self.config, "rag_core_cases"), self.config.getoption("case", None))
            for tag in tags_of(self._refs):  # before any test is marked with it (--strict-markers)
                self.config.addinivalue_line("markers", f"{tag}: golden cases tagged {tag!r}")
        return self._refs


def discover(config: pytest.Config) -> list[CaseRef]:
    """Every golden case of the session (read once, at the first call)."""
    cases = config.stash[SESSION].get("refs")
    return (cases if isinstance(cases, _Cases) else _Cases(config)).refs


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from rag_core.evals.plugins import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "golden: a rag-core golden case")
    config.stash[SESSION] = {}
    from rag_core.evals.orphans import mark_session_start
    from rag_core.evals.plugins.run_record import RunCollector
    from rag_core.evals.plugins.summary import GoldenSummary

    mark_session_start(config)  # --prune-orphans never deletes what was written after this
    config.stash[SESSION]["case_timeouts"] = options.check_golden_options(config)
    live = config.getoption("live", False)
    if live and not config.getoption("resume", False) and not hasattr(config, "workerinput"):
        live_journal(config).clear()  # a session that does not resume starts afresh
    config.pluginmanager.register(GoldenSummary(config), "rag_core_golden_summary")
    config.pluginmanager.register(RunCollector(config), "rag_core_run_record")  # golden cases and retrievers alike
    if options.folder(config, "rag_core_cases").is_dir():
        config.stash[SESSION]["refs"] = _Cases(config)  # not None: the session has a cases folder (orphans)
        if config.getoption("markers", False):  # pytest --markers lists the cases' tags
            discover(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    _release_kept_patches()  # a session cut short in a replayed case (pytester runs sessions in one process)
    if config.getini("rag_core_scrub_headers") or config.getini("rag_core_secret_patterns"):
        from rag_core.evals import credentials

        credentials.configure()  # back to the defaults (pytester runs several sessions in one process)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "golden_case" not in metafunc.fixturenames:
        return
    refs = discover(metafunc.config)
    params = [
        pytest.param(ref, id=ref.id, marks=[pytest.mark.golden, *(getattr(pytest.mark, t) for t in (ref.case.tags if ref.case else []))])
        for ref in refs
    ]
    if not params:
        error = f"no golden case files in {options.folder(metafunc.config, 'rag_core_cases')}"
        params = [pytest.param(CaseRef("no-cases", error=error), id="no-cases", marks=[pytest.mark.golden])]
    metafunc.parametrize("golden_case", params)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    wanted = config.getoption("case")
    if not wanted:
        return
    from rag_core.evals.golden.discovery import selects

    def chosen(item: pytest.Item) -> str | None:
        callspec = getattr(item, "callspec", None)
        ref = callspec.params.get("golden_case") if callspec is not None else None
        if ref is None:
            return None
        return next((w for w in wanted if selects([w], ref.id)), None)

    matched = {chosen(item) for item in items} - {None}
    missing = [w for w in wanted if w not in matched]
    if missing:
        raise pytest.UsageError(f"--case {missing[0]}: no golden case has this id")
    kept = [item for item in items if chosen(item) is not None]
    config.hook.pytest_deselected(items=[item for item in items if chosen(item) is None])
    items[:] = kept


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly or not any(item.get_closest_marker("golden") for item in session.items):
        return
    from rag_core.evals.plugins.garbage_collection import freeze_collected

    freeze_collected()  # the imports and the cases read stay out of the collections while cases run


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    """An xdist controller collects nothing and runs no test: it freezes its heap as its loop
    begins, so that neither the collections while the workers' reports come in nor pytest's at the
    session's end walk its imports again (a worker, or a session without xdist, freezes once it
    has collected: ``pytest_collection_finish``)."""
    if session.config.pluginmanager.has_plugin("dsession") and session.config.stash[SESSION].get("refs") is not None:
        from rag_core.evals.plugins.garbage_collection import freeze_collected

        freeze_collected()


@pytest.fixture(scope="session")
def golden_settings(request: pytest.FixtureRequest) -> Any:
    from rag_core.evals.golden.playing import Settings

    config = request.config
    strict = config.getoption("strict_cassettes")
    yield Settings(
        cassettes_dir=options.folder(config, "rag_core_cassettes"),
        fixtures_dir=options.folder(config, "rag_core_fixtures"),
        record_mode=options.record_mode(config),
        strict_cassettes=bool(os.environ.get("CI")) if strict is None else strict,
        block_network=bool(config.getoption("block_network", False)),
        update_goldens=config.getoption("update_goldens"),
        accept=config.getoption("accept"),
        record_timeout=config.getoption("record_timeout"),
        live=config.getoption("live"),
        repeat=config.getoption("repeat"),
        concurrency=config.getoption("concurrency"),
        retries=config.getoption("retries"),
        conditions=_conditions(config),
        emulator=config.getoption("emulator"),
        case_timeouts=config.stash[SESSION]["case_timeouts"],
        configure_cassette=lambda case, vcr: config.hook.pytest_rag_core_configure_cassette(case=case, vcr=vcr),
    )


def _conditions(config: pytest.Config) -> Any:
    from rag_core.evals.emulator.conditions import Conditions

    conditions = Conditions(latency=config.getoption("emulator_latency"), capacity=config.getoption("emulator_capacity"))
    if not conditions.active:
        return None
    config.stash[SESSION]["conditions"] = conditions  # the summary says how the emulator saw the load
    return conditions


@pytest.fixture
def golden_harness(golden_settings: Settings, request: pytest.FixtureRequest) -> GoldenHarness:
    return GoldenHarness(golden_settings, request.node)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A failed case's line in pytest's short summary is its headline (``golden_harness.HEADLINE``):
    under CI pytest prints the whole failure there again, every diff a second time."""
    report = yield
    headline = item.stash.get(HEADLINE, None)
    crash = getattr(report.longrepr, "reprcrash", None)
    if headline is not None and report.failed and call.when == "call" and crash is not None:
        crash.message = headline
    return report


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """The HTTP-library patches a replayed case left in place for the next one are undone before
    any test that is not a golden case, and at the end (``routing.keep_installed``)."""
    if "golden_harness" not in getattr(nextitem, "fixturenames", ()):
        _release_kept_patches()


def _release_kept_patches() -> None:
    """Undo the patches replayed cases kept in place, if routing was ever imported (a session
    that replays nothing does not import it for this)."""
    routing = sys.modules.get("rag_core.evals.recording.routing")
    if routing is not None:
        routing.release()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """A Ctrl-C the session's runs at once noted (``interrupts.py``) is taken once each test has
    been reported, the last one's too: pytest then ends the session as interrupted."""
    outcome = yield
    concurrent = item.config.stash[SESSION].get("concurrent")
    if concurrent is not None:
        concurrent.interrupt.deliver()
    return outcome
