"""The pytest plugin: golden cases as tests, with record/replay, goldens and reports.

Loaded through the ``pytest11`` entry point. A test module opts in by asking for the
``golden_case`` fixture (see ``evals/test_goldens.py``); every case file under the
``rag_core_cases`` folder becomes one test (two with ``stream: [false, true]``).

Everything heavy (pydantic, YAML, vcrpy, the agent) is imported inside the hooks that need
it, so projects without golden cases pay only for this module.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from rag_core.evals.golden.discovery import CaseRef  # a test's parameter: a case, or a case file's error
from rag_core.evals.common.modes import RECORD_MODES
from rag_core.evals.common.requirements import unmet
from rag_core.evals.recording import seeded_randomness

# now, as pytest loads its plugins: before conftest.py and the project's modules are imported, so
# that a name they bind at import (``from uuid import uuid4``) is the dispatcher a run seeds
seeded_randomness.install()

if TYPE_CHECKING:  # imported lazily below: a project without golden cases never loads them
    from rag_core.evals.golden.case import GoldenCase
    from rag_core.evals.golden.runner import Settings

STASH = pytest.StashKey[dict[str, Any]]()


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    group = parser.getgroup("rag-core", "rag-core golden cases and retrieval suites")
    group.addoption("--update-goldens", action="store_true", default=False,
                    help="write what each case observed into its .golden.yaml instead of comparing")
    if not _pytest_recording_active(pluginmanager):  # else its --record-mode and --block-network, same meaning
        group.addoption("--record-mode", default="none", choices=RECORD_MODES,
                        help="cassette record mode: none (replay only, default), once, new_episodes, all, rewrite")
        group.addoption("--block-network", action="store_true", default=False,
                        help="refuse non-loopback connections even while recording live (always on otherwise)")
    group.addoption("--case", action="append", default=[], metavar="ID",
                    help="run only the golden case with this id (and its .sync/.stream variants); repeatable")
    group.addoption("--emulator", action="store_true", default=False,
                    help="record against the built-in provider emulator (in-process, no key) instead of the live API")
    group.addoption("--record-timeout", type=float, default=60.0, metavar="SECONDS",
                    help="while recording, how long one provider request may take (default 60)")
    group.addoption("--case-timeout", default=None, metavar="SECONDS",
                    help="how long one run of a golden case may take before it fails, naming where it was stuck "
                         "(default 300 when CI is set, else none; a case's timeout: overrides it; off: no limit at all)")
    group.addoption("--strict-cassettes", action="store_true", default=None,
                    help="fail cases whose cassette no longer matches what the agent sends (default on under CI)")
    group.addoption("--no-strict-cassettes", action="store_false", dest="strict_cassettes",
                    help="only report stale cassettes")
    group.addoption("--golden-report", default=None, metavar="PATH",
                    help="write a markdown summary of the golden cases (for CI job summaries)")
    group.addoption("--prune-orphans", action="store_true", default=False,
                    help="delete cassettes, goldens and baselines that no case or suite uses")
    group.addoption("--live", action="store_true", default=False,
                    help="run the cases against the providers (keys from the environment; with --emulator, against "
                         "it), check their hand-written expectations and judges, and write no cassette or golden")
    group.addoption("--repeat", type=int, default=1, metavar="N",
                    help="with --live: run each case N times and report its pass rate, latency and tokens")
    group.addoption("--concurrency", type=int, default=1, metavar="N",
                    help="with --live or while recording: up to N runs at once per provider (cases and repeats; fewer "
                         "while it pushes back)")
    group.addoption("--retries", type=int, default=2, metavar="N",
                    help="with --live or while recording: run again, up to N times, a run the provider pushed back "
                         "(429, 5xx, timeout), after the wait it asks for (default 2)")
    group.addoption("--resume", action="store_true", default=False,
                    help="with --live: take the runs a session that was cut short finished (kept in .rag-core/live) "
                         "and make only the rest")
    group.addoption("--emulator-latency", type=float, default=0.0, metavar="SECONDS",
                    help="with --emulator: each answer takes this long (to try --concurrency without a provider)")
    group.addoption("--emulator-capacity", type=int, default=None, metavar="N",
                    help="with --emulator: answer at most N requests at once, the excess 429 with a Retry-After")
    from rag_core.evals.plugins.run_record import add_options as add_run_record_options

    add_run_record_options(group, parser)  # the run record (runs/collect.py): --runs-dir, --no-run-record
    parser.addini("rag_core_cases", "folder of golden case files", default="fixtures/goldens")
    parser.addini("rag_core_cassettes", "folder of cassettes", default="cassettes")
    parser.addini("rag_core_fixtures", "folder of fixtures (corpora)", default="fixtures")
    parser.addini("rag_core_scrub_headers", "more request header names to scrub from recordings", type="linelist", default=[])
    parser.addini("rag_core_secret_patterns", "more regular expressions of credentials that must never be written",
                  type="linelist", default=[])


def _pytest_recording_active(pluginmanager: pytest.PytestPluginManager) -> bool:
    """pytest-recording defines --record-mode and --block-network too, with the same meaning; both
    plugins load in one project only if one defines them. Which loads first is pytest's choice, so
    when it is installed and not disabled (``-p no:recording``), it defines them (its default
    record mode is None: read as none)."""
    return importlib.util.find_spec("pytest_recording") is not None and not pluginmanager.is_blocked("recording")


def record_mode(config: pytest.Config) -> str:
    return config.getoption("record_mode", None) or "none"


def _folder(config: pytest.Config, name: str) -> Path:
    return Path(config.rootpath) / config.getini(name)


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

            self._refs = discover(_folder(self.config, "rag_core_cases"), self.config.getoption("case", None))
            for tag in tags_of(self._refs):  # before any test is marked with it (--strict-markers)
                self.config.addinivalue_line("markers", f"{tag}: golden cases tagged {tag!r}")
        return self._refs


def discover(config: pytest.Config) -> list[CaseRef]:
    """Every golden case of the session (read once, at the first call)."""
    cases = config.stash[STASH].get("refs")
    return (cases if isinstance(cases, _Cases) else _Cases(config)).refs


def writable_report_path(option: str, value: str, folder: bool = False) -> Path:
    """The path of a report option, checked before the session runs: a report that cannot be
    written is one clear usage error, not a crash at the end of a long run."""
    path = Path(value)
    parent = path if folder else path.parent
    existing = next((p for p in [parent, *parent.parents] if p.exists()), None)
    problem = None
    if not folder and path.is_dir():
        problem = "it is a folder"
    elif folder and path.exists() and not path.is_dir():
        problem = "it is a file, not a folder"
    elif existing is not None and not existing.is_dir():
        problem = f"{existing} is a file"
    elif existing is not None and not os.access(existing, os.W_OK):
        problem = f"{existing} is not writable"
    if problem:
        raise pytest.UsageError(f"{option}={value}: cannot write the report there ({problem})")
    return path


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from rag_core.evals.plugins import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "golden: a rag-core golden case")
    config.stash[STASH] = {}
    from rag_core.evals.orphans import mark_session_start

    mark_session_start(config)  # --prune-orphans never deletes what was written after this
    live, repeat = config.getoption("live", False), config.getoption("repeat", 1)
    if repeat != 1 and not live:
        raise pytest.UsageError("--repeat needs --live: replayed runs give the same result every time")
    if repeat < 1:
        raise pytest.UsageError(f"--repeat={repeat}: give at least 1 run")
    _check_live_options(config, live)
    if live and not config.getoption("resume", False) and not hasattr(config, "workerinput"):
        live_journal(config).clear()  # a session that does not resume starts afresh
    timeout = config.getoption("record_timeout", 60.0)
    if not (math.isfinite(timeout) and timeout > 0):
        raise pytest.UsageError(f"--record-timeout={timeout:g}: give a number of seconds above 0")
    _check_case_timeout(config)
    if live and (config.getoption("update_goldens") or record_mode(config) != "none"):
        raise pytest.UsageError("--live writes no cassette or golden: drop --update-goldens and --record-mode")
    report = config.getoption("golden_report", None)
    if report:
        writable_report_path("--golden-report", report)
    headers, patterns = config.getini("rag_core_scrub_headers"), config.getini("rag_core_secret_patterns")
    if headers or patterns:
        from rag_core.evals import credentials

        try:
            credentials.configure(headers, patterns)
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
    config.pluginmanager.register(_Summary(config), "rag_core_golden_summary")
    from rag_core.evals.plugins.run_record import RunCollector

    config.pluginmanager.register(RunCollector(config), "rag_core_run_record")  # golden cases and retrievers alike
    if _folder(config, "rag_core_cases").is_dir():
        config.stash[STASH]["refs"] = _Cases(config)  # not None: the session has a cases folder (orphans)
        if config.getoption("markers", False):  # pytest --markers lists the cases' tags
            discover(config)


def _check_case_timeout(config: pytest.Config) -> None:
    """--case-timeout, read once (``time_limit.py``); the backstop's last words are written past
    pytest's output capture (the process ends right after them)."""
    from rag_core.evals.golden.time_limit import session_timeouts

    try:
        timeouts = session_timeouts(config.getoption("case_timeout", None), os.environ)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None

    def say(text: str) -> None:
        capture = config.pluginmanager.getplugin("capturemanager")
        if capture is not None:
            capture.suspend_global_capture(in_=False)
        sys.stderr.write(text)
        sys.stderr.flush()

    config.stash[STASH]["case_timeouts"] = dataclasses.replace(timeouts, say=say)


