"""The screenshots of the report in docs/images/ (run by hand when the page changes, not by pytest).

    python -m evals.benchmarks.report_screenshots [--out docs/images]

Makes the same three runs as tests/test_report_viewer.py in a throwaway project (recorded, green,
then a prompt edit and a retriever change), writes the report of the last one against the one
before, and photographs each view with Debian's chromium driven by playwright. The project, the
edit and the views are defined here once and the test uses them too, so the pictures show what
the test checks.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
# playwright cannot download its own browsers here: Debian's, headless, with nothing in the background
LAUNCH = {"executable_path": str(CHROMIUM),
          "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]}
VIEWPORT = {"width": 1280, "height": 860}

# a judged suite of the project's kitchen corpus with two BM25 retrievers; ``regress`` changes the
# second one, so its numbers (and some queries) get worse between two runs
SUITE = """\
name: mini
dataset: {judged: fixtures/retrieval/kitchen/queries.yaml}
depth: 10
metrics: [ndcg@10, recall@10]
retrievers:
  - {name: bm25, store: memory, search_type: keyword}
  - {name: bm25_flat, store: memory, search_type: keyword, bm25_b: 0.0}
thresholds: {bm25: {ndcg@10: 0.5}}
baseline: fixtures/retrieval/baselines/mini
tolerance: 0.001
"""

# (file name, fragment, what it shows): the views the README and docs/report.md show
VIEWS = [
    ("report-cases.png", "cases", "the cases against the run before: the regressed case first"),
    ("report-case.png", "case/with_markdown", "one case: golden | observed side by side, the diff highlighted"),
    ("report-retrieval.png", "retrieval", "a suite's retrievers: best values marked, deltas, p-values, query changes"),
    ("report-queries.png", "retrieval/mini/bm25_flat", "one retriever's queries, the worst change first"),
    ("report-history.png", "history", "pass rate and gated metrics over the last runs"),
]


def add_retrieval_suite(root: Path) -> None:
    kitchen = root / "fixtures" / "retrieval" / "kitchen"
    kitchen.mkdir(parents=True, exist_ok=True)
    for name in ("corpus.jsonl", "queries.yaml"):
        shutil.copy(ROOT / "fixtures" / "retrieval" / "kitchen" / name, kitchen)
    (root / "fixtures" / "retrieval" / "mini.yaml").write_text(SUITE)
    (root / "evals" / "test_retrieval.py").write_text(
        "def test_retrieval(retrieval_target, retrieval_check):\n    retrieval_check(retrieval_target)\n")


def regress(root: Path) -> None:
    """A prompt edit (one golden case fails) and a retriever change (its gate fails)."""
    case = root / "fixtures" / "goldens" / "with_markdown.yaml"
    case.write_text(case.read_text().replace("Be brief.", "Be very brief."))
    suite = root / "fixtures" / "retrieval" / "mini.yaml"
    suite.write_text(suite.read_text().replace("bm25_b: 0.0", "bm25_b: 0.1"))


def write_project(root: Path) -> None:
    """The throwaway project of tests/golden_project.py, written without pytester."""
    from tests.golden_project import CASES, TOOLS

    (root / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\npythonpath = .\n")
    (root / "fixtures" / "corpora").mkdir(parents=True)
    shutil.copy(ROOT / "fixtures" / "corpora" / "thai_recipes.yaml", root / "fixtures" / "corpora")
    (root / "fixtures" / "goldens").mkdir()
    for name, body in CASES.items():
        (root / "fixtures" / "goldens" / f"{name}.yaml").write_text(textwrap.dedent(body))
    (root / "pantry_tools.py").write_text(TOOLS)
    (root / "evals").mkdir()
    (root / "evals" / "test_goldens.py").write_text(
        "def test_golden_case(golden_case, golden_harness):\n    golden_harness.check(golden_case)\n")
    add_retrieval_suite(root)


def open_page(playwright: Any) -> tuple[Any, Any, list[str], list[str]]:
    """A browser and a page that notes console errors and every request it makes."""
    browser = playwright.chromium.launch(**LAUNCH)
    return (browser, *watched_page(browser))


def watched_page(browser: Any) -> tuple[Any, list[str], list[str]]:
    """A page of ``browser`` in a context of its own (no cookie or storage of another page), that
    notes console errors and every request it makes."""
    page = browser.new_page(viewport=VIEWPORT)
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("request", lambda request: requests.append(request.url))
    return page, errors, requests


def photograph(report: Path, out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as playwright:
        browser, page, errors, requests = open_page(playwright)
        for name, fragment, _ in VIEWS:
            page.goto(f"{report.resolve().as_uri()}#{fragment}")
            page.wait_for_load_state("load")
            page.screenshot(path=str(out / name), full_page=False)
            written.append(out / name)
        browser.close()
    if errors or any(not url.startswith(("file:", "data:")) for url in requests):
        raise SystemExit(f"the page had console errors {errors} or made requests {requests}")
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images", help="folder of the screenshots")
    args = parser.parse_args()
    if not CHROMIUM.exists():
        raise SystemExit("needs Debian's chromium at /usr/bin/chromium: apt-get install -y chromium")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(ROOT)
    with tempfile.TemporaryDirectory(prefix="rag-core-screenshots-") as scratch:
        root = Path(scratch)
        write_project(root)

        def pytest_run(*options: str) -> int:
            return subprocess.run([sys.executable, "-m", "pytest", "-q", "evals", *options], cwd=root, env=env,
                                  capture_output=True, text=True, timeout=600).returncode

        assert pytest_run("--record-mode=once", "--emulator", "--update-goldens", "--update-baselines") == 0
        assert pytest_run() == 0
        regress(root)
        assert pytest_run("--no-strict-cassettes") == 1
        report = root / "report.html"
        done = subprocess.run([sys.executable, "-m", "rag_core", "report", "--compare", "previous", "-o", str(report)],
                              cwd=root, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        for path in photograph(report, args.out):
            print(f"wrote {path}")


if __name__ == "__main__":
    main()
