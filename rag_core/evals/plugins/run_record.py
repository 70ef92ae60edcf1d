"""The pytest plugin that gathers a session's run record and writes it when the session ends.

Registered by the golden plugin (``plugins/golden.py``) in every session; it writes a record only
when golden cases or retrievers ran. It reads the test reports, which under pytest-xdist reach the
controller from every worker with their ``user_properties``: what a case or a retriever adds
there (``failures.case_property``, ``retrieval.gate_property``) is all the record needs, so the
controller alone writes it, whatever the number of workers.

Imports only the standard library at module level: the plugin loads in every pytest session.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from rag_core.evals.plugins.options import record_mode, runs_folder
from rag_core.evals.runs.store import DEFAULT_KEEP

ARG_LIMIT = 300  # characters of one command-line argument the record keeps
LATE_LIMIT = 100  # late attempts the record keeps (a thread left polling makes one a second)


@dataclass
class _CaseParts:
    """What the reports of one golden case's phases (setup, call, teardown) said."""

    id: str
    seconds: float = 0.0
    failed: bool = False
    skipped: bool = False
    reason: str = ""
    case: dict[str, Any] = field(default_factory=dict)  # the harness's rag_core_case property
    failures: dict[str, Any] = field(default_factory=dict)  # failures.PROPERTY
    live: dict[str, Any] | None = None
    cut_short: bool = False  # committed while the session was cut short, before its test reported


class RunCollector:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.started = datetime.now(timezone.utc)
        self.clock = time.monotonic()
        self.cases: dict[str, _CaseParts] = {}  # node id -> its parts, in the order they ran
        self.retrievers: list[tuple[dict[str, Any], dict[str, Any] | None, float]] = []
        self.late: list[Any] = []  # schema.LateAttempt: what cases left running reached for after they ended
        self.outcome: tuple[str, bool] | None = None  # the line to show, and whether it is a problem

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if "golden" in report.keywords:
            self._golden(report)
        if report.when == "call":
            found = dict(report.user_properties)
            if "rag_core_retrieval" in found:
                from rag_core.evals.runs.retrieval import PROPERTY

                self.retrievers.append((found["rag_core_retrieval"]["summary"], found.get(PROPERTY), report.duration))

    def _golden(self, report: pytest.TestReport) -> None:
        nodeid = report.nodeid
        parts = self.cases.setdefault(nodeid, _CaseParts(_case_id(nodeid)))
        parts.seconds += report.duration
        if report.failed and not parts.failed:
            parts.failed, parts.reason = True, report.longreprtext
        elif report.skipped:
            parts.skipped = True
            longrepr = report.longrepr
            parts.reason = str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else report.longreprtext
        if report.when == "call":  # the teardown report repeats the properties
            self._take(parts, report.user_properties)

    def _take(self, parts: _CaseParts, properties: Any) -> None:
        from rag_core.evals.runs.failures import PROPERTY
        from rag_core.evals.runs.schema import LateAttempt

        for key, info in properties:
            if key == "rag_core_case":
                parts.case = info
            elif key == PROPERTY:
                parts.failures = info
            elif key == "rag_core_live":
                parts.live = info
            elif key == "rag_core_late":
                self.late += [LateAttempt(str(each["case"]), str(each["attempt"])) for each in info]

    def cut_short(self, nodeid: str, properties: list[tuple[str, Any]]) -> None:
        """A case the session committed after it was cut short (Ctrl-C), before its test reported:
        kept as its test would have reported it (``golden_harness.case_properties``)."""
        parts = self.cases.setdefault(nodeid, _CaseParts(_case_id(nodeid)))
        if parts.case:  # its test did report it
            return
        self._take(parts, properties)
        parts.failed, parts.cut_short = bool(parts.failures.get("failures")), True

    @pytest.hookimpl(trylast=True)  # after the other plugins' session finish may have changed the exit status
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if hasattr(self.config, "workerinput") or not (self.cases or self.retrievers):
            return
        if self.config.getoption("no_run_record", False):
            return
        from rag_core.evals.credentials import CredentialError
        from rag_core.evals.common.paths import shown
        from rag_core.evals.runs.store import RunStore

        store = RunStore(runs_folder(self.config))
        try:
            path = store.write(self.record(int(session.exitstatus)))
            keep = int(self.config.getini("rag_core_runs_keep") or DEFAULT_KEEP)
            store.prune(keep)
        except (OSError, CredentialError, ValueError) as exc:  # ValueError: a rag_core_runs_keep that is no number
            # the record is an aid, not a verdict: the session's outcome stays the tests'
            self.outcome = (f"rag-core run record: not written: {' '.join(str(exc).split())[:500]}", True)
        else:
            self.outcome = (f"rag-core run record: {shown(path)} (open it: rag-core view)", False)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.outcome is not None:
            line, problem = self.outcome
            terminalreporter.write_line(line, yellow=problem)

    def record(self, exit_status: int) -> Any:
        from rag_core.evals.runs.git import git_state
        from rag_core.evals.runs.schema import RunOptions, RunRecord
        from rag_core.evals.runs.store import new_id

        config = self.config
        options = RunOptions(record_mode=record_mode(config), emulator=bool(config.getoption("emulator", False)),
                             live=bool(config.getoption("live", False)), repeat=int(config.getoption("repeat", 1)),
                             update_goldens=bool(config.getoption("update_goldens", False)),
                             args=_arguments(config.invocation_params.args), accept=bool(config.getoption("accept", False)))
        record = RunRecord(id=new_id(), started=self.started.isoformat(timespec="seconds").replace("+00:00", "Z"),
                           seconds=time.monotonic() - self.clock, exit_status=exit_status,
                           git=git_state(Path(config.rootpath)), options=options)
        record.cases = self.case_entries()
        record.retrieval = self.retriever_entries()
        record.late = self.late[:LATE_LIMIT]
        if len(self.late) > LATE_LIMIT:
            record.notes.append(f"{len(self.late) - LATE_LIMIT} more late attempt(s) left out: the record keeps the "
                                f"first {LATE_LIMIT}")
        return record

    def case_entries(self) -> list[Any]:
        """The golden cases of the session as the record keeps them (bounded, credentials withheld):
        what ``--golden-report``'s markdown summary shows too."""
        return [_case(parts, nodeid) for nodeid, parts in self.cases.items()]

    def retriever_entries(self) -> list[Any]:
        from rag_core.evals.runs.retrieval import retriever_entry

        return [retriever_entry(summary, gate, seconds) for summary, gate, seconds in self.retrievers]


