"""Run records (rag_core/evals/runs): what one holds, how it is written (atomically, bounded, with
the user's umask, never with a credential), how old ones are pruned, and how two runs compare."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from rag_core.evals.common.failure import Failure
from rag_core.evals.report.sidebyside import rows
from rag_core.evals.runs import bounds
from rag_core.evals.runs.compare import case_changes, case_kind, retriever_deltas
from rag_core.evals.runs.failures import entry
from rag_core.evals.runs.history import history, series
from rag_core.evals.runs.schema import (SCHEMA_VERSION, CaseEntry, FailureEntry, GitState, LiveRepeat, LiveSummary,
                                        QueryEntry, RecordError, RetrieverEntry, RunOptions, RunRecord)
from rag_core.evals.runs.store import RunStore, is_record_name, load, new_id
from rag_core.evals.runs.tally import tally

pytest_plugins = ["pytester"]

# pytester's in-process runs forget modules first imported inside them, and extension modules
# (numpy) cannot be imported twice: imported here, before any run (as test_harness.py does)
import bm25s  # noqa: E402,F401
import numpy  # noqa: E402,F401
import openai  # noqa: E402,F401
import vcr  # noqa: E402,F401

from tests.golden_project import project, record  # noqa: E402,F401  (project: a fixture)


def a_failure(**changes) -> FailureEntry:
    fields = dict(check="snapshot", source="golden", where="fixtures/goldens/a.golden.yaml", field="system_prompt",
                  has_values=True, golden="Be brief.", observed="Be very brief.", diff="-Be brief.\n+Be very brief.\n")
    return FailureEntry(**{**fields, **changes})


def a_retriever(name: str = "bm25", scores: dict[str, float] | None = None, gate: str = "pass") -> RetrieverEntry:
    scores = scores or {"q1": 1.0, "q2": 0.5, "q3": 0.0}
    queries = [QueryEntry(q, f"text of {q}", {"ndcg@10": v, "recall@10": v}, {"d1": 2, "d2": 0}, [("d1", 2), ("d9", None)])
               for q, v in scores.items()]
    mean = sum(scores.values()) / len(scores)
    return RetrieverEntry("mini", name, gate=gate, thresholds={"recall@10": 0.1},
                          metrics={"ndcg@10": mean, "recall@10": mean}, recall_curve=[0.5, 0.8], queries=queries)


def a_run(cases: list[CaseEntry], retrieval: list[RetrieverEntry] | None = None, run_id: str | None = None) -> RunRecord:
    return RunRecord(id=run_id or new_id(), started="2025-03-01T10:00:00Z", seconds=3.5,
                     git=GitState("0123456789abcdef", dirty=True), options=RunOptions(args=["evals"]),
                     cases=cases, retrieval=retrieval or [])


# ------------------------------------------------------------------ the schema


def test_a_record_reads_back_as_it_was_written():
    run = a_run([CaseEntry("a", "failed", 0.25, 100, failures=[a_failure(truncated={"golden": 70000})],
                           fixes=["pytest evals/ --update-goldens"]),
                 CaseEntry("b", "skipped", reason="requires langchain, which is not installed"),
                 CaseEntry("c", "new", tokens=12, recorded=True)],
                [a_retriever()])
    text = json.dumps(run.to_json())
    assert RunRecord.from_json(json.loads(text)) == run
    data = json.loads(text)
    assert data["schema"] == SCHEMA_VERSION and data["git"] == {"commit": "0123456789abcdef", "dirty": True}
    assert data["cases"][2] == {"id": "c", "status": "new", "seconds": 0.0, "tokens": 12, "recorded": True}


def test_values_a_check_compares_are_kept_even_when_empty():
    failure = a_failure(golden=None, observed="", diff="")
    back = FailureEntry.from_json(json.loads(json.dumps(failure.to_json())))
    assert back.has_values and back.golden is None and back.observed == ""
    assert not FailureEntry.from_json(a_failure(has_values=False).to_json()).has_values


def test_a_newer_schema_or_another_file_is_refused_by_name():
    with pytest.raises(RecordError, match="schema 99 is newer than this rag-core reads"):
        RunRecord.from_json({"schema": 99, "id": "x"}, "r.json")
    with pytest.raises(RecordError, match="r.json: not a rag-core run record"):
        RunRecord.from_json({"results": []}, "r.json")
    with pytest.raises(RecordError, match=r"r.json: not a run record rag-core can read: cases\[0\].id: is missing"):
        RunRecord.from_json({"schema": 1, "id": "x", "cases": [{"status": "failed"}]}, "r.json")


def test_a_failure_keeps_its_values_its_diff_and_its_fix():
    failure = Failure("snapshot", "golden", "g.golden.yaml", "tools", golden=[{"name": "lookup"}],
                      observed=[{"name": "look_up"}], fix="pytest evals/ --update-goldens")
    kept = entry(failure)
    assert kept.has_values and kept.golden == [{"name": "lookup"}] and kept.observed == [{"name": "look_up"}]
    assert kept.diff == failure.diff() and "-- name: lookup" in kept.diff.replace("- - ", "-- ")
    assert kept.fix == "pytest evals/ --update-goldens" and not kept.truncated
    limit = entry(Failure("limit", "case", "case.yaml", "expect.usage", message="used 900 tokens, at most 500"))
    assert not limit.has_values and limit.message == "used 900 tokens, at most 500"


def test_a_large_value_is_cut_to_its_bound_and_says_so():
    huge = {"body": "x" * (bounds.VALUE_LIMIT * 2)}
    kept = entry(Failure("snapshot", "golden", "g.yaml", "requests", golden=huge, observed={"body": "y"}))
    assert kept.truncated["golden"] > bounds.VALUE_LIMIT * 2
    assert isinstance(kept.golden, str) and kept.golden.startswith("body: ")
    assert len(kept.golden.encode()) < bounds.VALUE_LIMIT + 100 and "cut: " in kept.golden
    # the diff is bounded where it is made (compare.py): its long line is cut there, with a count
    assert kept.observed == {"body": "y"} and "diff" not in kept.truncated
    assert len(kept.diff) < 2_000 and "⋯ (130,078 more characters)" in kept.diff
    text, full = bounds.cut_text("é" * 10, limit=5)  # cut at a character, never inside one
    assert text.startswith("éé\n") and full == 20


def test_a_credential_in_an_observed_value_is_withheld_not_written():
    planted = "ghp_" + "L" * 36
    kept = entry(Failure("output", "case", "case.yaml", "expect.output", golden=planted, observed="Soak the noodles."))
    assert "golden" in kept.withheld and planted not in json.dumps(kept.to_json())
    assert kept.golden.startswith("(withheld: it looks like a credential") and kept.observed == "Soak the noodles."
    assert "diff" in kept.withheld


def test_anything_becomes_json_data():
    class Model:
        def model_dump(self, mode: str):
            return {"mode": mode}

    data = bounds.jsonable({"set": {2, 1}, "bytes": b"ok", "nan": float("nan"), 3: (1, 2), "model": Model(),
                            "other": object})
    assert data == {"set": [1, 2], "bytes": "ok", "nan": "nan", "3": [1, 2], "model": {"mode": "json"},
                    "other": "<class 'object'>"}
    json.dumps(data, allow_nan=False)


def test_past_its_budget_a_record_keeps_failures_without_their_values(monkeypatch):
    monkeypatch.setattr(bounds, "DETAIL_BUDGET", 200)
    cases = [CaseEntry(f"c{n}", "failed", failures=[a_failure(golden="g" * 60, observed="o" * 60)]) for n in range(3)]
    notes = bounds.keep_within_budget(cases)
    assert [c.failures[0].has_values for c in cases] == [True, False, False]
    assert cases[2].failures[0].message == "" and cases[2].failures[0].field == "system_prompt"
    assert "detail" in cases[2].failures[0].truncated and notes and notes[0].startswith("2 failure(s) kept without")


def a_live_property(runs: int = 4, **changes) -> dict:
    """The ``rag_core_live`` property as the live harness sends it, each run with its failures."""
    repeats = [{"repeat": n, "passed": n != 1, "seconds": 1.5 + n, "tokens": 100 + n, "retries": n % 2,
                "failures": [] if n != 1 else [a_failure(check="output", field="output").to_json()]}
               for n in range(runs)]
    return {"id": "flaky", "runs": runs, "passes": runs - 1, "pass_rate": (runs - 1) / runs, "min_pass_rate": 0.6,
            "p50": 2.5, "p95": 3.4, "tokens": 101, "ok": True, "repeats": repeats,
            "tokens_total": sum(r["tokens"] for r in repeats), **changes}


def test_a_live_case_keeps_each_run_of_its_repeats():
    from rag_core.evals.plugins.run_record import _case, _CaseParts

    case = _case(_CaseParts("flaky", seconds=9.0, live=a_live_property()))
    assert case.live.tokens_total == 406 and [r.repeat for r in case.live.repeats] == [0, 1, 2, 3]
    second = case.live.repeats[1]
    assert (second.passed, second.seconds, second.tokens, second.retries) == (False, 2.5, 101, 1)
    assert second.failures[0].check == "output" and second.failures[0].diff == "-Be brief.\n+Be very brief.\n"
    back = CaseEntry.from_json(json.loads(json.dumps(case.to_json())))
    assert back == case
    # a record written before runs were kept, or a harness that sends none: the aggregate alone
    older = _case(_CaseParts("flaky", live={k: v for k, v in a_live_property().items()
                                            if k not in ("repeats", "tokens_total")}))
    assert older.live.repeats == [] and older.live.tokens_total == 0 and older.live.passes == 3
    assert "repeats" not in older.to_json()["live"]


def test_a_live_runs_failures_are_bounded_and_screened_whoever_made_them():
    from rag_core.evals.plugins.run_record import _case, _CaseParts

    planted = "sk-proj-" + "H7q" * 14
    leaky = a_failure(golden="x" * (bounds.VALUE_LIMIT * 2), diff=f"--- a\n+++ b\n-{planted}\n+Soak.\n").to_json()
    prop = a_live_property(runs=bounds.REPEAT_LIMIT + 5)
    prop["repeats"][1]["failures"] = [leaky]
    case = _case(_CaseParts("flaky", live=prop))
    assert len(case.live.repeats) == bounds.REPEAT_LIMIT and case.live.runs == bounds.REPEAT_LIMIT + 5
    kept = case.live.repeats[1].failures[0]
    assert "diff" in kept.withheld and planted not in json.dumps(case.to_json())
    assert kept.truncated["golden"] > bounds.VALUE_LIMIT * 2 and len(kept.golden) < bounds.VALUE_LIMIT + 100


def test_the_budget_counts_the_failures_of_live_runs_too(monkeypatch):
    from rag_core.evals.runs.schema import LiveRepeat, LiveSummary

    monkeypatch.setattr(bounds, "DETAIL_BUDGET", 200)
    runs = [LiveRepeat(n, False, failures=[a_failure(golden="g" * 60, observed="o" * 60)]) for n in range(3)]
    case = CaseEntry("flaky", "failed", live=LiveSummary(3, 0, 0.0, 0.5, 1.0, 1.0, 10, False, repeats=runs))
    notes = bounds.keep_within_budget([case])
    assert [r.failures[0].has_values for r in runs] == [True, False, False] and notes[0].startswith("2 failure(s)")


# ------------------------------------------------------------------ the folder


def test_records_are_written_atomically_with_the_umask_and_ignore_themselves(tmp_path):
    store = RunStore(tmp_path / ".rag-core" / "runs")
    previous = os.umask(0o027)
    try:
        path = store.write(a_run([CaseEntry("a", "passed")]))
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert is_record_name(path.name) and load(path).cases == [CaseEntry("a", "passed")]
    assert (tmp_path / ".rag-core" / ".gitignore").read_text().splitlines()[-1] == "*"
    assert sorted(p.name for p in store.folder.iterdir()) == [path.name]  # no temporary file left
    elsewhere = RunStore(tmp_path / "reports" / "runs")
    elsewhere.write(a_run([]))
    assert not (tmp_path / "reports" / ".gitignore").exists()  # a folder the project chose may be committed


def test_a_record_holding_a_credential_is_not_written(tmp_path):
    from rag_core.evals.credentials import CredentialError

    store = RunStore(tmp_path)
    with pytest.raises(CredentialError):
        store.write(a_run([CaseEntry("a", "skipped", reason="token sk-proj-" + "H" * 40)]))
    assert store.paths() == []


def test_old_records_are_pruned_by_count_and_nothing_else_is_touched(tmp_path):
    store = RunStore(tmp_path)
    names = [f"2025030{day}T100000.000Z-00000{day}.json" for day in range(1, 8)]
    for name in names:
        (tmp_path / name).write_text("{}")
    (tmp_path / "notes.json").write_text("mine")
    assert store.prune(3) == [tmp_path / name for name in names[:4]]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*names[4:], "notes.json"])
    assert store.prune(0) == [] and len(store.paths()) == 3


def test_a_record_is_found_by_name_prefix_path_or_as_the_newest_or_the_one_before(tmp_path):
    store = RunStore(tmp_path)
    with pytest.raises(RecordError, match="no run records here yet"):
        store.newest()
    first = store.write(a_run([], run_id="20250301T100000.000Z-aaaaaa"))
    second = store.write(a_run([], run_id="20250302T100000.000Z-bbbbbb"))
    assert store.resolve(None) == second and store.resolve("20250301T100000.000Z-aaaaaa") == first
    assert store.resolve("20250301") == first and store.resolve(str(second)) == second
    assert store.before(second) == first and store.history(second, 5) == [first, second]
    with pytest.raises(RecordError, match="names 2 run records"):
        store.resolve("2025")
    with pytest.raises(RecordError, match="no earlier run record"):
        store.before(first)
    with pytest.raises(RecordError, match="no such run record"):
        store.resolve("nothing")


# ------------------------------------------------------------------ every reader is total

GOOD = {"schema": 1, "id": "20250301T100000.000Z-000001", "started": "2025-03-01T10:00:00Z",
        "cases": [{"id": "a", "status": "failed", "failures": [{"check": "snapshot", "field": "system_prompt",
                                                                 "golden": "G", "observed": "x"}]}]}
# what an old, a hand-edited or a foreign record may hold, and the one line it is refused with: each
# made report, view and merge end in a traceback (RecursionError, UnicodeEncodeError, TypeError) or
# read it silently
BAD_RECORDS = {
    "deep": (json.dumps(GOOD).replace('"G"', "[" * 100_000 + "]" * 100_000), "nested deeper than 100 levels"),
    "surrogate": (json.dumps(GOOD).replace('"id": "a"', '"id": "a\\ud800"'),
                  r"cases[0].id holds a lone surrogate (\ud800), which is not text"),
    "object id": (json.dumps(GOOD).replace('"id": "a"', '"id": {"x": 1}'),
                  "cases[0].id: should be text, not an object ({'x': 1})"),
    "text for a number": (json.dumps({**GOOD, "seconds": "3.5"}), "seconds: should be a number, not text ('3.5')"),
    "NaN": (json.dumps({**GOOD, "seconds": float("nan")}), "NaN is not a JSON number"),
    "status": (json.dumps(GOOD).replace('"status": "failed"', '"status": ["failed"]'), "cases[0].status: should be text"),
    "metric": (json.dumps({**GOOD, "retrieval": [{"suite": "s", "retriever": "r", "metrics": {"ndcg@10": "high"}}]}),
               "retrieval[0].metrics.ndcg@10: should be a number, not text"),
}


def bad_record(folder: Path, kind: str, name: str = "20250201T100000.000Z-00000b.json") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(BAD_RECORDS[kind][0], encoding="utf-8")
    return path


@pytest.mark.parametrize("kind", sorted(BAD_RECORDS))
def test_a_record_that_is_deep_has_odd_strings_or_wrong_types_is_refused_naming_the_file_and_the_field(tmp_path, kind):
    path = bad_record(tmp_path, kind)
    with pytest.raises(RecordError) as refused:
        load(path)
    assert str(refused.value).startswith(f"{path}: not a run record rag-core can read: ")
    assert BAD_RECORDS[kind][1] in str(refused.value)


def test_a_deep_value_rag_core_writes_reads_back():
    """The bound is above what the writer makes: values are cut at 64 levels, inside a live run's failure."""
    from rag_core.evals.runs.store import plain_json

    deep: object = "leaf"
    for _ in range(200):
        deep = [deep]
    repeat = LiveRepeat(0, False, failures=[entry(Failure("snapshot", "golden", "g.yaml", "requests", "m",
                                                          golden=deep, observed="x"))])
    live = LiveSummary(1, 0, 0.0, 1.0, 1.0, 1.0, 0, False, repeats=[repeat])
    record = a_run([CaseEntry("a", "failed", live=live)])
    text = json.dumps(record.to_json())
    assert RunRecord.from_json(plain_json(text, "r.json")).cases[0].live.repeats[0].failures[0].observed == "x"


