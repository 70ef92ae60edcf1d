"""The markdown summary of a run (report/markdown.py: ``--golden-report``, ``rag-core merge --summary``)
and the merge of a run's CI shards (runs/merge.py, ``rag-core merge``): what a CI job summary shows,
that it never shows a credential, and that only the shards of one run merge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from rag_core.cli import main
from rag_core.evals.credentials import detector
from rag_core.evals.report import markdown
from rag_core.evals.report.markdown import Links, summary
from rag_core.evals.runs.schema import (CaseEntry, FailureEntry, GitState, LateAttempt, QueryEntry, RetrieverEntry,
                                        RunOptions, RunRecord)
from rag_core.evals.runs.store import RunStore, load

pytest_plugins = ["pytester"]

# pytester's in-process runs forget modules first imported inside them, and extension modules
# (numpy) cannot be imported twice: imported here, before any run (as test_harness.py does)
import bm25s  # noqa: E402,F401
import numpy  # noqa: E402,F401
import openai  # noqa: E402,F401
import vcr  # noqa: E402,F401

from tests.golden_project import project, record  # noqa: E402,F401  (project: a fixture)

KEY = "sk-proj-" + "H7q" * 14  # the shape of an OpenAI project key, not a key


def a_failure(diff: str = "--- a\n+++ b\n@@ -1 +1 @@\n-Be brief.\n+Be very brief.\n", **changes) -> FailureEntry:
    fields = dict(check="snapshot", source="golden", where="fixtures/goldens/a.golden.yaml", field="system_prompt",
                  has_values=True, golden="Be brief.", observed="Be very brief.", diff=diff)
    return FailureEntry(**{**fields, **changes})


def a_record(cases: list[CaseEntry], commit: str = "0123456789abcdef", retrieval: list[RetrieverEntry] | None = None,
             started: str = "2025-03-01T10:00:00Z", seconds: float = 3.0, exit_status: int = 0,
             options: RunOptions | None = None) -> RunRecord:
    from rag_core.evals.runs.store import new_id

    return RunRecord(id=new_id(), started=started, seconds=seconds, exit_status=exit_status,
                     git=GitState(commit, dirty=False), options=options or RunOptions(args=["evals"]),
                     cases=cases, retrieval=retrieval or [])


def a_retriever(name: str) -> RetrieverEntry:
    return RetrieverEntry("mini", name, metrics={"ndcg@10": 0.5}, queries=[QueryEntry("q1", "pad thai", {"ndcg@10": 0.5})])


# ------------------------------------------------------------------ a diff's mark hides no credential


@pytest.mark.parametrize("text", [
    f"--- a\n+++ b\n@@ -1 +1 @@\n-{KEY}\n+Soak the noodles.\n",  # a removed line: "-" glued to the key
    f"--- a\n+++ b\n@@ -1 +1 @@\n-Soak the noodles.\n+{KEY}\n",
    f"-{KEY}",
    json.dumps({"diff": f"@@ -1 +1 @@\n-{KEY}\n"}),  # the diff inside a record's JSON text
    "-https://chef:s3cret-pa55@pantry.example/",
])
def test_the_detector_reads_a_diff_line_whatever_mark_opens_it(text):
    assert detector().find(text), text


@pytest.mark.parametrize("text", [f"x-{KEY}", f"notes\nrisk-{KEY[3:]}", f"a-{KEY}\n"])
def test_inside_a_run_of_token_characters_a_dash_still_starts_nothing(text):
    """Only a mark opening a line is read as a boundary: a "-" inside a word keeps its meaning."""
    assert detector().find(text) == []


def test_a_failing_case_whose_diff_holds_a_key_has_it_withheld_from_the_markdown_summary(project):
    """The old summary wrote pytest's report of the case, screened as a whole: a golden value that is a
    key shows in the diff as "-sk-proj-…", which the detector did not read as a key, so it was written."""
    record(project)
    golden_path = project.path / "fixtures" / "goldens" / "with_markdown.golden.yaml"
    golden = yaml.safe_load(golden_path.read_text())
    golden["system_prompt"] = KEY  # one line: its YAML opens the line, so the diff's "-" is glued to it
    golden_path.write_text(yaml.safe_dump(golden, sort_keys=False, width=1000))
    result = project.runpytest("evals", "--golden-report=report.md", "--runs-dir=runs")
    result.assert_outcomes(passed=1, failed=1)
    assert f"-{KEY}" in result.stdout.str()  # the terminal shows the diff: the key is on a removed line
    report = (project.path / "report.md").read_text()
    assert KEY not in report and "(withheld: it looks like a credential: an OpenAI-style key" in report
    assert "#### `with_markdown`" in report  # the rest of the case is there
    assert KEY not in RunStore(project.path / "runs").paths()[-1].read_text()


# ------------------------------------------------------------------ the summary


def test_each_failing_case_has_a_heading_an_anchor_its_diff_and_a_link_into_the_report():
    cases = [CaseEntry("ok", "passed", tokens=10), CaseEntry("agentic_rag.sync", "failed", tokens=5,
                                                             failures=[a_failure(fix="pytest evals/ --update-goldens")]),
             CaseEntry("new_one", "new", recorded=True), CaseEntry("broken", "failed", reason="not valid YAML")]
    text = summary(cases, Links())
    assert "| 4 | 2 | 1 | 0 | 1 | 0 | 15 |" in text
    assert "| [`agentic_rag.sync`](#rag-core-case-agentic_rag-sync) | `snapshot system_prompt` | " \
           "[open](.rag-core/report.html#case/agentic_rag.sync) |" in text
    section = text.split('<a id="rag-core-case-agentic_rag-sync"></a>', 1)[1].split("<a id=", 1)[0]
    assert "#### `agentic_rag.sync`" in section
    assert "- `snapshot` `fixtures/goldens/a.golden.yaml:system_prompt` (fix: `pytest evals/ --update-goldens`)" in section
    assert "[open this case](.rag-core/report.html#case/agentic_rag.sync)" in section
    assert "<details><summary>diff</summary>" in section and "```diff\n--- a\n+++ b" in section
    assert "-Be brief.\n+Be very brief." in section
    assert "<details><summary>what pytest reported</summary>" in text and "not valid YAML" in text
    assert text.count("<details><summary>") == 2 and "**New goldens (to review):** `new_one`" in text
    assert "actions/runs" not in text  # not on GitHub: no run to link


def test_on_github_the_summary_links_the_run_and_names_the_report_in_its_artifacts():
    env = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "chef/pantry", "GITHUB_RUN_ID": "42"}
    links = Links.from_environment(env)
    assert links.run == "https://github.com/chef/pantry/actions/runs/42"
    text = summary([CaseEntry("a", "failed", failures=[a_failure()])], links)
    assert "[the CI run and its artifacts](https://github.com/chef/pantry/actions/runs/42#artifacts)" in text
    # a relative link would resolve against github.com: the report's place is named, not linked
    assert "`rag-core-report.html#case/a` in the run's artifacts" in text and "](rag-core-report.html" not in text
    published = Links.from_environment({**env, "RAG_CORE_REPORT_URL": "https://ci.example/42/report.html"})
    assert "[open this case](https://ci.example/42/report.html#case/a)" in summary(
        [CaseEntry("a", "failed", failures=[a_failure()])], published)
    assert Links.from_environment({"GITHUB_RUN_ID": "42"}).run is None  # only when all three are set


def test_a_diff_cannot_close_its_fence_and_a_message_opens_no_element():
    diff = "--- a\n+++ b\n-````\n+```` x\n"
    text = summary([CaseEntry("a", "failed", failures=[a_failure(diff=diff, message="<details> opened")])], Links())
    assert "`````diff\n" + diff.rstrip() + "\n`````" in text
    assert "`<details> opened`" in text


# a model's answer that a markdown reader would make an image (fetched by every reader of the job
# summary: a tracking pixel), links, an element and a bare address
INJECTED = ("Sure! ![](https://tracker.example/pixel.png?run=1) see [the docs](https://evil.example/a) "
            "<img src=https://tracker.example/img.png> www.evil.example/b **bold** | a bar")


def _rendered(text: str) -> str:
    """The summary as a CommonMark reader with GFM's tables renders it."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(text)


