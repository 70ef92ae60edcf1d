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
        ["evals.benchmarks.bench_scale", "--replay", "--sizes", "300", "--queries", "3"],
        ["evals.benchmarks.bench_scale", "--record", "--sizes", "300", "--queries", "3"],
    ],
    ids=["core", "harness", "memory-store", "case-selection", "golden-scale", "golden-scale-xdist", "pytest-recording",
         "suite-replay", "cache-record"],
)
def test_benchmark_runs(command):
    # the pytest sessions a benchmark starts load no plugin its projects do not use
    env = {**os.environ, "PYTEST_ADDOPTS": UNUSED_PLUGINS_OPTIONS}
    result = subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=300,
                            env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "median" in result.stdout, result.stdout[-2000:]
