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

from evals.benchmarks.report_screenshots import CHROMIUM, VIEWS, add_retrieval_suite, open_page, regress  # noqa: E402
from rag_core.cli import main  # noqa: E402
from rag_core.evals.runs.schema import CaseEntry, FailureEntry, RunRecord  # noqa: E402
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


@pytest.fixture
def browser():
    _browser_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        handle, page, errors, requests = open_page(playwright)
        yield page, errors, requests
        handle.close()
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
    prompt = page.locator(".failure", has=page.locator("strong", has_text=":system_prompt")).first
    assert prompt.locator("tr.chg td.l").inner_text() == "Be brief."
    assert prompt.locator("tr.chg td.r").inner_text() == "Be very brief."
    assert prompt.locator("tr.chg td.r mark").inner_text() == "very "  # the change within the line
    assert texts(prompt, "pre.diff span.del") == ["-  Be brief."]
    assert texts(prompt, "pre.diff span.add") == ["+  Be very brief."]
    assert prompt.locator("pre.diff span.del").evaluate("e => getComputedStyle(e).backgroundColor") != "rgba(0, 0, 0, 0)"
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
    assert page.locator("#history-charts .chart").first.locator("circle").count() == 3
    assert page.locator("#history tbody tr").count() == 3
    page.screenshot(path=str(screenshots / "7-history.png"), full_page=True)


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