@pytest.mark.parametrize("kind", sorted(BAD_RECORDS))
def test_report_leaves_an_unreadable_old_record_out_of_the_history_in_one_line_naming_it(tmp_path, capsys, kind):
    from rag_core.cli import main

    store = RunStore(tmp_path / "runs")
    bad = bad_record(store.folder, kind)
    store.write(a_run([CaseEntry("a", "passed")], run_id="20250301T100000.000Z-000001"))
    store.write(a_run([CaseEntry("a", "failed", failures=[a_failure()])], run_id="20250302T100000.000Z-000002"))
    out = tmp_path / "report.html"
    assert main(["report", "--runs-dir", str(store.folder), "--compare", "previous", "-o", str(out)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"rag-core: left out of the history: {bad}: "), err
    assert BAD_RECORDS[kind][1] in err[0]
    assert [p["id"] for p in page_data(out.read_text())["history"]["points"]] == [
        "20250301T100000.000Z-000001", "20250302T100000.000Z-000002"]
    # the reports its history links to say it once too, not once per page
    assert main(["report", "--runs-dir", str(store.folder), "-o", str(tmp_path / "site" / "r.html"),
                 "--history-pages"]) == 0
    assert len(capsys.readouterr().err.splitlines()) == 1


@pytest.mark.parametrize("kind", sorted(BAD_RECORDS))
@pytest.mark.parametrize("command", ["report", "compare", "view", "merge"])
def test_an_unreadable_record_asked_for_is_refused_in_one_line_with_exit_status_2(tmp_path, capsys, monkeypatch,
                                                                                   kind, command):
    import rag_core.cli
    from rag_core.cli import main

    def served(server):  # what view would do with a record it read: serve it until stopped
        server.close()
        raise AssertionError("view served a record it should have refused")

    monkeypatch.setattr(rag_core.cli, "_serve_until_stopped", served)

    store = RunStore(tmp_path / "runs")
    bad = bad_record(store.folder, kind)
    good = store.write(a_run([CaseEntry("a", "passed")], run_id="20250301T100000.000Z-000001"))
    argv = {"report": ["report", str(bad), "-o", str(tmp_path / "r.html")],
            "compare": ["report", "--compare", str(bad), "-o", str(tmp_path / "r.html")],
            "view": ["view", str(bad), "--no-browser"],
            "merge": ["merge", str(good), str(bad), "--runs-dir", str(tmp_path / "merged")]}[command]
    if command != "merge":
        argv += ["--runs-dir", str(store.folder)]
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"rag-core: error: {bad}: ") and BAD_RECORDS[kind][1] in err[0], err
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "merged").exists()


