"""The report as a person looks at it: Debian's chromium, driven by playwright, opens the HTML from
``file://``, filters to the failures, opens the failing case and reads its diff, compares two runs
and finds the regressed case and query first. The page must log no error and fetch nothing.

Screenshots of each step land in the test's tmp_path (``screenshots/``), printed at the end.
"""

from __future__ import annotations

import importlib.util
import json
import os
import time
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

# pytester's in-process runs forget modules first imported inside them, and extension modules
# (numpy) cannot be imported twice: imported here, before any run (as test_harness.py does)
import bm25s  # noqa: E402,F401
import numpy  # noqa: E402,F401
import openai  # noqa: E402,F401
import vcr  # noqa: E402,F401

from evals.benchmarks.report_screenshots import (CHROMIUM, LAUNCH, VIEWS, add_retrieval_suite, regress,  # noqa: E402
                                                 watched_page)
from rag_core.cli import main  # noqa: E402
from rag_core.evals.runs.schema import (CaseEntry, Cost, FailureEntry, GitState, LiveRepeat, LiveSummary,  # noqa: E402
                                        QueryEntry, RetrieverEntry, RunOptions, RunRecord)
from rag_core.evals.runs.store import RunStore, new_id  # noqa: E402
from tests.golden_project import project  # noqa: E402,F401  (project: a fixture)


def _browser_or_skip() -> None:
    """Skipped where chromium or playwright is missing, except where RAG_CORE_REQUIRE_BROWSER is set
    (.ci/run sets it and installs chromium): there the test must run."""
    missing = None
    if not CHROMIUM.exists():
        missing = f"Debian's chromium is not at {CHROMIUM} (apt-get install -y chromium)"
    elif importlib.util.find_spec("playwright") is None:
        missing = "playwright is not installed (it comes with the dev extra)"
    if missing and os.environ.get("RAG_CORE_REQUIRE_BROWSER"):
        pytest.fail(missing + "; RAG_CORE_REQUIRE_BROWSER is set, so the browser tests may not skip")
    if missing:
        pytest.skip(missing)


@pytest.fixture(scope="module")
def chromium():
    """One chromium for the module's tests; each test's page has a context of its own."""
    _browser_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        handle = playwright.chromium.launch(**LAUNCH)
        yield handle
        handle.close()


@pytest.fixture
def browser(chromium):
    page, errors, requests = watched_page(chromium)
    yield page, errors, requests
    page.context.close()
    assert errors == [], f"the page logged errors: {errors}"
    assert [url for url in requests if not url.startswith(("file:", "data:"))] == [], requests


@pytest.fixture
def screenshots(tmp_path: Path):
    folder = tmp_path / "screenshots"
    folder.mkdir()
    yield folder
    print(f"\nscreenshots: {folder}")


def three_runs(project: pytest.Pytester) -> Path:
    """Recorded, replayed green, then a prompt edit and a retriever change: the runs folder."""
    add_retrieval_suite(project.path)
    project.runpytest("evals", "--record-mode=once", "--emulator", "--update-goldens",
                      "--update-baselines").assert_outcomes(passed=4)
    project.runpytest("evals").assert_outcomes(passed=4)
    regress(project.path)
    project.runpytest("evals", "--no-strict-cassettes").assert_outcomes(passed=2, failed=2)
    runs = project.path / ".rag-core" / "runs"
    assert len(RunStore(runs).paths()) == 3
    return runs


def report(runs: Path, out: Path, *options: str) -> str:
    assert main(["report", "--runs-dir", str(runs), "-o", str(out), *options]) == 0
    return out.resolve().as_uri()


def texts(page, selector: str) -> list[str]:
    return page.locator(selector).all_inner_texts()