def _outside_code(html: str) -> str:
    import re

    return re.sub(r"<code[^>]*>.*?</code>", "", html, flags=re.S)


def test_model_output_in_the_summary_is_no_image_no_link_and_no_element():
    """The summary quoted a failure's message as markdown, escaping only "<" and "&": an answer's
    ``![](…)`` showed as an image in the CI summary and ``[…](…)`` as a link."""
    failure = a_failure(check="expect", field="output", message=f"output does not contain 'tamarind': {INJECTED!r}",
                        diff=f"--- a\n+++ b\n-tamarind\n+{INJECTED}\n")
    cases = [CaseEntry("with_output", "failed", failures=[failure]),
             CaseEntry("broken", "failed", reason=f"```\n{INJECTED}\n``` ````")]
    gate = RetrieverEntry("mini", "bm25", gate="FAIL", gate_failures=[f"query {INJECTED}"], metrics={"ndcg@10": 0.4})
    html = _rendered(summary(cases, Links(), retrieval=[gate]))
    outside = _outside_code(html)
    assert "<img" not in html and "tracker.example" not in outside and "evil.example" not in outside
    assert "<strong>bold" not in html
    assert "evil.example" in html and "tracker.example" in html  # quoted, as code


def test_a_case_id_in_the_live_table_is_code(project):
    record(project)
    result = project.runpytest("evals", "--live", "--emulator", "--golden-report", "live.md", "-k", "with_tool")
    result.assert_outcomes(passed=1, deselected=1)
    assert "| `with_tool` | 1/1 |" in (project.path / "live.md").read_text()


