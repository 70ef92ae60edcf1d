"""Meta-tests: ``--live --repeat N`` runs each case N times (here against the emulator, which
answers each repeat from the case's ``emulate_repeats``), reports pass rate, latency and tokens,
gates on ``min_pass_rate``, evaluates judges every run, and writes no cassette or golden."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

import bm25s  # noqa: E402,F401  (imported before pytester's in-process runs; see test_harness.py)
import numpy  # noqa: E402,F401
import openai  # noqa: E402,F401
import vcr  # noqa: E402,F401

from tests.golden_project import project, record  # noqa: E402,F401  (project: a fixture)

FLAKY = """
emulate_repeats:
  - emulate: [{tool_calls: [{name: lookup, arguments: {term: pantry}}]}, {text: "Fish sauce and palm sugar."}]
  - emulate: [{tool_calls: [{name: lookup, arguments: {term: pantry}}]}, {text: "Some sauces."}]
  - emulate: [{tool_calls: [{name: lookup, arguments: {term: pantry}}]}, {text: "Palm sugar, mostly."}]
  - emulate: [{tool_calls: [{name: lookup, arguments: {term: pantry}}]}, {text: "Nothing much."}]
  - emulate: [{tool_calls: [{name: lookup, arguments: {term: pantry}}]}, {text: "Palm sugar and fish sauce."}]
min_pass_rate: 0.6
expect:
  output: {icontains: palm sugar}
"""


def _files(project) -> dict[str, bytes]:
    return {str(p.relative_to(project.path)): p.read_bytes()
            for folder in ("cassettes", "fixtures") for p in sorted((project.path / folder).rglob("*")) if p.is_file()}


def _flaky(project, min_pass_rate: str = "0.6") -> None:
    case = project.path / "fixtures" / "goldens" / "with_tool.yaml"
    case.write_text(case.read_text() + FLAKY.replace("min_pass_rate: 0.6", f"min_pass_rate: {min_pass_rate}"))


def test_a_flaky_case_passes_3_of_5_and_the_table_reports_it_without_writing_anything(project):
    _flaky(project)
    record(project)
    before = _files(project)
    result = project.runpytest("evals", "--live", "--repeat", "5", "--emulator", "--golden-report", "live.md")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*rag-core live runs*", "| case | passed | pass rate | min | p50 s | p95 s | tokens/run | gate |",
                                 "| with_markdown | 5/5 | 100% | 100% | * | * | * | pass |",
                                 "| with_tool | 3/5 | 60% | 60% | * | * | * | pass |"])
    assert "| `with_tool` | 3/5 | 60% | 60% |" in (project.path / "live.md").read_text()  # ids as code: no markdown
    assert _files(project) == before  # no cassette, golden or case file changed, none added


def test_below_min_pass_rate_the_case_fails_naming_the_failed_runs(project):
    _flaky(project, "0.8")
    record(project)
    result = project.runpytest("evals", "--live", "--repeat", "5", "--emulator", "-k", "with_tool")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "with_tool: 3 of 5 live runs passed (60%), below min_pass_rate 0.8" in out
    assert "run 2:\nfixtures/goldens/with_tool.yaml:output: {'icontains': 'palm sugar'} does not hold for 'Some sauces.'" in out
    result.stdout.fnmatch_lines(["| with_tool | 3/5 | 60% | 80% | * | * | * | FAIL |"])


def test_judges_run_in_every_repeat(project):
    case = project.path / "fixtures" / "goldens" / "with_markdown.yaml"
    case.write_text(case.read_text() + """
emulate_judge: [{score: 1.0, reason: fine}]
emulate_repeats:
  - {}
  - emulate_judge: [{score: 0.2, reason: It does not say how long to soak.}]
min_pass_rate: 0.5
expect:
  judge: [{metric: rubric, criteria: Says how long to soak the noodles., threshold: 0.5}]
""")
    record(project)
    result = project.runpytest("evals", "--live", "--repeat", "4", "--emulator", "-k", "with_markdown")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["| with_markdown | 2/4 | 50% | 50% | * | * | * | pass |"])


@pytest.mark.parametrize("options, message", [
    (["--repeat", "3"], "--repeat needs --live"),
    (["--live", "--update-goldens"], "--live writes no cassette or golden"),
    (["--live", "--repeat", "0"], "--repeat=0: give at least 1 run"),
])
def test_live_options_that_do_not_go_together_are_usage_errors(project, options, message):
    result = project.runpytest("evals", *options)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()