def test_a_hand_cut_value_that_is_no_text_is_shown_as_yaml(tmp_path):
    from rag_core.cli import main

    store = RunStore(tmp_path)
    store.write(a_run([CaseEntry("a", "failed", failures=[a_failure(golden={"instructions": ["Be brief."]},
                                                                    truncated={"golden": 70_000})])]))
    assert main(["report", "--runs-dir", str(tmp_path), "-o", str(tmp_path / "r.html")]) == 0
    rows = page_data((tmp_path / "r.html").read_text())["details"]["a"]["failures"][0]["rows"]
    assert rows == [["~", "instructions:", "Be very brief."], ["-", "- Be brief.", None]]


# ------------------------------------------------------------------ comparing runs


@pytest.mark.parametrize(("before", "now", "kind"), [
    (None, "passed", "added"), ("passed", None, "removed"), ("passed", "failed", "regressed"),
    ("new", "failed", "regressed"), ("failed", "passed", "fixed"), ("failed", "updated", "fixed"),
    ("skipped", "passed", "changed"), ("passed", "skipped", "changed"), ("passed", "passed", "same"),
    ("passed", "new", "same"),
])
def test_how_a_case_changed(before, now, kind):
    make = lambda status: CaseEntry("a", status) if status else None  # noqa: E731
    assert case_kind(make(now), make(before)) == kind


