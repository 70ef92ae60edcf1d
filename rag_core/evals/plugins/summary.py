"""The golden cases' summaries: the terminal's and the markdown one (``--golden-report``), both
made from the run record's cases (``run_record.RunCollector``), so the two say the same; what a
session cut short committed is added to the record first, as its tests would have reported it.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

import pytest

from rag_core.evals.plugins.golden_harness import SESSION, case_properties, live_journal
from rag_core.evals.plugins.options import folder


class GoldenSummary:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @property
    def record(self) -> Any:
        return self.config.pluginmanager.get_plugin("rag_core_run_record")

    def _cases(self) -> list[Any]:
        """The golden cases of the session, as the record keeps them (none: no golden case ran)."""
        return self.record.case_entries() if self.record is not None else []

    def _shows(self) -> bool:
        return self.record is not None and bool(self.record.cases) and not hasattr(self.config, "workerinput")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self._shows():
            return
        from rag_core.evals.recording.fix_commands import accept_cases
        from rag_core.evals.report.terminal import golden_lines, live_lines

        cases, state = self._cases(), self.config.stash[SESSION]
        conditions = state.get("conditions")  # how the emulator saw the load, when --emulator-latency or -capacity shaped it
        load = [] if conditions is None else [f"emulator: at most {conditions.peak} requests at once, "
                                              f"{conditions.refused} answered 429"]
        if self.config.getoption("live"):
            from rag_core.evals.wire.cost import available

            terminalreporter.section("rag-core live runs")
            for line in live_lines(cases, priced=available()):
                terminalreporter.write_line(line)
            if state.get("live_kept"):
                terminalreporter.write_line(state["live_kept"], yellow=True)
            lines = load
        else:
            terminalreporter.section("rag-core golden cases")
            counts, *listed = golden_lines(cases, accept_cases(cases))
            lines = [counts, *load, *listed, *self._orphan_lines()]
        for line in lines:
            terminalreporter.write_line(line)
        outcome = self.config.stash[SESSION].get("report")
        if outcome is not None:
            line, failed = outcome
            terminalreporter.write_line(line, red=failed)

    def _orphans(self) -> tuple[list[Path], str | None]:
        from rag_core.evals.orphans import GoldenFiles

        if self.config.stash[SESSION].get("refs") is None:
            return [], None
        # the case files as they are now (a case recorded meanwhile owns its files); none if one does not load
        return GoldenFiles(folder(self.config, "rag_core_cases"), folder(self.config, "rag_core_cassettes")).orphans()

    def _orphan_lines(self) -> list[str]:
        from rag_core.evals.common.paths import shown
        from rag_core.evals.orphans import GoldenFiles, prune_lines

        orphans, note = self._orphans()
        lines = [f"  {note}"] if note else []
        if orphans and self.config.getoption("prune_orphans"):
            files = GoldenFiles(folder(self.config, "rag_core_cases"), folder(self.config, "rag_core_cassettes"))
            lines += prune_lines(files, orphans, self.config)  # each re-checked just before it is deleted
        elif orphans:
            lines += [f"  orphan (no case uses it): {shown(path)}" for path in orphans]
            lines.append("  delete them with --prune-orphans")
        return lines

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        concurrent = self.config.stash[SESSION].pop("concurrent", None)
        if concurrent is not None:  # an interrupt, -x: no further run begins
            concurrent.close()
            self._cut_short(concurrent)
        if self.config.getoption("live", False) and not hasattr(self.config, "workerinput"):
            self._end_live_journal(session, exitstatus)
        self._write_report(session)

    def _cut_short(self, concurrent: Any) -> None:
        """The cases the session's runs wrote whose tests did not report them (the session was cut
        short: Ctrl-C): kept in the run record as their tests would have reported them, so that
        every golden written is named for review."""
        if self.record is None:
            return
        for nodeid, result in concurrent.finished():
            self.record.cut_short(nodeid, case_properties(result))

    def _end_live_journal(self, session: pytest.Session, exitstatus: int) -> None:
        """A session that made every run it selected leaves no journal; one cut short keeps its
        finished runs, and the summary says how to resume."""
        from rag_core.evals.common.paths import shown

        journal = live_journal(self.config)
        cut_short = exitstatus == pytest.ExitCode.INTERRUPTED or bool(session.shouldfail or session.shouldstop)
        kept = journal.count() if cut_short else 0
        if kept:
            args = [arg for arg in self.config.invocation_params.args if arg != "--resume"]
            self.config.stash[SESSION]["live_kept"] = (
                f"{kept} finished run(s) kept in {shown(journal.folder)}: "
                f"pytest {shlex.join(args)} --resume makes only the rest")
        else:
            journal.clear()

    def _write_report(self, session: pytest.Session) -> None:
        """Write ``--golden-report`` here, not in the terminal summary (which pytest prints after
        the session's exit status is settled): a report that cannot be written, or would hold a
        credential, fails the session."""
        path = self.config.getoption("golden_report")
        if not path or not self._shows():
            return
        from rag_core.evals.credentials import CredentialError
        from rag_core.evals.recording.fix_commands import accept_cases
        from rag_core.evals.report import markdown

        try:  # added to the file: a CI job summary keeps what earlier commands of its step wrote
            if self.config.getoption("live"):
                markdown.write_live(Path(path), self._cases())
            else:
                cases = self._cases()
                markdown.write(Path(path), cases, markdown.Links.from_environment(os.environ),
                               [orphan.name for orphan in self._orphans()[0]], self.record.retriever_entries(),
                               accept=accept_cases(cases))
        except (OSError, CredentialError) as exc:
            self.config.stash[SESSION]["report"] = (f"golden report: not written: {exc}", True)
            if session.exitstatus == 0:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
        else:
            self.config.stash[SESSION]["report"] = (f"markdown report: {path}", False)


class RetrievalSummary:
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
                    RetrieverRecordings(folder(self.config, "rag_core_cassettes", "cassettes"), suites, cases)]
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