def test_the_golden_report_is_added_after_what_the_job_summary_holds(project):
    """$GITHUB_STEP_SUMMARY is one file for all the commands of a step: --golden-report replaced
    what an earlier command had written there."""
    record(project)
    report = project.path / "summary.md"
    report.write_text("## Lint\n\nall clean")  # an earlier command's, without a final newline
    project.runpytest("evals", f"--golden-report={report}").assert_outcomes(passed=2)
    project.runpytest("evals", f"--golden-report={report}").assert_outcomes(passed=2)
    text = report.read_text()
    assert text.startswith("## Lint\n\nall clean\n\n## rag-core golden cases\n")
    assert text.count("## rag-core golden cases") == 2


def test_merge_adds_its_summary_after_what_the_file_holds(tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_RUN_ID", raising=False)
    one = write(tmp_path / "shards", "one.json", a_record([CaseEntry("a", "passed", 1.0, 10)]))
    summary_file = tmp_path / "summary.md"
    summary_file.write_text("## pytest evals/ (shard 1)\n")
    assert main(["merge", str(one), "--runs-dir", str(tmp_path / "runs"), "--summary", str(summary_file)]) == 0
    assert summary_file.read_text().startswith("## pytest evals/ (shard 1)\n\n## rag-core golden cases\n")


def test_a_summary_added_through_a_link_is_added_to_the_file_it_names(tmp_path):
    target = tmp_path / "step_summary"
    target.write_text("## earlier\n")
    link = tmp_path / "summary.md"
    link.symlink_to(target)
    markdown.write(link, [CaseEntry("a", "passed")], Links())
    assert link.is_symlink() and target.read_text().startswith("## earlier\n\n## rag-core golden cases")


def test_a_run_failing_everywhere_keeps_its_summary_well_under_a_job_summarys_mib():
    big = "--- a\n+++ b\n" + "".join(f"-line {n} {'x' * 60}\n+line {n} {'y' * 60}\n" for n in range(400))
    cases = [CaseEntry(f"case_{n:05d}", "failed", failures=[a_failure(diff=big)]) for n in range(3000)]
    text = summary(cases, Links())
    assert len(text.encode()) < 512 * 1024
    assert text.count("#### `case_") == markdown.CASE_LIMIT
    assert f"… and {3000 - markdown.CASE_LIMIT} more failing cases" in text
    assert "(cut: " in text  # each diff is cut to its bound
    assert "<details><summary>diff left out</summary>" in text  # past the budget, the report has it


def test_retrieval_gates_are_listed_with_their_messages():
    failing = RetrieverEntry("mini", "bm25_flat", gate="FAIL", gate_failures=["ndcg@10 0.41 < 0.5 | threshold"],
                             metrics={"ndcg@10": 0.41})
    text = summary([], Links(), retrieval=[a_retriever("bm25"), failing])
    assert "| `mini/bm25` | `pass` | `ndcg@10` 0.5000 | – |" in text
    assert "| `mini/bm25_flat` | `FAIL` | `ndcg@10` 0.4100 | `ndcg@10 0.41 < 0.5 \\| threshold` |" in text


# ------------------------------------------------------------------ merging shards


def write(folder: Path, name: str, record: RunRecord) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(record.to_json()))
    return path