def _check_live_options(config: pytest.Config, live: bool) -> None:
    concurrency, retries = config.getoption("concurrency", 1), config.getoption("retries", 2)
    latency, capacity = config.getoption("emulator_latency", 0.0), config.getoption("emulator_capacity", None)
    if concurrency != 1 and not live and record_mode(config) == "none":
        raise pytest.UsageError("--concurrency runs live runs or recordings at once (--live, or a --record-mode that "
                                "records); to spread replays over processes use pytest-xdist: -n 2")
    if concurrency < 1:
        raise pytest.UsageError(f"--concurrency={concurrency}: give at least 1")
    if retries < 0:
        raise pytest.UsageError(f"--retries={retries}: give 0 or more")
    if config.getoption("resume", False) and not live:
        raise pytest.UsageError("--resume takes the runs of a --live session that was cut short: add --live")
    if (latency or capacity is not None) and not config.getoption("emulator", False):
        raise pytest.UsageError("--emulator-latency and --emulator-capacity shape the emulator's answers: add --emulator")
    if not (math.isfinite(latency) and latency >= 0):
        raise pytest.UsageError(f"--emulator-latency={latency:g}: give a number of seconds, 0 or more")
    if capacity is not None and capacity < 0:
        raise pytest.UsageError(f"--emulator-capacity={capacity}: give 0 or more")


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
        params = [pytest.param(CaseRef("no-cases", error=f"no golden case files in {_folder(metafunc.config, 'rag_core_cases')}"),
                               id="no-cases", marks=[pytest.mark.golden])]
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