def _case_id(nodeid: str) -> str:
    """A golden case's id, from its test's node id (``…::test_golden_case[<id>]``)."""
    return nodeid[nodeid.rfind("[") + 1:-1] if nodeid.endswith("]") else nodeid


def _arguments(args: tuple[str, ...] | list[str]) -> list[str]:
    from rag_core.evals.runs.failures import withheld_text

    return [withheld_text(str(arg)[:ARG_LIMIT]) for arg in args]


def _case(parts: _CaseParts, nodeid: str = "") -> Any:
    from rag_core.evals.runs.failures import live_summary, withheld_text
    from rag_core.evals.runs.schema import CaseEntry, FailureEntry

    info = parts.case
    failures = [FailureEntry.from_json(f) for f in parts.failures.get("failures", [])]
    if parts.failed:
        status = "failed"
    elif parts.skipped:
        status = "skipped"
    else:
        status = "new" if info.get("new") else "updated" if info.get("updated") else "passed"
    # a failure without typed failures (a case that does not load, a refused recording, a live
    # run below its pass rate) keeps the report pytest showed; a typed one says it all already
    reason = withheld_text(parts.reason) if (status == "skipped" or (status == "failed" and not failures)) else ""
    tokens = info.get("tokens", (parts.live or {}).get("tokens", 0))  # live: the median run's
    return CaseEntry(id=parts.id, status=status, seconds=parts.seconds, tokens=int(tokens),
                     recorded=bool(info.get("recorded")), stale=bool(info.get("stale")), failures=failures,
                     fixes=list(parts.failures.get("fixes", [])), reason=reason,
                     live=live_summary(parts.live) if parts.live else None,
                     golden="new" if info.get("new") else "updated" if info.get("updated") else "",
                     cut_short=parts.cut_short, no_usage=info.get("no_usage") or "", selector=withheld_text(nodeid),
                     accept=bool(info.get("accept")), accepted=bool(info.get("accepted")),
                     written=[withheld_text(str(path)) for path in info.get("written", [])])