def test_a_case_failing_differently_has_changed_and_failing_alike_has_not():
    before = CaseEntry("a", "failed", failures=[a_failure()])
    assert case_kind(CaseEntry("a", "failed", failures=[a_failure()]), before) == "same"
    assert case_kind(CaseEntry("a", "failed", failures=[a_failure(diff="-x\n+y\n")]), before) == "changed"
    assert case_kind(CaseEntry("a", "failed", reason="other"), CaseEntry("a", "failed", reason="one")) == "changed"


def test_regressions_come_first_and_gone_cases_last():
    base = a_run([CaseEntry("a", "passed"), CaseEntry("b", "passed"), CaseEntry("c", "failed"), CaseEntry("gone", "passed")])
    run = a_run([CaseEntry("a", "passed"), CaseEntry("c", "passed"), CaseEntry("b", "failed"), CaseEntry("d", "new")])
    assert [(c.id, c.kind) for c in case_changes(run, base)] == [
        ("b", "regressed"), ("d", "added"), ("c", "fixed"), ("gone", "removed"), ("a", "same")]


def test_retriever_deltas_name_the_worst_queries_first_with_the_p_value():
    base = a_run([], [a_retriever("bm25", {"q1": 1.0, "q2": 0.5, "q3": 0.0}),
                      a_retriever("dense", {"q1": 1.0, "q2": 1.0, "q3": 1.0})])
    run = a_run([], [a_retriever("bm25", {"q1": 1.0, "q2": 0.5, "q3": 0.0}),
                     a_retriever("dense", {"q1": 1.0, "q2": 0.25, "q3": 0.5}, gate="FAIL"),
                     a_retriever("new_one")])
    deltas = retriever_deltas(run, base)
    assert [d.key for d in deltas] == ["mini/dense", "mini/bm25"]  # the largest drop first; new_one has no base
    dense = deltas[0]
    assert (dense.gate_before, dense.gate_now) == ("pass", "FAIL")
    assert [(q.id, q.delta) for q in dense.worse] == [("q2", -0.75), ("q3", -0.5)]
    assert dense.metrics[0].metric == "ndcg@10" and dense.metrics[0].delta == pytest.approx(-1.25 / 3)
    assert dense.metrics[0].p is not None and 0 < dense.metrics[0].p <= 1
    assert deltas[1].metrics[0].p == 1.0 and deltas[1].worse == []