@pytest.fixture(scope="session")
def golden_settings(request: pytest.FixtureRequest) -> Any:
    from rag_core.evals.golden.runner import Settings

    config = request.config
    strict = config.getoption("strict_cassettes")
    settings = Settings(
        cassettes_dir=_folder(config, "rag_core_cassettes"),
        fixtures_dir=_folder(config, "rag_core_fixtures"),
        record_mode=record_mode(config),
        strict_cassettes=bool(os.environ.get("CI")) if strict is None else strict,
        block_network=bool(config.getoption("block_network", False)),
        update_goldens=config.getoption("update_goldens"),
        record_timeout=config.getoption("record_timeout"),
        live=config.getoption("live"),
        repeat=config.getoption("repeat"),
        concurrency=config.getoption("concurrency"),
        retries=config.getoption("retries"),
        conditions=_conditions(config),
        emulator=config.getoption("emulator"),
        case_timeouts=config.stash[STASH]["case_timeouts"],
        configure_cassette=lambda case, vcr: config.hook.pytest_rag_core_configure_cassette(case=case, vcr=vcr),
    )
    yield settings


def _conditions(config: pytest.Config) -> Any:
    from rag_core.evals.emulator.conditions import Conditions

    conditions = Conditions(latency=config.getoption("emulator_latency"), capacity=config.getoption("emulator_capacity"))
    if not conditions.active:
        return None
    config.stash[STASH]["conditions"] = conditions  # the summary says how the emulator saw the load
    return conditions


