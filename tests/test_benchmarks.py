"""The benchmark scripts still run (tiny sizes, no warm-up runs; the numbers themselves are measured by hand)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.golden_project import UNUSED_PLUGINS_OPTIONS

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "command",
    [
        ["evals.benchmarks.bench_core", "--runs", "2", "--import-repeats", "1"],
        ["evals.benchmarks.bench_harness", "--runs", "2", "--pytest-runs", "0", "--record", "--server"],
        ["evals.benchmarks.bench_memory_store", "--queries", "3", "--rss-docs", "500"],
        ["evals.benchmarks.bench_case_selection", "--cases", "3", "--runs", "1", "--warm", "0"],
        ["evals.benchmarks.bench_golden_scale", "--cases", "2", "--xdist-cases", "0", "--runs", "1", "--warm", "0"],
        ["evals.benchmarks.bench_golden_scale", "--cases", "0", "--xdist-cases", "2", "--runs", "1", "--warm", "0"],
        ["evals.benchmarks.bench_pytest_recording", "--cases", "2", "--runs", "1", "--warm", "0"],
        ["evals.benchmarks.bench_pytest_recording", "--program", "stream", "--cases", "2", "--runs", "1", "--warm", "0",
         "--phases"],
        ["evals.benchmarks.bench_scale", "--replay", "--sizes", "300", "--queries", "3"],
        ["evals.benchmarks.bench_scale", "--record", "--sizes", "300", "--queries", "3"],
    ],
    ids=["core", "harness", "memory-store", "case-selection", "golden-scale", "golden-scale-xdist", "pytest-recording",
         "pytest-recording-stream", "suite-replay", "cache-record"],
)
def test_benchmark_runs(command, tmp_path):
    # the pytest sessions a benchmark starts load no plugin its projects do not use; and they keep
    # their temporary folders under this test's: an `-n 2` session makes a numbered folder in
    # pytest's temporary root for its workers, and pytest keeps only the newest three there, so a
    # few such sessions deleted this test session's own (a database server's among them)
    env = {**os.environ, "PYTEST_ADDOPTS": UNUSED_PLUGINS_OPTIONS, "PYTEST_DEBUG_TEMPROOT": str(tmp_path)}
    result = subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=300,
                            env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "median" in result.stdout, result.stdout[-2000:]


def test_document_parts_of_longer_texts(tmp_path):
    """``--parts`` counts what a document costs, by part, here of texts twice SciFact's length."""
    command = ["evals.benchmarks.bench_scale", "--parts", "--sizes", "300", "--queries", "3", "--data", str(tmp_path)]
    outputs = {}
    for scale in ("1", "2"):
        result = subprocess.run([sys.executable, "-m", *command, "--text-scale", scale], cwd=ROOT, capture_output=True,
                                text=True, timeout=300)
        assert result.returncode == 0, result.stderr[-2000:]
        rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in result.stdout.splitlines()
                if line.startswith("| ")]
        outputs[scale] = {cells[2]: float(cells[3].replace(",", "")) for cells in rows if cells[1] == "300"}
    assert {"text (UTF-8 bytes objects)", "BM25 postings (float32 score, int32 document)",
            "all but the vector"} <= set(outputs["1"])
    assert (tmp_path / "synthetic-300").is_dir() and (tmp_path / "synthetic-300-x2").is_dir()
    # texts twice as long hold about twice the UTF-8, and the same vectors
    text = "text (UTF-8 bytes objects)"
    assert 1.8 < outputs["2"][text] / outputs["1"][text] < 2.2
    assert outputs["2"]["vector (float32 row, 1/norm)"] == outputs["1"]["vector (float32 row, 1/norm)"]
