"""The pytest plugin: golden cases as tests, with record/replay, goldens and reports.

Loaded through the ``pytest11`` entry point. A test module opts in by asking for the
``golden_case`` fixture (see ``evals/test_goldens.py``); every case file under the
``rag_core_cases`` folder becomes one test (two with ``stream: [false, true]``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from rag_core.evals.harness.modes import RECORD_MODES

if TYPE_CHECKING:  # imported lazily below: a project without golden cases never loads them
    from rag_core.evals.harness.case import GoldenCase
    from rag_core.evals.harness.runner import Settings

STASH = pytest.StashKey[dict[str, Any]]()


@dataclass
class CaseRef:
    id: str
    case: GoldenCase | None = None
    error: str | None = None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rag-core", "rag-core golden cases and retrieval suites")
    group.addoption("--update-goldens", action="store_true", default=False,
                    help="write what each case observed into its .golden.yaml instead of comparing")
    try:
        group.addoption("--record-mode", default="none", choices=RECORD_MODES,
                        help="cassette record mode: none (replay only, default), once, new_episodes, all, rewrite")
    except ValueError:  # another plugin (pytest-recording) already defines it; share its value
        pass
    group.addoption("--emulator", action="store_true", default=False,
                    help="record against the built-in provider emulator on 127.0.0.1 instead of the live API")
    group.addoption("--strict-cassettes", action="store_true", default=None,
                    help="fail cases whose cassette no longer matches what the agent sends (default on under CI)")
    group.addoption("--no-strict-cassettes", action="store_false", dest="strict_cassettes",
                    help="only report stale cassettes")
    group.addoption("--block-network", action="store_true", default=False,
                    help="refuse non-loopback connections even while recording (always on during replay)")
    group.addoption("--golden-report", default=None, metavar="PATH",
                    help="write a markdown summary of the golden cases (for CI job summaries)")
    parser.addini("rag_core_cases", "folder of golden case files", default="fixtures/goldens")
    parser.addini("rag_core_cassettes", "folder of cassettes", default="cassettes")
    parser.addini("rag_core_fixtures", "folder of fixtures (corpora)", default="fixtures")


def _folder(config: pytest.Config, name: str) -> Path:
    return Path(config.rootpath) / config.getini(name)


def discover(config: pytest.Config) -> list[CaseRef]:
    from rag_core.evals.harness.case import case_files, parse_case_file
    from rag_core.evals.harness.errors import HarnessError

    refs: list[CaseRef] = []
    for path in case_files(_folder(config, "rag_core_cases")):
        try:
            refs += [CaseRef(c.id, case=c) for c in parse_case_file(path)]
        except HarnessError as exc:
            refs.append(CaseRef(path.stem, error=str(exc)))
    return refs


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "golden: a rag-core golden case")
    config.stash[STASH] = {}
    config.pluginmanager.register(_Summary(config), "rag_core_golden_summary")
    if _folder(config, "rag_core_cases").is_dir():
        refs = discover(config)
        config.stash[STASH]["refs"] = refs
        for tag in sorted({t for r in refs if r.case for t in r.case.tags}):
            config.addinivalue_line("markers", f"{tag}: golden cases tagged {tag!r}")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "golden_case" not in metafunc.fixturenames:
        return
    refs = metafunc.config.stash[STASH].get("refs") or discover(metafunc.config)
    params = [
        pytest.param(ref, id=ref.id, marks=[pytest.mark.golden, *(getattr(pytest.mark, t) for t in (ref.case.tags if ref.case else []))])
        for ref in refs
    ]
    if not params:
        params = [pytest.param(CaseRef("no-cases", error=f"no golden case files in {_folder(metafunc.config, 'rag_core_cases')}"), id="no-cases")]
    metafunc.parametrize("golden_case", params)


@pytest.fixture(scope="session")
def golden_settings(request: pytest.FixtureRequest) -> Any:
    from rag_core.evals.harness.runner import Settings

    config = request.config
    strict = config.getoption("strict_cassettes")
    settings = Settings(
        cassettes_dir=_folder(config, "rag_core_cassettes"),
        fixtures_dir=_folder(config, "rag_core_fixtures"),
        record_mode=config.getoption("record_mode"),
        strict_cassettes=bool(os.environ.get("CI")) if strict is None else strict,
        block_network=config.getoption("block_network"),
        update_goldens=config.getoption("update_goldens"),
    )
    if config.getoption("emulator"):
        from rag_core.evals.emulator.server import EmulatorServer

        settings.emulator = EmulatorServer()
        yield settings
        settings.emulator.close()
    else:
        yield settings


class GoldenHarness:
    def __init__(self, settings: Settings, node: pytest.Item) -> None:
        self.settings = settings
        self.node = node

    def check(self, ref: CaseRef) -> None:
        if ref.error is not None:
            pytest.fail(ref.error, pytrace=False)
        from rag_core.evals.harness.errors import HarnessError
        from rag_core.evals.harness.runner import run_case

        assert ref.case is not None
        try:
            result = run_case(ref.case, self.settings)
        except HarnessError as exc:
            problem = str(exc)
        else:
            problem = None
        if problem is not None:
            pytest.fail(problem, pytrace=False)
        self.node.user_properties.append(("rag_core_case", {
            "id": result.case_id, "updated": result.updated, "new": result.new_golden, "recorded": result.recorded,
            "stale": bool(result.stale), "tokens": result.tokens,
        }))
        if result.failures:
            pytest.fail(
                f"{ref.case.id}: {len(result.failures)} check(s) failed; if the change is intended, run "
                f"`pytest evals/ --update-goldens` and review the diff\n\n" + "\n\n".join(result.failures),
                pytrace=False,
            )
        for report in result.stale:
            self.node.warn(pytest.PytestWarning(report))


@pytest.fixture
def golden_harness(golden_settings: Settings, request: pytest.FixtureRequest) -> GoldenHarness:
    return GoldenHarness(golden_settings, request.node)


class _Summary:
    """Collects case results (from this process or xdist workers) for one session's summary."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.stats: dict[str, Any] = {"cases": 0, "updated": [], "new": [], "recorded": [], "stale": [], "tokens": 0, "failed": []}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        for key, info in report.user_properties:
            if key != "rag_core_case":
                continue
            self.stats["cases"] += 1
            self.stats["tokens"] += info["tokens"]
            for flag in ("updated", "new", "recorded", "stale"):
                if info[flag]:
                    self.stats[flag].append(info["id"])
            if report.failed:
                self.stats["failed"].append(info["id"])

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        stats = self.stats
        if not stats["cases"]:
            return
        terminalreporter.section("rag-core golden cases")
        terminalreporter.write_line(
            f"{stats['cases']} cases, {len(stats['failed'])} failed, {len(stats['new'])} new goldens, "
            f"{len(stats['updated']) - len(stats['new'])} goldens updated, "
            f"{len(stats['recorded'])} recorded, {len(stats['stale'])} stale cassettes, "
            f"{stats['tokens']} tokens in recordings"
        )
        for case_id in stats["stale"]:
            terminalreporter.write_line(f"  stale cassette: {case_id} (re-record with --record-mode=rewrite)")
        for case_id in stats["new"]:
            terminalreporter.write_line(f"  new golden: {case_id} (review the new .golden.yaml file before committing it)")
        for case_id in stats["updated"]:
            if case_id not in stats["new"]:
                terminalreporter.write_line(f"  golden updated: {case_id} (review with git diff)")
        path = self.config.getoption("golden_report")
        if path and not hasattr(self.config, "workerinput"):
            Path(path).write_text(_markdown(stats), encoding="utf-8")
            terminalreporter.write_line(f"markdown report: {path}")


def _markdown(stats: dict[str, Any]) -> str:
    lines = [
        "## rag-core golden cases",
        "",
        "| cases | failed | goldens updated | recorded | stale cassettes | tokens in recordings |",
        "|---|---|---|---|---|---|",
        f"| {stats['cases']} | {len(stats['failed'])} | {len(stats['updated'])} | {len(stats['recorded'])} "
        f"| {len(stats['stale'])} | {stats['tokens']} |",
        "",
    ]
    for title, key in (("Failed", "failed"), ("Stale cassettes", "stale"), ("New goldens (to review)", "new"),
                       ("Goldens updated", "updated")):
        if stats[key]:
            lines += [f"**{title}:** " + ", ".join(f"`{c}`" for c in stats[key]), ""]
    return "\n".join(lines)