def test_timing_within_the_noise_band_is_noise_and_beyond_it_slower_or_faster():
    from rag_core.evals.report.view import build
    from rag_core.evals.runs.compare import timing_change

    assert timing_change(3.5, 3.1) == "noise"  # an unchanged replay's +0.4 s
    assert timing_change(49.0, 40.0) == "noise" and timing_change(51.0, 40.0) == "slower"  # a quarter of 40 s
    assert timing_change(1.0, 4.0) == "faster" and timing_change(2.6, 3.8) == "noise"  # within 2 s
    base, run = a_run([CaseEntry("a", "passed")]), a_run([CaseEntry("a", "passed")])
    run.seconds, base.seconds = 3.5, 3.1
    assert build(run, base)["summary"]["timing"] == "noise" and build(run)["summary"]["timing"] is None


@pytest.mark.parametrize(("options", "exit_status", "kind"), [
    (RunOptions(args=["evals"]), 1, "replay"),
    (RunOptions(args=["evals/", "-n", "2", "-p", "no:randomly"]), 0, "replay"),
    (RunOptions(args=["evals", "--case", "with_tool"]), 0, "selection"),
    (RunOptions(args=["evals", "--case=with_tool"]), 0, "selection"),
    (RunOptions(args=["evals", "-kpad_thai"]), 0, "selection"),
    (RunOptions(args=["evals/test_goldens.py::test_golden_case[with_tool]"]), 0, "selection"),
    (RunOptions(args=["evals", "-vx"]), 1, "selection"),
    (RunOptions(args=["evals", "--lf"]), 0, "selection"),
    (RunOptions(record_mode="once", emulator=True), 0, "recording"),
    (RunOptions(live=True, repeat=5), 0, "live"),
    (RunOptions(update_goldens=True), 0, "update-goldens"),
    (RunOptions(args=["evals"]), 2, "cut short"),
])
def test_each_history_point_says_what_kind_of_run_it_was(options, exit_status, kind):
    from rag_core.evals.runs.history import run_kind

    run = a_run([CaseEntry("a", "passed")])
    run.options, run.exit_status = options, exit_status
    assert run_kind(run) == kind
    assert history([run])[0].comparable is (kind == "replay")


def test_the_history_draws_the_pass_rate_of_full_replays_only():
    """A recording, a --case subset and a replay drawn on one line zigzagged without meaning."""
    from rag_core.evals.report.view import build

    replay = a_run([CaseEntry("a", "passed"), CaseEntry("b", "failed", failures=[a_failure()])])
    subset = a_run([CaseEntry("a", "passed")])
    subset.options = RunOptions(args=["evals", "--case", "a"])
    recording = a_run([CaseEntry("a", "new"), CaseEntry("b", "new")])
    recording.options = RunOptions(record_mode="once", emulator=True)
    points = build(replay, earlier=[recording, subset, replay])["history"]["points"]
    assert [(p["kind"], p["comparable"], p["pass_rate"]) for p in points] == [
        ("recording", False, 1.0), ("selection", False, 1.0), ("replay", True, 0.5)]
    assert [p["kind_words"] for p in points] == ["recording", "replay of a selection", "full replay"]


def test_history_has_the_pass_rate_and_each_gated_metric():
    runs = [a_run([CaseEntry("a", "passed"), CaseEntry("b", "failed"), CaseEntry("c", "skipped")], [a_retriever()]),
            a_run([CaseEntry("a", "passed"), CaseEntry("b", "passed")], [a_retriever(scores={"q1": 1.0})])]
    points = history(runs)
    assert [p.pass_rate for p in points] == [0.5, 1.0]
    assert series(points) == ["mini/bm25 ndcg@10", "mini/bm25 recall@10"]  # the primary, then the threshold's
    assert points[1].metrics["mini/bm25 ndcg@10"] == 1.0 and points[0].commit == "0123456789abcdef"
    counts = tally(runs[0])
    assert (counts.cases, counts.passed, counts.failed, counts.skipped, counts.gates_passed) == (3, 1, 1, 1, 1)


def test_side_by_side_rows_pair_changed_lines_and_fold_long_unchanged_stretches():
    golden = "\n".join(["Be brief."] + [f"line {n}" for n in range(20)] + ["end"])
    observed = "\n".join(["Be very brief."] + [f"line {n}" for n in range(20)] + ["the end", "more"])
    shown = [(r.tag, r.left, r.right) for r in rows(golden, observed)]
    assert shown[0] == ("~", "Be brief.", "Be very brief.")
    assert shown[1:4] == [("=", f"line {n}", f"line {n}") for n in range(3)]
    assert shown[4] == ("…", "14 unchanged lines", None)
    assert shown[-2:] == [("~", "end", "the end"), ("+", None, "more")]


def test_a_fold_keeps_the_unchanged_lines_it_hides_so_the_page_can_open_it():
    golden = "\n".join(["Be brief."] + [f"line {n}" for n in range(20)] + ["end"])
    observed = "\n".join(["Be very brief."] + [f"line {n}" for n in range(20)] + ["the end"])
    fold = rows(golden, observed)[4]
    assert fold.to_json() == ["…", "14 unchanged lines", None, [f"line {n}" for n in range(3, 17)]]
    assert rows("a", "b")[0].to_json() == ["~", "a", "b"]  # a row without a fold stays three long