def _concurrent(node: pytest.Item, settings: Settings) -> Any:
    """The session's cases run at once (``live_session.py``: live runs, or recordings), started
    at its first case."""
    from rag_core.evals.golden.concurrent_runs import LiveSession, RecordingSession

    stash = node.config.stash[STASH]
    if "concurrent" not in stash:
        stash["concurrent"] = (LiveSession(settings, live_journal(node.config), node.config.getoption("resume"))
                               if settings.live else RecordingSession(settings))
        if not hasattr(node.config, "workerinput"):  # an xdist worker does not know its next cases
            stash["concurrent"].submit(_upcoming_cases(node))
    return stash["concurrent"]


def live_journal(config: pytest.Config) -> Any:
    """Where a ``--live`` session keeps its finished runs (``live_journal.py``)."""
    from rag_core.evals.golden.live_journal import LiveJournal

    return LiveJournal(Path(config.rootpath) / ".rag-core" / "live", bool(config.getoption("emulator", False)))


def _upcoming_cases(node: pytest.Item) -> list[tuple[GoldenCase, str]]:
    """The selected golden cases from ``node`` on that will run (they load and need nothing absent)."""
    items = node.session.items
    start = next((i for i, item in enumerate(items) if item is node), 0)
    upcoming = []
    for item in items[start:]:
        callspec = getattr(item, "callspec", None)
        ref = callspec.params.get("golden_case") if callspec is not None else None
        if ref is not None and ref.case is not None and ref.error is None and not any(map(unmet, ref.case.requires)):
            upcoming.append((ref.case, _selector(item)))
    return upcoming


def _selector(node: pytest.Item) -> str:
    """The node id as a user types it from the project root (what hints put on the command line)."""
    return node.nodeid