def test_a_person_finds_the_failing_case_reads_its_diff_and_finds_what_regressed(project, browser, screenshots):
    from playwright.sync_api import expect  # waits for what a view draws after a hash change

    page, _, _ = browser
    runs = three_runs(project)

    # the last run alone: filter to the failures, open the case, read the highlighted diff
    page.goto(report(runs, project.path / "run.html"))
    assert page.locator("#cases tbody tr").count() == 2
    page.click("button[data-filter=failed]")
    assert page.locator("#cases tbody tr").evaluate_all("rows => rows.map(r => r.dataset.case)") == ["with_markdown"]
    page.screenshot(path=str(screenshots / "1-failed-filter.png"))
    page.click("#cases tbody tr[data-case=with_markdown] a")
    assert page.locator("#case-title").inner_text().startswith("with_markdown")
    # the prompt edit once, where it first shows up (the system prompt), side by side
    assert page.locator(".detail > .failure").count() == 1
    prompt = page.locator(".detail > .failure").first.locator(":scope > .body")
    assert prompt.locator(":scope > table.sbs tr.chg td.l").inner_text() == "Be brief."
    assert prompt.locator(":scope > table.sbs tr.chg td.r").inner_text() == "Be very brief."
    assert prompt.locator(":scope > table.sbs tr.chg td.r mark").inner_text() == "very "  # the change within the line
    unified = prompt.locator(":scope > details", has=page.locator("pre.diff"))
    assert unified.get_attribute("open") is None  # the side by side shows it already: the terminal's diff on a click
    unified.locator(":scope > summary").click()
    assert texts(unified, "pre.diff span.del") == ["-  Be brief."]
    assert texts(unified, "pre.diff span.add") == ["+  Be very brief."]
    assert unified.locator("pre.diff span.del").evaluate("e => getComputedStyle(e).backgroundColor") != "rgba(0, 0, 0, 0)"
    # the other places the same change shows up in are named, and each opens in place
    same = prompt.locator(":scope > .same-change")
    assert same.locator(":scope > .note").inner_text() == (
        "the same change shows up in fixtures/goldens/with_markdown.golden.yaml: requests; "
        "cassettes/with_markdown.yaml: request[0], request[1]")
    others = same.locator(":scope > details.same")
    assert texts(others, ":scope > summary") == ["fixtures/goldens/with_markdown.golden.yaml:requests",
                                                 "cassettes/with_markdown.yaml:request[0]",
                                                 "cassettes/with_markdown.yaml:request[1]"]
    assert not others.nth(1).locator("table.sbs").is_visible()
    others.nth(1).locator(":scope > summary").click()
    assert others.nth(1).locator("tr.chg td.r").first.inner_text().strip() == "Be very brief."
    page.screenshot(path=str(screenshots / "2-case-diff.png"), full_page=True)

    # against the run before: the regressed case comes first, then the worst query of the worse retriever
    page.goto(report(runs, project.path / "compare.html", "--compare", "previous"))
    first = page.locator("#cases tbody tr").first
    assert first.get_attribute("data-case") == "with_markdown" and "regressed" in first.inner_text()
    assert page.locator("[data-card=changed] .n").inner_text() == "1"
    page.screenshot(path=str(screenshots / "3-compare.png"))
    page.click("#tab-retrieval")
    flat = page.locator("tr.retriever-row[data-retriever=bm25_flat]")
    assert "FAIL" in flat.inner_text() and "was pass" in flat.inner_text()
    assert page.locator("tr.retriever-row[data-retriever=bm25] .best").count() >= 1  # best per column marked
    page.screenshot(path=str(screenshots / "4-retrieval.png"), full_page=True)
    flat.locator("a").click()
    worst = worst_query(runs, "bm25_flat")
    first_query = page.locator("#queries tbody tr").first
    assert first_query.get_attribute("data-query") == worst
    assert first_query.locator("td").last.inner_text().startswith("−")
    page.screenshot(path=str(screenshots / "5-queries.png"))
    first_query.locator("a").click()
    assert page.locator("#query-title").inner_text() == f"query {worst}"
    assert page.locator("table.judged tbody tr").count() >= 1 and page.locator("ol.ranking li").count() == 10
    page.screenshot(path=str(screenshots / "6-query.png"), full_page=True)

    page.click("#tab-history")
    # the pass rate of full replays only: the recording (every golden new) is listed, not drawn
    # (the view is drawn when the tab's hash change arrives: wait for it, a count does not)
    expect(page.locator("#history-charts .chart").first.locator("circle")).to_have_count(2)
    assert texts(page, "#history tbody td.kind") == ["full replay", "full replay", "recording"]  # newest first
    about = page.locator("#history-about").inner_text()
    assert "the table lists the newest first" in about and "drawn for full replays only (2 of 3)" in about
    assert "(this run)" in page.locator("#history tbody tr").first.inner_text()
    page.screenshot(path=str(screenshots / "7-history.png"), full_page=True)


