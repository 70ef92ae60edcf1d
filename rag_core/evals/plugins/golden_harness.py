"""A golden case as a test: its run (replayed in the test's thread; recorded, or run live, by the
session's runs at once), and what its test reports: a failure with its messages and fixes,
warnings for stale cassettes and notes, and the properties the run record is made from."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from rag_core.evals.common.requirements import unmet
from rag_core.evals.golden.discovery import CaseRef

if TYPE_CHECKING:  # imported lazily below: a project without golden cases never loads them
    from rag_core.evals.golden.case import GoldenCase
    from rag_core.evals.golden.playing import Settings

SESSION = pytest.StashKey[dict[str, Any]]()  # the golden plugin's state of one session
# a failed case's report in one line, for pytest's short summary (which repeats a whole failure
# under CI): ``golden.pytest_runtest_makereport`` puts it there
HEADLINE = pytest.StashKey[str]()


def _concurrent(node: pytest.Item, settings: Settings) -> Any:
    """The session's cases run at once (``concurrent_runs.py``: live runs, or recordings), started
    at its first case."""
    from rag_core.evals.golden.concurrent_runs import LiveSession, RecordingSession

    stash = node.config.stash[SESSION]
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
        from rag_core.evals.common.errors import HarnessError, UnrecordedRequestError
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
                from rag_core.evals.plugins.garbage_collection import fewer_collections, freeze_collected

                routing.keep_installed()  # for the next case to replay; released before any other test
                with fewer_collections():
                    if self.settings.accept:
                        from rag_core.evals.golden.accepting import accept_case

                        result = accept_case(ref.case, self.settings, _selector(self.node))
                    else:
                        result = run_case(ref.case, self.settings, _selector(self.node))
                if not self.node.config.stash[SESSION].get("frozen_after_a_case"):
                    self.node.config.stash[SESSION]["frozen_after_a_case"] = True
                    freeze_collected()  # what the first case imported (its program's SDK, the agent) too
        except (HarnessError, CredentialError, LiveRunsStopped) as exc:
            problem = str(exc)
            if isinstance(exc, UnrecordedRequestError) and not self.settings.accept:  # what --accept records
                self.node.user_properties.append(("rag_core_case", {"id": ref.case.id, "accept": True}))
        else:
            problem = None
        finally:
            self._report_late_attempts()
        if problem is not None:
            pytest.fail(problem, pytrace=False)
        self.node.user_properties += case_properties(result)
        if result.failures:
            self._fail(ref.case.id, result)
        from rag_core.evals.golden.checks.same_change import leading

        for report in [failure.text() for failure in leading(result.stale)] + result.notes:
            self.node.warn(pytest.PytestWarning(report))

    def _fail(self, case_id: str, result: Any) -> None:
        """Fail the test with the case's failures, each change once (``same_change.py``), then its fixes."""
        from rag_core.evals.golden.checks.same_change import leading

        shown = leading(result.failures)
        if not result.completed:  # a run that did not complete leads with why (its exception), not a count
            head = f"{case_id}: "
            lead = shown[0]
            self.node.stash[HEADLINE] = f"{case_id}: {lead.message.splitlines()[0] if lead.message else lead.place}"
        else:
            changes = "" if len(shown) == len(result.failures) else (
                f": {len(shown)} change(s), each shown once, where it first shows up")
            head = f"{case_id}: {len(result.failures)} check(s) failed{changes}\n\n"
            named = ", ".join(failure.place for failure in shown[:3]) + (" …" if len(shown) > 3 else "")
            self.node.stash[HEADLINE] = f"{case_id}: {len(result.failures)} check(s) failed: {named}"
        pytest.fail(head + "\n\n".join([failure.text() for failure in shown] + result.fixes), pytrace=False)

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
    session committed after it was cut short is reported the same way: ``summary.py``)."""
    properties: list[tuple[str, Any]] = [("rag_core_case", {
        "id": result.case_id, "updated": result.updated, "new": result.new_golden, "recorded": result.recorded,
        "stale": bool(result.stale), "tokens": result.tokens,
        # what --accept changes for it (its command, built from the test's node id), what it wrote
        "accept": result.accept is not None, "accepted": result.accepted, "written": list(result.written),
        # model calls were made and none of their responses counted tokens: "stream" when they were streamed
        "no_usage": _no_usage_of(result.wire),
    })]
    if result.failures:  # the run record keeps them as data (runs/failures.py)
        from rag_core.evals.runs.failures import PROPERTY, entry

        properties.append((PROPERTY, {"failures": [entry(f).to_json() for f in result.failures],
                                      "fixes": list(result.fixes)}))
    return properties


def _no_usage_of(wire: dict[str, Any]) -> str | None:
    """None when the case's model calls counted tokens (or it made none); else "stream" when they
    were streamed, "response" when not."""
    requests = wire.get("chat_requests") or []
    if not requests or wire.get("usage"):
        return None
    return "stream" if any(isinstance(r, dict) and r.get("stream") for r in requests) else "response"