# ------------------------------------------------------------------ through pytest


def records(folder: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in RunStore(folder).paths()]


def test_every_session_writes_one_record_with_typed_failures(project):
    record(project)
    runs = project.path / ".rag-core" / "runs"
    before = len(RunStore(runs).paths())
    case = project.path / "fixtures" / "goldens" / "with_markdown.yaml"
    case.write_text(case.read_text().replace("Be brief.", "Be very brief."))
    result = project.runpytest("evals", "--no-strict-cassettes")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["rag-core run record: .rag-core/runs/*.json (open it: rag-core view)"])
    assert len(RunStore(runs).paths()) == before + 1
    data = records(runs)[-1]
    assert data["schema"] == SCHEMA_VERSION and data["options"]["record_mode"] == "none" and data["exit_status"] == 1
    by_id = {c["id"]: c for c in data["cases"]}
    assert by_id["with_tool"]["status"] == "passed" and by_id["with_tool"]["tokens"] > 0
    failed = by_id["with_markdown"]
    assert failed["status"] == "failed" and failed["seconds"] > 0
    prompt = next(f for f in failed["failures"] if f["field"] == "system_prompt")
    assert prompt["golden"].startswith("Be brief.") and prompt["observed"].startswith("Be very brief.")
    assert "-  Be brief.\n+  Be very brief." in prompt["diff"] and prompt["source"] == "golden"


def test_no_record_with_no_run_record_and_another_folder_with_runs_dir(project):
    record(project)
    runs = project.path / ".rag-core" / "runs"
    before = RunStore(runs).paths()
    project.runpytest("evals", "--no-run-record").assert_outcomes(passed=2)
    assert RunStore(runs).paths() == before
    project.runpytest("evals", "--runs-dir=elsewhere").assert_outcomes(passed=2)
    assert len(RunStore(project.path / "elsewhere").paths()) == 1 and RunStore(runs).paths() == before


def test_the_ini_names_the_folder_and_how_many_records_to_keep(project):
    record(project)
    project.makeini("[pytest]\naddopts = -p no:cacheprovider\npythonpath = .\n"
                    "rag_core_runs_dir = out/runs\nrag_core_runs_keep = 2\n")
    for _ in range(3):
        project.runpytest("evals").assert_outcomes(passed=2)
    assert len(RunStore(project.path / "out" / "runs").paths()) == 2


def test_a_skipped_case_and_a_case_that_fails_before_any_check_keep_their_reason(project, monkeypatch):
    monkeypatch.delenv("RAG_CORE_REQUIRE_ALL_CASES", raising=False)  # CI sets it: no case may skip there
    (project.path / "fixtures" / "goldens" / "needs.yaml").write_text(
        "id: needs\nrequires: [no_such_module_here]\ninput: hi\nemulate: [{text: hello}]\n")
    (project.path / "fixtures" / "goldens" / "broken.yaml").write_text("id: broken\ninput: hi\nagnet: {}\n")
    project.runpytest("evals", "--runs-dir=runs", "-k", "needs or broken")
    data = records(project.path / "runs")[-1]
    by_id = {c["id"]: c for c in data["cases"]}
    assert by_id["needs"]["status"] == "skipped" and "no_such_module_here" in by_id["needs"]["reason"]
    assert by_id["broken"]["status"] == "failed" and "broken" in by_id["broken"]["reason"]


def test_under_xdist_the_controller_writes_one_record_with_every_case(project):
    record(project)
    case = project.path / "fixtures" / "goldens" / "with_tool.yaml"
    case.write_text(case.read_text().replace("What is in the pantry?", "What is in the fridge?"))
    result = project.runpytest("evals", "-n", "2", "-p", "no:benchmark", "--runs-dir=parallel", "--no-strict-cassettes")
    assert result.ret == 1
    written = records(project.path / "parallel")
    assert len(written) == 1
    by_id = {c["id"]: c for c in written[0]["cases"]}
    assert by_id["with_markdown"]["status"] == "passed" and by_id["with_tool"]["status"] == "failed"
    assert any(f["field"] == "user_messages" for f in by_id["with_tool"]["failures"])


def test_a_planted_credential_in_a_failing_expectation_never_reaches_the_record(project):
    record(project)
    case = project.path / "fixtures" / "goldens" / "with_markdown.yaml"
    planted = "ghp_" + "L" * 36
    case.write_text(case.read_text() + f"expect:\n  output: {{equals: '{planted}'}}\n")
    project.runpytest("evals", "--runs-dir=runs").assert_outcomes(passed=1, failed=1)
    text = RunStore(project.path / "runs").paths()[-1].read_text()
    assert planted not in text and "withheld: it looks like a credential" in text


# ------------------------------------------------------------------ the commands


def test_report_and_view_say_what_is_missing(tmp_path, capsys):
    from rag_core.cli import main

    assert main(["report", "--runs-dir", str(tmp_path)]) == 2
    assert "no run records here yet" in capsys.readouterr().err
    RunStore(tmp_path).write(a_run([CaseEntry("a", "passed")]))
    assert main(["report", "--runs-dir", str(tmp_path), "--compare", "previous"]) == 2
    assert "no earlier run record" in capsys.readouterr().err
    assert main(["view", "--runs-dir", str(tmp_path), "--history", "0"]) == 2