class GoldenHarness:
    def __init__(self, settings: Settings, node: pytest.Item) -> None:
        self.settings = settings
        self.node = node

    def check(self, ref: CaseRef) -> None:
        if ref.error is not None:
            pytest.fail(ref.error, pytrace=False)
        from rag_core.evals.credentials import CredentialError
        from rag_core.evals.common.errors import HarnessError
        from rag_core.evals.golden.live_runs import LiveRunsStopped
        from rag_core.evals.golden.runner import run_case

        assert ref.case is not None
        self._report_late_attempts()
        absent = [problem for problem in map(unmet, ref.case.requires) if problem]
        if absent:
            reason = f"{ref.case.id} requires {'; '.join(absent)}"
            if os.environ.get("RAG_CORE_REQUIRE_ALL_CASES"):
                pytest.fail(reason + " (RAG_CORE_REQUIRE_ALL_CASES is set: no case may skip)", pytrace=False)
            pytest.skip(reason)
        if self.settings.live:
            return self._check_live(ref.case)
        try:
            if self.settings.record_mode != "none":  # at once (--concurrency), retried on a provider's pushback
                result = _concurrent(self.node, self.settings).result(ref.case, _selector(self.node))
            else:
                from rag_core.evals.recording import routing
                from rag_core.evals.plugins.garbage_collection import fewer_collections

                routing.keep_installed()  # for the next case to replay; released before any other test
                with fewer_collections():
                    result = run_case(ref.case, self.settings, _selector(self.node))
        except (HarnessError, CredentialError, LiveRunsStopped) as exc:
            problem = str(exc)
        else:
            problem = None
        finally:
            self._report_late_attempts()
        if problem is not None:
            pytest.fail(problem, pytrace=False)
        self.node.user_properties += case_properties(result)
        if result.failures:
            # a run that did not complete leads with why (its exception), not with a count of checks
            count = "" if not result.completed else f"{len(result.failures)} check(s) failed\n\n"
            head = f"{ref.case.id}: {count}"
            pytest.fail(head + "\n\n".join([failure.text() for failure in result.failures] + result.fixes), pytrace=False)
        for report in [failure.text() for failure in result.stale] + result.notes:
            self.node.warn(pytest.PytestWarning(report))

    def _report_late_attempts(self) -> None:
        """What an earlier case left running (a thread it started, a job it submitted) stays that
        case's after it ended: what it reached for since was refused, and is said here (the
        earlier case's verdict is already out), and kept in the run record."""
        from rag_core.evals.recording.network import late_attempts

        late = late_attempts()
        for attempt in late:
            self.node.warn(pytest.PytestWarning(
                f"after case {attempt.case} had ended, a thread or task it left running reached for the network: "
                f"{attempt} (refused)"))
        if late:
            self.node.user_properties.append(("rag_core_late", [{"case": a.case, "attempt": str(a)} for a in late]))

    def _check_live(self, case: GoldenCase) -> None:
        from rag_core.evals.credentials import CredentialError
        from rag_core.evals.common.errors import HarnessError
        from rag_core.evals.golden.live_runs import LiveRunsStopped

        try:
            result = _concurrent(self.node, self.settings).result(case, _selector(self.node))
        except (HarnessError, CredentialError, LiveRunsStopped) as exc:
            pytest.fail(str(exc), pytrace=False)
        finally:
            self._report_late_attempts()
        self.node.user_properties.append(("rag_core_live", result.to_dict()))
        if not result.ok:
            failed = [(number, run) for number, run in enumerate(result.runs, start=1) if not run.passed]
            shown = "\n\n".join(f"run {number}:\n" + "\n".join(f.text() for f in run.failures) for number, run in failed[:3])
            pytest.fail(f"{case.id}: {result.passes} of {len(result.runs)} live runs passed ({result.pass_rate:.0%}), "
                        f"below min_pass_rate {case.min_pass_rate:g}\n\n{shown}", pytrace=False)


def case_properties(result: Any) -> list[tuple[str, Any]]:
    """What a case's test reports of its result, for the summary and the run record (a case the
    session committed after it was cut short is reported the same way: ``_Summary``)."""
    properties: list[tuple[str, Any]] = [("rag_core_case", {
        "id": result.case_id, "updated": result.updated, "new": result.new_golden, "recorded": result.recorded,
        "stale": bool(result.stale), "tokens": result.tokens,
        # model calls were made and none of their responses counted tokens: "stream" when they were streamed
        "no_usage": _no_usage_of(result.wire),
    })]
    if result.failures:  # the run record keeps them as data (runs/failures.py)
        from rag_core.evals.runs.failures import PROPERTY, entry

        properties.append((PROPERTY, {"failures": [entry(f).to_json() for f in result.failures],
                                      "fixes": list(result.fixes)}))
    return properties


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


@pytest.fixture
def golden_harness(golden_settings: Settings, request: pytest.FixtureRequest) -> GoldenHarness:
    return GoldenHarness(golden_settings, request.node)