def test_a_link_opens_a_case_a_bar_shows_its_query_and_a_history_point_opens_its_run(project, browser, screenshots):
    page, _, _ = browser
    runs = three_runs(project)
    first, _, last = RunStore(runs).paths()
    site = project.path / "site"
    linked = report(runs, site / "report.html", "--compare", "previous", "--history-pages")

    # what the markdown job summary links: the report opened at one case
    page.goto(linked + "#case/with_markdown")
    assert page.locator("#case-title").inner_text().startswith("with_markdown")
    assert page.locator(".failure").count() >= 1

    # beside recall@k, each query's change since BASE: hovering a bar shows the query
    page.click("#tab-retrieval")
    worst = worst_query(runs, "bm25_flat")
    text = query_text(last, "bm25_flat", worst)
    chart = page.locator(".change-chart[data-retriever=bm25_flat]")
    assert "worse" in chart.locator(".label").inner_text()
    assert chart.locator("g.qbar").first.get_attribute("data-query") == worst  # worst first
    tip = page.locator("#tip")
    assert not tip.is_visible()
    chart.locator(f"g.qbar[data-query='{worst}']").hover()
    assert tip.is_visible() and text and text in tip.inner_text() and f"query {worst}" in tip.inner_text()
    page.screenshot(path=str(screenshots / "8-query-changes.png"))
    page.mouse.move(1, 1)
    assert not tip.is_visible()
    chart.locator(f"g.qbar[data-query='{worst}']").click()
    assert page.locator("#query-title").inner_text() == f"query {worst}"

    # history: each earlier point opens that run's report, written beside this one
    page.click("#tab-history")
    page.locator("#history tbody a.run-link").first.wait_for()  # the tab is drawn after the click
    assert page.locator("#history tbody a.run-link").count() == 2  # this run is the page itself
    # a metric's chart draws every run (the pass rate's, full replays only: not the first, a recording)
    page.locator("#history-charts .chart").nth(1).locator("a.run-link circle").first.click()
    page.wait_for_url(f"**/{first.stem}.html")
    assert page.locator("#title").inner_text() == f"rag-core run {first.stem}"


def query_text(record: Path, retriever: str, query: str) -> str:
    data = json.loads(record.read_text())
    entry = next(r for r in data["retrieval"] if r["retriever"] == retriever)
    return next(q.get("text", "") for q in entry["queries"] if q["id"] == query)


def test_a_live_cases_runs_show_in_its_detail(tmp_path, browser):
    """--live --repeat N: each run with its verdict, time, tokens, retries, and its failures."""
    page, _, _ = browser
    failure = FailureEntry("output", "case", "fixtures/goldens/flaky.yaml", "output", has_values=True,
                           message="output: {'icontains': 'palm sugar'} does not hold for 'Some sauces.'",
                           golden={"icontains": "palm sugar"}, observed="Some sauces.",
                           diff="--- expected\n+++ observed\n-icontains: palm sugar\n+Some sauces.\n")
    repeats = [LiveRepeat(n, n != 1, 1.0 + n, 100 + n, n % 2, [failure] if n == 1 else []) for n in range(3)]
    live = LiveSummary(3, 2, 2 / 3, 0.6, 2.0, 2.9, 101, True, tokens_total=303, repeats=repeats,
                       cost=Cost(0.0123, ("house-model-7b",)))
    runs = tmp_path / "runs"
    RunStore(runs).write(RunRecord(id=new_id(), started="2025-03-01T10:00:00Z", options=RunOptions(live=True, repeat=3),
                                   cases=[CaseEntry("flaky", "passed", 6.0, 101, live=live)]))
    page.goto(report(runs, tmp_path / "live.html") + "#case/flaky")
    assert "2 of 3 runs passed" in page.locator(".live-summary").inner_text()
    assert "303 in all" in page.locator(".live-summary").inner_text()
    assert "$0.0123 at list prices (not priced: house-model-7b)" in page.locator(".live-summary").inner_text()
    assert texts(page, "#repeats tbody tr td:nth-child(2)") == ["passed", "failed", "passed"]
    assert texts(page, "#repeats tbody tr:nth-child(2) td") == ["run 2", "failed", "2.00", "101", "1", "output"]
    card = page.locator("details.repeat[data-repeat='1'] .failure")
    assert card.count() == 1 and "does not hold for 'Some sauces.'" in card.inner_text()
    assert card.locator("tr.chg td.r").inner_text() == "Some sauces."


def worst_query(runs: Path, retriever: str) -> str:
    """From the records themselves: the query whose primary metric fell most between the two last runs."""
    before, now = [json.loads(p.read_text()) for p in RunStore(runs).paths()[-2:]]

    def scores(data: dict) -> dict[str, float]:
        entry = next(r for r in data["retrieval"] if r["retriever"] == retriever)
        return {q["id"]: q["metrics"]["ndcg@10"] for q in entry["queries"]}

    old, new = scores(before), scores(now)
    return min(new, key=lambda q: (new[q] - old[q], q))


