"""What the report page shows, as the JSON its script reads: built from a run record, the
record of the run it is compared with (``--compare BASE``; the page names it in words, its
``label``), and the records before it (history).

Everything the page needs is computed here, once, in Python (side-by-side rows, deltas, p-values,
best values); the page's script only filters, sorts, pages and draws.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Mapping

from rag_core.evals.common.failure import places
from rag_core.evals.report.sidebyside import rows, shown_text
from rag_core.evals.runs.compare import CaseChange, RetrieverDelta, case_changes, retriever_deltas, timing_change
from rag_core.evals.runs.history import KIND_WORDS, history, series
from rag_core.evals.runs.schema import CaseEntry, FailureEntry, LiveSummary, RetrieverEntry, RunRecord
from rag_core.evals.runs.tally import tally


def _about(record: RunRecord) -> dict[str, Any]:
    return {"id": record.id, "started": record.started, "seconds": round(record.seconds, 2),
            "exit_status": record.exit_status,
            "git": {"commit": record.git.commit, "dirty": record.git.dirty} if record.git else None,
            "options": record.options.to_json(), "notes": record.notes}


def _summary(record: RunRecord) -> dict[str, Any]:
    counts = tally(record)
    return {**asdict(counts), "pass_rate": counts.pass_rate}


def _failure(failure: FailureEntry) -> dict[str, Any]:
    out: dict[str, Any] = {"check": failure.check, "source": failure.source, "where": failure.where,
                           "field": failure.field, "message": failure.message, "fix": failure.fix,
                           "diff": failure.diff, "truncated": failure.truncated, "withheld": failure.withheld}
    if failure.has_values:
        golden, observed = shown_text(failure.golden), shown_text(failure.observed)
        out["rows"] = [row.to_json() for row in rows(golden, observed)]
    return out


def _failures(failures: list[FailureEntry]) -> list[dict[str, Any]]:
    """Each change once, as the terminal shows it: the failure that shows it first, with the
    places it shows up in too and their failures, for the page to open (``same``)."""
    leads = {failure.place for failure in failures if not failure.same_as}
    shown = [failure for failure in failures if not failure.same_as or failure.same_as not in leads]
    out = []
    for lead in shown:
        card = _failure(lead)
        if lead.also:
            card["also"] = places(lead.also)
            card["same"] = [_failure(f) for f in failures if f.same_as == lead.place]
        out.append(card)
    return out


def _live(live: LiveSummary) -> dict[str, Any]:
    """The aggregate, and each run with its failures as the page shows any failure."""
    return {**live.to_json(), "repeats": [
        {"repeat": r.repeat, "passed": r.passed, "seconds": round(r.seconds, 3), "tokens": r.tokens,
         "retries": r.retries, "failures": _failures(r.failures)} for r in live.repeats]}


def _detail(case: CaseEntry) -> dict[str, Any]:
    return {"reason": case.reason, "fixes": case.fixes, "failures": _failures(case.failures),
            "live": _live(case.live) if case.live else None, "recorded": case.recorded, "stale": case.stale}


def _case_row(change: CaseChange | None, case: CaseEntry | None, before: CaseEntry | None) -> dict[str, Any]:
    shown = case or before
    assert shown is not None
    return {"id": shown.id, "status": case.status if case else "gone", "before": before.status if before else None,
            "change": change.kind if change else None, "tokens": shown.tokens, "seconds": round(shown.seconds, 3),
            "failures": len(case.failures) if case else 0,
            "checks": sorted({f"{f.check} {f.field}" for f in case.failures}) if case else []}


def _cases(run: RunRecord, base: RunRecord | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The table's rows (regressions first when compared) and each shown case's detail."""
    details = {case.id: _detail(case) for case in run.cases if case.failures or case.reason or case.live or case.fixes}
    if base is None:
        return [_case_row(None, case, None) for case in run.cases], details
    changes = case_changes(run, base)
    for change in changes:
        if change.before is not None and change.kind != "same" and (change.before.failures or change.before.reason):
            details.setdefault(change.id, {"reason": "", "fixes": [], "failures": []})["before"] = _detail(change.before)
    return [_case_row(change, change.now, change.before) for change in changes], details


def _retriever(entry: RetrieverEntry, delta: RetrieverDelta | None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": entry.retriever, "gate": entry.gate, "gate_failures": entry.gate_failures,
                           "thresholds": entry.thresholds, "metrics": entry.metrics,
                           "index_seconds": round(entry.index_seconds, 3), "query_ms_p50": round(entry.query_ms_p50, 3),
                           "recall_curve": entry.recall_curve, "delta": None}
    before = {q.id: q.before for q in delta.queries} if delta else {}
    out["queries"] = {q.id: {"metrics": q.metrics, "top": [doc for doc, _ in q.top],
                             **({"before": before[q.id]} if q.id in before else {})} for q in entry.queries}
    if delta is not None:
        out["delta"] = {"gate_before": delta.gate_before,
                        "metrics": {m.metric: {"before": m.before, "delta": round(m.delta, 6), "p": m.p}
                                    for m in delta.metrics},
                        "worse": len(delta.worse)}
    return out


def _retrieval(run: RunRecord, base: RunRecord | None) -> list[dict[str, Any]]:
    deltas = {d.key: d for d in retriever_deltas(run, base)} if base is not None else {}
    suites: dict[str, list[RetrieverEntry]] = {}
    for entry in run.retrieval:
        suites.setdefault(entry.suite, []).append(entry)
    out = []
    for name, entries in sorted(suites.items()):
        entries = sorted(entries, key=lambda e: e.retriever)
        metrics = list(dict.fromkeys(m for e in entries for m in e.metrics))
        best = {m: max(e.metrics[m] for e in entries if m in e.metrics) for m in metrics}
        # a query's text and judgements are the suite's: kept once, not once per retriever
        queries: dict[str, Any] = {}
        for entry in entries:
            for q in entry.queries:
                queries.setdefault(q.id, {"text": q.text, "judged": q.judged})
        out.append({"suite": name, "metrics": metrics, "best": best, "queries": queries,
                    "retrievers": [_retriever(e, deltas.get(e.key)) for e in entries]})
    return out


def _history(records: list[RunRecord], current: str, pages: Mapping[str, str]) -> dict[str, Any]:
    points = history(records)
    return {"series": series(points),
            "points": [{**asdict(p), "comparable": p.comparable, "kind_words": KIND_WORDS[p.kind],
                        "current": p.id == current, "page": None if p.id == current else pages.get(p.id)}
                       for p in points]}


def build(run: RunRecord, base: RunRecord | None = None, earlier: list[RunRecord] | None = None,
          pages: Mapping[str, str] | None = None, base_label: str | None = None) -> dict[str, Any]:
    """The page's data. ``earlier``: the records of the history, oldest first, ending with ``run``;
    ``pages``: record id -> the address of that run's report, which its history point links to;
    ``base_label``: how the page names ``base`` ("the previous run")."""
    cases, details = _cases(run, base)
    return {
        "run": _about(run), "base": {**_about(base), "label": base_label or "the run compared with"} if base else None,
        "summary": {"now": _summary(run), "before": _summary(base) if base else None,
                    "changes": _change_counts(cases) if base else None,
                    "timing": timing_change(run.seconds, base.seconds) if base else None},
        "cases": cases, "details": details, "retrieval": _retrieval(run, base),
        "history": _history(earlier or [run], run.id, pages or {}),
    }


def _change_counts(cases: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for case in cases:
        counts[case["change"]] = counts.get(case["change"], 0) + 1
    return counts