def test_report_writes_one_file_with_the_data_inline(tmp_path, capsys):
    from rag_core.cli import main

    store = RunStore(tmp_path / "runs")
    store.write(a_run([CaseEntry("a", "passed"), CaseEntry("b", "passed")], [a_retriever()]))
    store.write(a_run([CaseEntry("a", "passed"), CaseEntry("b", "failed", failures=[a_failure(observed="</script><b>")])],
                      [a_retriever(scores={"q1": 0.0, "q2": 0.5, "q3": 0.0})]))
    out = tmp_path / "report.html"
    assert main(["report", "--runs-dir", str(tmp_path / "runs"), "--compare", "previous", "-o", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    html = out.read_text()
    assert "</script><b>" not in html and "\\u003c/script>\\u003cb>" in html  # data cannot close its element
    assert "<script src" not in html and "<link" not in html and "http://" not in html.replace("http://www.w3.org", "")
    data = json.loads(html.split('id="rag-core-data">', 1)[1].split("</script>", 1)[0])
    assert [(c["id"], c["change"]) for c in data["cases"]] == [("b", "regressed"), ("a", "same")]
    assert data["retrieval"][0]["retrievers"][0]["delta"]["worse"] == 1
    assert len(data["history"]["points"]) == 2


def test_view_serves_the_page_on_loopback():
    from urllib.request import urlopen

    from rag_core.evals.report.serve import ReportServer

    server = ReportServer("<html>the report</html>")
    try:
        assert server.url.startswith("http://127.0.0.1:")
        with urlopen(server.url + "any/path", timeout=10) as answer:
            assert answer.read() == b"<html>the report</html>"
    finally:
        server.close()


def test_view_answers_only_requests_for_its_own_host(tmp_path):
    """A page of another site rebinding its host name to 127.0.0.1 sends its own name in Host:"""
    import socket

    from rag_core.evals.report.serve import ReportServer

    server = ReportServer("<html>the report</html>")
    port = server.server.server_address[1]

    def answer(host: str | None) -> tuple[int, bytes]:
        # a plain socket: the request exactly as written (an HTTP client library adds a Host of its own)
        request = "GET / HTTP/1.1\r\n" + (f"Host: {host}\r\n" if host is not None else "") + "Connection: close\r\n\r\n"
        with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
            connection.sendall(request.encode())
            reply = b""
            while chunk := connection.recv(65536):
                reply += chunk
        head, _, body = reply.partition(b"\r\n\r\n")
        return int(head.split()[1]), body

    try:
        assert answer(f"127.0.0.1:{port}") == (200, b"<html>the report</html>")
        assert answer(f"localhost:{port}") == (200, b"<html>the report</html>")
        assert answer(f"LOCALHOST:{port}")[0] == 200  # host names are case-insensitive
        for host in (f"rebind.attacker.example:{port}", "rebind.attacker.example", f"127.0.0.1:{port + 1}",
                     "127.0.0.1", f"localhost.:{port}", f"[::1]:{port}", "", None):
            status, body = answer(host)
            assert status == 421 and b"the report" not in body, host
        assert f"127.0.0.1:{port} or localhost:{port} only".encode() in answer("evil.example")[1]
    finally:
        server.close()


def test_report_refuses_to_compare_a_run_with_itself(tmp_path, capsys):
    from rag_core.cli import main

    store = RunStore(tmp_path / "runs")
    store.write(a_run([CaseEntry("a", "passed")], run_id="20250301T100000.000Z-000001"))
    second = store.write(a_run([CaseEntry("a", "passed")], run_id="20250302T100000.000Z-000002"))
    out = tmp_path / "r.html"
    for given in ("20250302", str(second), second.stem):
        assert main(["report", "--runs-dir", str(store.folder), "--compare", given, "-o", str(out)]) == 2
        assert f"--compare {given}: names the run being reported ({second.name})" in capsys.readouterr().err
    copy = tmp_path / "copy.json"
    copy.write_text(second.read_text())
    assert main(["report", "--runs-dir", str(store.folder), "--compare", str(copy), "-o", str(out)]) == 2
    assert f"is a copy of the run being reported ({second}" in capsys.readouterr().err
    assert not out.exists()
    assert main(["report", "--runs-dir", str(store.folder), "--compare", "previous", "-o", str(out)]) == 0
    assert page_data(out.read_text())["base"]["label"] == "the previous run"


def test_the_page_names_the_run_it_compares_with_in_words():
    from rag_core.evals.report.html import base_label

    old, new = a_run([], run_id="20250301T100000.000Z-000001"), a_run([], run_id="20250302T100000.000Z-000002")
    assert base_label(new, old, previous=True) == "the previous run"
    assert base_label(new, old, previous=False) == "the earlier run" and base_label(old, new, False) == "the later run"


def test_the_docs_table_names_every_change_a_case_can_show():
    import typing

    from rag_core.evals.runs.compare import ChangeKind

    page = (Path(__file__).resolve().parents[1] / "docs" / "report.md").read_text(encoding="utf-8")
    table = page.split("### How a case changed", 1)[1].split("\n## ", 1)[0]
    for kind in typing.get_args(ChangeKind):
        assert f"\n| {kind} |" in table, kind


def test_the_summary_links_the_report_where_rag_core_report_writes_it(project, monkeypatch):
    """The summary linked rag-core-report.html#case/… while rag-core report wrote .rag-core/report.html."""
    from urllib.parse import unquote, urlsplit

    from rag_core.cli import main

    for name in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID", "RAG_CORE_REPORT_URL"):
        monkeypatch.delenv(name, raising=False)
    record(project)
    case = project.path / "fixtures" / "goldens" / "with_markdown.yaml"
    case.write_text(case.read_text().replace("Be brief.", "Be very brief."))
    (project.path / "ci").mkdir()
    project.runpytest("evals", "--golden-report=ci/summary.md").assert_outcomes(passed=1, failed=1)
    monkeypatch.chdir(project.path)
    assert main(["report"]) == 0  # its defaults: the newest record, .rag-core/report.html
    summary = project.path / "ci" / "summary.md"
    link = summary.read_text().split("[open this case](", 1)[1].split(")", 1)[0]
    assert link == "../.rag-core/report.html#case/with_markdown"
    target = urlsplit(link)
    page = (summary.parent / unquote(target.path)).resolve()
    assert page == (project.path / ".rag-core" / "report.html").resolve() and page.is_file()
    assert target.fragment == "case/with_markdown"
    assert "with_markdown" in page_data(page.read_text())["details"]


def test_view_says_once_which_old_records_its_pages_leave_out(tmp_path):
    """rag-core view itself: the record it serves, the history pages it builds, one line per bad record."""
    import signal
    import subprocess
    import sys
    from urllib.request import urlopen

    store = RunStore(tmp_path / "runs")
    bad = bad_record(store.folder, "deep")
    first = store.write(a_run([CaseEntry("a", "passed")], run_id="20250301T100000.000Z-000001"))
    store.write(a_run([CaseEntry("a", "passed")], run_id="20250302T100000.000Z-000002"))
    view = subprocess.Popen([sys.executable, "-m", "rag_core", "view", "--no-browser", "--runs-dir", str(store.folder)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = view.stdout.readline()
        assert " on http://127.0.0.1:" in line, line + view.stderr.read()
        url = line.split(" on ", 1)[1].strip()
        with urlopen(url + f"{first.stem}.html", timeout=30) as answer:
            assert page_data(answer.read().decode())["run"]["id"] == first.stem
    finally:
        view.send_signal(signal.SIGTERM)
        _, err = view.communicate(timeout=30)
    assert view.returncode == 0
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"rag-core: left out of the history: {bad}: "), err


def page_data(html: str) -> dict:
    return json.loads(html.split('id="rag-core-data">', 1)[1].split("</script>", 1)[0])


def three_records(folder: Path) -> list[Path]:
    store = RunStore(folder)
    return [store.write(a_run([CaseEntry("a", "passed" if day != 2 else "failed", failures=[] if day != 2 else [a_failure()])],
                              run_id=f"2025030{day}T100000.000Z-00000{day}")) for day in (1, 2, 3)]


def test_history_points_link_to_their_runs_reports_written_beside_the_page(tmp_path, capsys):
    from rag_core.cli import main

    first, second, third = three_records(tmp_path / "runs")
    out = tmp_path / "site" / "report.html"
    assert main(["report", "--runs-dir", str(tmp_path / "runs"), "-o", str(out), "--history-pages"]) == 0
    assert "wrote the reports of 2 earlier run(s)" in capsys.readouterr().out
    points = page_data(out.read_text())["history"]["points"]
    assert [p["page"] for p in points] == [f"{first.stem}.html", f"{second.stem}.html", None]  # not this run's own
    linked = page_data((out.parent / f"{second.stem}.html").read_text())
    assert linked["run"]["id"] == second.stem and [p["page"] for p in linked["history"]["points"]] == [
        f"{first.stem}.html", None]
    assert (out.parent / f"{first.stem}.html").is_file() and not (out.parent / f"{third.stem}.html").exists()
    # without --history-pages nothing is written beside it, and no point links to a missing page
    plain = tmp_path / "plain" / "report.html"
    assert main(["report", "--runs-dir", str(tmp_path / "runs"), "-o", str(plain)]) == 0
    assert [p["page"] for p in page_data(plain.read_text())["history"]["points"]] == [None, None, None]
    assert sorted(p.name for p in plain.parent.iterdir()) == ["report.html"]


def test_view_serves_each_history_points_run_and_nothing_else(tmp_path):
    from urllib.error import HTTPError
    from urllib.request import urlopen

    from rag_core.evals.report.html import HistoryPages, report_for
    from rag_core.evals.report.serve import ReportServer

    first, second, _ = three_records(tmp_path / "runs")
    (tmp_path / "secret.json").write_text("{}")
    report = report_for(tmp_path / "runs", linked=True, compare="previous")
    server = ReportServer(report.html, pages=HistoryPages(tmp_path / "runs", compared=True).page)
    try:
        with urlopen(server.url + f"{second.stem}.html", timeout=10) as answer:
            data = page_data(answer.read().decode())
        assert data["run"]["id"] == second.stem and data["base"]["id"] == first.stem  # against the run before it
        with urlopen(server.url + f"{first.stem}.html", timeout=10) as answer:
            assert page_data(answer.read().decode())["base"] is None  # the oldest: nothing before it
        with pytest.raises(HTTPError, match="404"):
            urlopen(server.url + "20250309T100000.000Z-000009.html", timeout=10)
        with urlopen(server.url + "..%2Fsecret.html", timeout=10) as answer:  # no record name: the page itself
            assert page_data(answer.read().decode())["run"]["id"] == report.run.stem
    finally:
        server.close()


def test_init_ignores_the_records_in_an_existing_gitignore_and_its_workflow_uploads_the_report(tmp_path):
    import yaml

    from rag_core.evals.scaffold.project import WORKFLOW_PATH, init_project

    (tmp_path / ".gitignore").write_text("__pycache__/")
    result = init_project(tmp_path)
    assert (tmp_path / ".gitignore").read_text() == "__pycache__/\n.rag-core/\n"
    assert ".rag-core/ to .gitignore" in result.changed
    steps = yaml.safe_load((tmp_path / WORKFLOW_PATH).read_text())["jobs"]["evals"]["steps"]
    report, upload = steps[-2:]
    assert "rag_core report -o rag-core-report.html" in report["run"] and report["if"] == "always()"
    assert upload["uses"].startswith("actions/upload-artifact@") and upload["with"]["path"] == "rag-core-report.html"
    again = tmp_path / "again"
    again.mkdir()
    (again / ".gitignore").write_text(".rag-core\n")
    init_project(again)
    assert (again / ".gitignore").read_text() == ".rag-core\n"  # there already: left as it is
    bare = tmp_path / "bare"
    init_project(bare)
    assert not (bare / ".gitignore").exists()  # the records' folder ignores itself there