def test_ten_thousand_cases_stay_usable(tmp_path, browser, screenshots):
    """Paged and filtered, the page of a 10,000-case run opens and answers at once."""
    page, _, _ = browser
    failure = FailureEntry("snapshot", "golden", "fixtures/goldens/c.golden.yaml", "system_prompt", has_values=True,
                           golden="Be brief.\nAnswer in English.", observed="Be very brief.\nAnswer in English.",
                           diff="--- a\n+++ b\n@@ -1,2 +1,2 @@\n-Be brief.\n+Be very brief.\n Answer in English.\n")
    cases = [CaseEntry(f"case_{n:05d}", "failed" if n % 100 == 7 else "passed", 0.01, 500,
                       failures=[failure] if n % 100 == 7 else []) for n in range(10_000)]
    runs = tmp_path / "runs"
    RunStore(runs).write(RunRecord(id=new_id(), started="2025-03-01T10:00:00Z", cases=cases))
    started = time.perf_counter()
    page.goto(report(runs, tmp_path / "big.html"))
    assert page.locator(".pager .range").first.inner_text() == "1–50 of 10000 (page 1 of 200)"
    opened = time.perf_counter() - started
    page.click("button[data-filter=failed]")
    assert page.locator(".pager .range").first.inner_text() == "1–50 of 100 (page 1 of 2)"
    page.fill("input[type=search]", "case_0990")
    assert page.locator("#cases tbody tr").evaluate_all("rows => rows.map(r => r.dataset.case)") == ["case_09907"]
    page.screenshot(path=str(screenshots / "ten-thousand.png"))
    assert opened < 10, f"the page took {opened:.1f} s to open"