def _case_id(nodeid: str) -> str:
    return nodeid[nodeid.rfind("[") + 1:-1] if nodeid.endswith("]") else nodeid


class _Summary:
    """Collects the outcome of every selected golden case (from this process or xdist workers),
    including those that failed before any comparison (load errors, refusals, missing cassettes)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.cases: dict[str, dict[str, Any]] = {}  # node id -> what is known of the case

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if "golden" not in report.keywords:
            return
        entry = self._entry(report.nodeid)
        if report.failed:
            entry["failed"] = True
            entry["detail"] = report.longreprtext
        self._take(entry, report.user_properties)

    def _entry(self, nodeid: str) -> dict[str, Any]:
        return self.cases.setdefault(nodeid, {"id": _case_id(nodeid), "failed": False, "detail": "", "updated": False,
                                              "new": False, "recorded": False, "stale": False, "tokens": 0,
                                              "no_usage": None})

    @staticmethod
    def _take(entry: dict[str, Any], properties: Any) -> None:
        for key, info in properties:
            if key == "rag_core_case":
                entry.update({k: info[k] for k in ("updated", "new", "recorded", "stale", "tokens")}, reported=True,
                             no_usage=info.get("no_usage"))
            elif key == "rag_core_live":
                entry["live"] = info

    def _cut_short(self, concurrent: Any) -> None:
        """The cases the session's runs wrote whose tests did not report them (the session was cut
        short: Ctrl-C): counted and listed as their tests would have reported them, and kept in
        the run record, so that every golden written is named for review."""
        record = self.config.pluginmanager.get_plugin("rag_core_run_record")
        for nodeid, result in concurrent.finished():
            if self.cases.get(nodeid, {}).get("reported"):
                continue
            properties = case_properties(result)
            entry = self._entry(nodeid)
            entry.update(failed=bool(result.failures), cut_short=True)
            self._take(entry, properties)
            if record is not None:
                record.cut_short(nodeid, properties)

    def _orphans(self) -> tuple[list[Path], str | None]:
        from rag_core.evals.orphans import GoldenFiles

        if self.config.stash[STASH].get("refs") is None:
            return [], None
        # the case files as they are now (a case recorded meanwhile owns its files); none if one does not load
        return GoldenFiles(_folder(self.config, "rag_core_cases"), _folder(self.config, "rag_core_cassettes")).orphans()

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.cases or hasattr(self.config, "workerinput"):
            return
        from rag_core.evals.common.paths import shown

        entries = list(self.cases.values())
        if self.config.getoption("live"):
            self._live_summary(terminalreporter, entries)
            return
        count, tokens = _tally(entries)
        terminalreporter.section("rag-core golden cases")
        terminalreporter.write_line(
            f"{len(entries)} cases, {len(count['failed'])} failed, {len(count['new'])} new goldens, "
            f"{len(count['updated']) - len(count['new'])} goldens updated, {len(count['recorded'])} recorded, "
            f"{len(count['stale'])} stale cassettes, {tokens} tokens in recordings{_no_usage(entries)}"
        )
        self._emulator_load(terminalreporter)
        for case_id in count["stale"]:
            terminalreporter.write_line(f"  stale cassette: {case_id} (its failure or warning says how to re-record it)")
        for case_id in count["new"]:
            terminalreporter.write_line(f"  new golden: {case_id} (review the new .golden.yaml file before committing it)")
        for case_id in count["updated"]:
            if case_id not in count["new"]:
                terminalreporter.write_line(f"  golden updated: {case_id} (review with git diff)")
        for entry in entries:
            if entry.get("cut_short"):
                terminalreporter.write_line(f"  recorded while the session was cut short: {entry['id']} (its test "
                                            "did not report)")
        orphans, note = self._orphans()
        if note:
            terminalreporter.write_line(f"  {note}")
        if orphans:
            from rag_core.evals.orphans import GoldenFiles, prune_lines

            if self.config.getoption("prune_orphans"):
                files = GoldenFiles(_folder(self.config, "rag_core_cases"), _folder(self.config, "rag_core_cassettes"))
                for line in prune_lines(files, orphans, self.config):  # each re-checked just before it is deleted
                    terminalreporter.write_line(line)
            else:
                for path in orphans:
                    terminalreporter.write_line(f"  orphan (no case uses it): {shown(path)}")
                terminalreporter.write_line("  delete them with --prune-orphans")
        self._report_outcome(terminalreporter)

    def _live_summary(self, terminalreporter: Any, entries: list[dict[str, Any]]) -> None:
        from rag_core.evals.wire.cost import described

        terminalreporter.section("rag-core live runs")
        for line in live_table(entries):
            terminalreporter.write_line(line)
        ran = [entry["live"] for entry in entries if entry.get("live")]
        terminalreporter.write_line(
            f"{sum(live['runs'] for live in ran)} runs, {sum(live.get('retries', 0) for live in ran)} run again after a "
            f"pushback, {sum(live.get('tokens_total', 0) for live in ran)} tokens, {described(ran)}")
        resumed = sum(live.get("resumed", 0) for live in ran)
        if resumed:
            terminalreporter.write_line(f"{resumed} of them taken from the session that was cut short (--resume)")
        kept = self.config.stash[STASH].get("live_kept")
        if kept:
            terminalreporter.write_line(kept, yellow=True)
        self._emulator_load(terminalreporter)
        self._report_outcome(terminalreporter)

    def _emulator_load(self, terminalreporter: Any) -> None:
        """How the emulator saw the load, when --emulator-latency or --emulator-capacity shaped it."""
        conditions = self.config.stash[STASH].get("conditions")
        if conditions is not None:
            terminalreporter.write_line(f"emulator: at most {conditions.peak} requests at once, {conditions.refused} "
                                        "answered 429")

    def _report_outcome(self, terminalreporter: Any) -> None:
        outcome = self.config.stash[STASH].get("report")
        if outcome is not None:
            line, failed = outcome
            terminalreporter.write_line(line, red=failed)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        concurrent = self.config.stash[STASH].pop("concurrent", None)
        if concurrent is not None:  # an interrupt, -x: no further run begins
            concurrent.close()
            self._cut_short(concurrent)
        if self.config.getoption("live", False) and not hasattr(self.config, "workerinput"):
            self._end_live_journal(session, exitstatus)
        self._write_report(session)

    def _end_live_journal(self, session: pytest.Session, exitstatus: int) -> None:
        """A session that made every run it selected leaves no journal; one cut short keeps its
        finished runs, and the summary says how to resume."""
        import shlex

        from rag_core.evals.common.paths import shown

        journal = live_journal(self.config)
        cut_short = exitstatus == pytest.ExitCode.INTERRUPTED or bool(session.shouldfail or session.shouldstop)
        kept = journal.count() if cut_short else 0
        if kept:
            args = [arg for arg in self.config.invocation_params.args if arg != "--resume"]
            self.config.stash[STASH]["live_kept"] = (
                f"{kept} finished run(s) kept in {shown(journal.folder)}: "
                f"pytest {shlex.join(args)} --resume makes only the rest")
        else:
            journal.clear()

    def _write_report(self, session: pytest.Session) -> None:
        """Write ``--golden-report`` here, not in the terminal summary (which pytest prints after
        the session's exit status is settled): a report that cannot be written, or would hold a
        credential, fails the session."""
        path = self.config.getoption("golden_report")
        if not path or not self.cases or hasattr(self.config, "workerinput"):
            return
        from rag_core.evals.atomic import append_checked
        from rag_core.evals.credentials import CredentialError
        from rag_core.evals.report import markdown

        entries = list(self.cases.values())
        try:  # added to the file: a CI job summary keeps what earlier commands of its step wrote
            if self.config.getoption("live"):
                append_checked(Path(path), _live_rows(entries), _live_summary)
            else:  # from the cases as the run record keeps them (report/markdown.py)
                record = self.config.pluginmanager.get_plugin("rag_core_run_record")
                markdown.write(Path(path), record.case_entries(), markdown.Links.from_environment(os.environ),
                               [path.name for path in self._orphans()[0]], record.retriever_entries())
        except (OSError, CredentialError) as exc:
            self.config.stash[STASH]["report"] = (f"golden report: not written: {exc}", True)
            if session.exitstatus == 0:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
        else:
            self.config.stash[STASH]["report"] = (f"markdown report: {path}", False)


_LIVE_COLUMNS = ("id", "passes", "runs", "pass_rate", "min_pass_rate", "p50", "p95", "tokens", "ok")


def _live_rows(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the live runs' table quotes of each case (what its writer screens)."""
    return [{"id": entry["id"], "failed": entry["failed"],
             "live": {key: entry["live"][key] for key in _LIVE_COLUMNS} if entry.get("live") else None}
            for entry in entries]


def _live_summary(rows: list[dict[str, Any]]) -> str:
    """The live runs' table as markdown: each case id a code span, never read as markdown."""
    from rag_core.evals.report.markdown import code_cell

    shown = [{**row, "id": code_cell(row["id"]), "live": row["live"] and {**row["live"], "id": code_cell(row["live"]["id"])}}
             for row in rows]
    return "\n".join(["## rag-core live runs", "", *live_table(shown), ""])


def live_table(entries: list[dict[str, Any]]) -> list[str]:
    """Per case: passes of runs, pass rate against min_pass_rate, latency p50/p95, median tokens
    (a markdown table, readable in a terminal too). Cases that failed before running show as such."""
    lines = ["| case | passed | pass rate | min | p50 s | p95 s | tokens/run | gate |",
             "|---|---|---|---|---|---|---|---|"]
    for entry in entries:
        live = entry.get("live")
        if live is None:
            lines.append(f"| {entry['id']} | – | – | – | – | – | – | {'error' if entry['failed'] else 'skipped'} |")
            continue
        lines.append(f"| {live['id']} | {live['passes']}/{live['runs']} | {live['pass_rate']:.0%} | "
                     f"{live['min_pass_rate']:.0%} | {live['p50']:.2f} | {live['p95']:.2f} | {live['tokens']} | "
                     f"{'pass' if live['ok'] else 'FAIL'} |")
    return lines


def _no_usage_of(wire: dict[str, Any]) -> str | None:
    """None when the case's model calls counted tokens (or it made none); else "stream" when they
    were streamed, "response" when not."""
    requests = wire.get("chat_requests") or []
    if not requests or wire.get("usage"):
        return None
    return "stream" if any(isinstance(r, dict) and r.get("stream") for r in requests) else "response"


def _no_usage(entries: list[dict[str, Any]]) -> str:
    """What the token count leaves out: cases whose model calls reported no usage at all (a
    streamed Chat Completions call reports it only when asked), named so that a count of 0 is
    not read as a broken one."""
    ids = [e["id"] for e in entries if e.get("no_usage")]
    if not ids:
        return ""
    shown = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
    if all(e.get("no_usage") == "stream" for e in entries if e.get("no_usage")):
        return (f" (not counted: {shown}, whose stream reported no usage; a stream reports it only when asked, e.g. "
                "Chat Completions' stream_options={'include_usage': True})")
    return f" (not counted: {shown}, whose provider reported no usage)"


def _tally(entries: list[dict[str, Any]]) -> tuple[dict[str, list[str]], int]:
    """The case ids per outcome, and the tokens of all recordings (for the terminal summary; the
    markdown report counts the run record's cases: report/markdown.py)."""
    count = {k: [e["id"] for e in entries if e[k]] for k in ("failed", "updated", "new", "recorded", "stale")}
    return count, sum(e["tokens"] for e in entries)