def test_the_shards_of_a_run_merge_into_one_record_the_report_and_the_summary_read(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GITHUB_RUN_ID", raising=False)
    one = write(tmp_path / "shards", "one.json", a_record(
        [CaseEntry("a", "passed", 1.0, 10), CaseEntry("b", "failed", 2.0, 20, failures=[a_failure()])],
        retrieval=[a_retriever("bm25")], started="2025-03-01T10:00:05Z", seconds=30.0, exit_status=1))
    second = a_record([CaseEntry("c", "new", 0.5, 5, recorded=True)], retrieval=[a_retriever("dense")],
                      started="2025-03-01T10:00:01Z", seconds=42.0, exit_status=0)
    second.late = [LateAttempt("c", "POST https://api.openai.com/v1/responses by httpx._client")]
    two = write(tmp_path / "shards", "two.json", second)
    runs = tmp_path / "runs"
    assert main(["merge", str(one), str(two), "--runs-dir", str(runs), "--summary", str(tmp_path / "summary.md")]) == 0
    out = capsys.readouterr().out
    assert "3 cases (1 failed), 2 retrievers, from 2 shard records" in out
    merged = load(RunStore(runs).newest())
    assert [c.id for c in merged.cases] == ["a", "b", "c"] and [r.retriever for r in merged.retrieval] == ["bm25", "dense"]
    assert merged.started == "2025-03-01T10:00:01Z" and merged.seconds == 42.0 and merged.exit_status == 1
    assert merged.git == GitState("0123456789abcdef", False) and merged.cases[1].failures == [a_failure()]
    assert merged.notes[-1] == f"merged from 2 shard records: {one}, {two}"
    assert merged.late == second.late
    text = (tmp_path / "summary.md").read_text()
    assert "| 3 | 1 | 1 | 0 | 1 | 0 | 35 |" in text and "#### `b`" in text and "| `mini/dense` | `pass` |" in text
    assert main(["report", "--runs-dir", str(runs), "-o", str(tmp_path / "report.html")]) == 0
    data = json.loads((tmp_path / "report.html").read_text().split('id="rag-core-data">', 1)[1].split("</script>")[0])
    assert [c["id"] for c in data["cases"]] == ["a", "b", "c"] and data["summary"]["now"]["failed"] == 1


@pytest.mark.parametrize(("second", "message"), [
    (a_record([CaseEntry("a", "failed")]), "case a is in two shard records, {one} and {two}"),
    (a_record([CaseEntry("z", "passed")], retrieval=[a_retriever("bm25")]),
     "retriever mini/bm25 is in two shard records, {one} and {two}"),
    (a_record([CaseEntry("z", "passed")], commit="fedcba9876543210"),
     "made from different commits ({one} at 0123456789ab, {two} at fedcba987654)"),
    (a_record([CaseEntry("z", "passed")], options=RunOptions(live=True, repeat=5)),
     "made with different options (live: False in {one}, True in {two}; repeat: 1 in {one}, 5 in {two})"),
])
def test_shards_of_different_runs_are_refused_naming_the_files(tmp_path, capsys, second, message):
    one = write(tmp_path, "one.json", a_record([CaseEntry("a", "passed")], retrieval=[a_retriever("bm25")]))
    two = write(tmp_path, "two.json", second)
    assert main(["merge", str(one), str(two), "--runs-dir", str(tmp_path / "runs")]) == 2
    assert message.format(one=one, two=two) in capsys.readouterr().err
    assert RunStore(tmp_path / "runs").paths() == []  # nothing written


def test_a_shard_given_twice_or_no_record_is_refused(tmp_path, capsys):
    one = write(tmp_path, "one.json", a_record([CaseEntry("a", "passed")]))
    assert main(["merge", str(one), str(tmp_path / "." / "one.json"), "--runs-dir", str(tmp_path / "runs")]) == 2
    assert "given twice" in capsys.readouterr().err
    (tmp_path / "junk.json").write_text("[]")
    assert main(["merge", str(one), str(tmp_path / "junk.json"), "--runs-dir", str(tmp_path / "runs")]) == 2
    assert "junk.json: not a rag-core run record" in capsys.readouterr().err


def test_an_empty_shard_does_not_make_the_run_a_failure():
    from rag_core.evals.runs.merge import Shard, merge

    merged = merge([Shard("a", a_record([CaseEntry("a", "passed")], exit_status=0)),
                    Shard("b", a_record([], exit_status=5))])
    assert merged.exit_status == 0
    assert merge([Shard("a", a_record([], exit_status=5))]).exit_status == 5