def test_the_views_the_docs_show_exist():
    """docs/report.md shows the screenshots evals/benchmarks/report_screenshots.py makes."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "report.md").read_text(encoding="utf-8")
    for name, _, _ in VIEWS:
        assert f"images/{name}" in page and (Path(__file__).resolve().parents[1] / "docs" / "images" / name).is_file()


def write_runs(folder: Path, *records: RunRecord) -> Path:
    store = RunStore(folder)
    for record in records:
        store.write(record)
    return folder


def a_failure(where: str = "fixtures/goldens/a.golden.yaml", field: str = "system_prompt", **values) -> FailureEntry:
    return FailureEntry("snapshot", "golden", where, field, has_values=True, **{
        "golden": "Be brief.", "observed": "Be very brief.", "diff": "-Be brief.\n+Be very brief.\n", **values})


def test_ids_named_like_an_objects_methods_open_their_own_case_and_query(tmp_path, browser):
    """DATA.details["toString"] found Object.prototype.toString for a case with no details (it
    passed): its view was blank, as was a query id no retriever has."""
    page, _, _ = browser
    names = ["toString", "constructor", "__proto__", "hasOwnProperty", "valueOf"]
    queries = [QueryEntry(name, f"text of {name}", {"ndcg@10": 0.5}, {"d1": 1}, [("d1", 1)]) for name in names[:2]]
    retriever = RetrieverEntry("mini", "bm25", metrics={"ndcg@10": 0.5}, queries=queries)
    cases = [CaseEntry(name, "passed") for name in names] + [
        CaseEntry(f"{name}.failing", "failed", failures=[a_failure(message=f"{name} failed")]) for name in names]
    runs = write_runs(tmp_path / "runs", RunRecord(id=new_id(), started="2025-03-01T10:00:00Z", retrieval=[retriever],
                                                   cases=cases))
    url = report(runs, tmp_path / "r.html")
    for name in names:
        page.goto(f"{url}#case/{name}")
        assert page.locator("#case-title").inner_text().startswith(name)
        assert "Every check of this case passed." in page.locator("#view").inner_text()
        page.goto(f"{url}#case/{name}.failing")
        assert page.locator(".failure").count() == 1 and f"{name} failed" in page.locator(".failure .message").inner_text()
        page.goto(f"{url}#query/mini/bm25/{name}")
        if name in names[:2]:
            assert page.locator("#query-title").inner_text() == f"query {name}"
            assert page.locator(".query-text").inner_text() == f"text of {name}"
        else:
            assert page.locator("#view").inner_text() == f"No query {name} for mini/bm25."


def test_a_compared_page_names_the_earlier_run_in_words_and_keeps_timing_noise_uncoloured(tmp_path, browser):
    """After --compare previous the page said BASE (the command line's word), coloured an unchanged
    replay's +0.4 s as a regression, said "not in git" of a run outside any repository and offered
    a Retrieval tab in a project without suites."""
    page, _, _ = browser
    cases = [CaseEntry("a", "passed"), CaseEntry("b", "failed", failures=[a_failure()])]
    runs = write_runs(tmp_path / "runs",
                      RunRecord(id="20250301T100000.000Z-000001", started="2025-03-01T10:00:00Z", seconds=3.1,
                                cases=[CaseEntry("a", "passed"), CaseEntry("b", "passed")]),
                      RunRecord(id="20250302T100000.000Z-000002", started="2025-03-02T10:00:00Z", seconds=3.5, cases=cases))
    page.goto(report(runs, tmp_path / "r.html", "--compare", "previous"))
    assert "BASE" not in page.locator("body").inner_text()
    assert "changed since the previous run" in page.locator("[data-card=changed]").inner_text()
    assert page.locator("#cases thead").inner_text().split("\t")[2].strip() == "in the previous run"
    seconds = page.locator("[data-card=seconds] .label span")
    assert seconds.inner_text() == " (+0.4, noise)" and seconds.get_attribute("class") == "muted"
    assert "commit none recorded (not run in a git repository, or without git)" in page.locator("#meta").inner_text()
    assert not page.locator("#tab-retrieval").is_visible() and page.locator("#tab-history").is_visible()
    page.goto(page.url.split("#")[0] + "#case/b")
    assert "in the previous run: passed" in page.locator("#view").inner_text()

    slower = write_runs(tmp_path / "slower",
                        RunRecord(id="20250301T100000.000Z-000001", started="2025-03-01T10:00:00Z", seconds=3.1,
                                  cases=cases, git=GitState("0123456789abcdef", False)),
                        RunRecord(id="20250302T100000.000Z-000002", started="2025-03-02T10:00:00Z", seconds=30.0,
                                  cases=cases, git=GitState("0123456789abcdef", False)))
    page.goto(report(slower, tmp_path / "slower.html", "--compare", "20250301"))
    seconds = page.locator("[data-card=seconds] .label span")
    assert seconds.inner_text() == " (+26.9)" and seconds.get_attribute("class") == "down"
    assert "changed since the earlier run" in page.locator("[data-card=changed]").inner_text()


def test_folded_unchanged_lines_open_in_place(tmp_path, browser):
    page, _, _ = browser
    golden = "\n".join(["Be brief."] + [f"line {n}" for n in range(20)])
    observed = "\n".join(["Be very brief."] + [f"line {n}" for n in range(20)])
    runs = write_runs(tmp_path / "runs", RunRecord(id=new_id(), started="2025-03-01T10:00:00Z", cases=[
        CaseEntry("a", "failed", failures=[a_failure(golden=golden, observed=observed)])]))
    page.goto(report(runs, tmp_path / "r.html") + "#case/a")
    table = page.locator("table.sbs")
    assert table.locator("tbody tr").count() == 5  # the change, 3 lines of context, a fold
    fold = table.locator("button.unfold")
    assert fold.inner_text() == "⋯ 17 unchanged lines (show) ⋯"
    fold.click()
    assert table.locator("tbody tr").count() == 21 and table.locator("tr.fold").count() == 0
    assert texts(table, "tbody tr:last-child td") == ["line 19", "line 19"]


def test_at_420_pixels_a_failures_heading_stays_inside_its_box(tmp_path, browser):
    page, _, _ = browser
    page.set_viewport_size({"width": 420, "height": 800})
    failure = a_failure(where="fixtures/goldens/agentic_rag_with_a_long_name.stream.golden.yaml",
                        field="requests[0].body.input[0].content[0].text")
    runs = write_runs(tmp_path / "runs", RunRecord(id=new_id(), started="2025-03-01T10:00:00Z", cases=[
        CaseEntry("agentic_rag_with_a_long_name.stream", "failed", failures=[failure])]))
    page.goto(report(runs, tmp_path / "r.html") + "#case/agentic_rag_with_a_long_name.stream")
    overflowing = page.evaluate("""() => [...document.querySelectorAll('.failure > .head, #case-title, #meta, .failure .message')]
        .filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.className || e.id)""")
    assert overflowing == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 420
