"""Meta-tests: hand-written checks of what a case retrieved, spent and kept stable (no model needed)."""

from __future__ import annotations

import textwrap

import pytest

pytest_plugins = ["pytester"]

import bm25s  # noqa: E402,F401  (imported before pytester's in-process runs; see test_harness.py)
import numpy  # noqa: E402,F401
import openai  # noqa: E402,F401
import vcr  # noqa: E402,F401

from tests.golden_project import project, record  # noqa: E402,F401  (project: a fixture)

# an agent whose clock moves on at every reading, as a real one does between rounds
TICKING = '''
from datetime import datetime, timedelta

from rag_core import Agent


def ticking_agent(model):
    readings = iter(range(1000))
    return Agent(model=model, add_datetime_to_context=True, tools=[],
                 clock=lambda: datetime(2026, 1, 15, 9, 30) + timedelta(minutes=next(readings)))
'''


def _add_expect(project, case: str, expect: str) -> None:
    path = project.path / "fixtures" / "goldens" / f"{case}.yaml"
    path.write_text(path.read_text() + "expect:\n" + textwrap.indent(textwrap.dedent(expect), "  "))


def _edit_case(project, case: str, old: str, new: str) -> None:
    path = project.path / "fixtures" / "goldens" / f"{case}.yaml"
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new))


def test_retrieved_documents_are_checked_with_recall_precision_and_what_is_missing(project):
    record(project)
    _add_expect(project, "with_markdown", "retrieved: {names: [pad_thai], k: 1}\n")
    project.runpytest("evals").assert_outcomes(passed=2)

    _edit_case(project, "with_markdown", "retrieved: {names: [pad_thai], k: 1}",
               "retrieved: {names: [pad_thai, tom_kha_gai], k: 2, min_precision: 0.6}")
    result = project.runpytest("evals")
    result.assert_outcomes(passed=1, failed=1)
    assert ("with_markdown.yaml:expect.retrieved: context recall 1/2 = 0.50 (at least 1), precision 1/2 = 0.50 "
            "(at least 0.6); missing: ['tom_kha_gai']; the searches ['pad thai'] returned (first 2 each): "
            "['pad_thai', 'green_curry']") in result.stdout.str()
    assert "--update-goldens" not in result.stdout.str()  # a hand-written check: no golden to accept


def test_usage_limits_count_tokens_and_rounds(project):
    record(project)
    _add_expect(project, "with_tool", "usage: {max_rounds: 2, max_total_tokens: 100000}\n")
    project.runpytest("evals").assert_outcomes(passed=2)
    _edit_case(project, "with_tool", "max_rounds: 2, max_total_tokens: 100000", "max_rounds: 1, max_input_tokens: 10")
    result = project.runpytest("evals")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*with_tool.yaml:expect.usage: rounds = 2 is above max_rounds = 1*",
                                 "*with_tool.yaml:expect.usage: input_tokens = * is above max_input_tokens = 10*"])


def test_a_prefix_that_changes_between_rounds_fails_stable_prefix_with_the_diff(project):
    (project.path / "ticking.py").write_text(TICKING)
    case = project.path / "fixtures" / "goldens" / "ticking.yaml"
    case.write_text(textwrap.dedent("""
        id: ticking
        agent: "ticking:ticking_agent"
        turns: ["What time is it?", "And now?"]
        emulate:
          - text: Half past nine.
          - text: Twenty to ten.
        """))
    record_ticking = ("evals", "-k", "ticking", "--record-mode=all", "--emulator", "--update-goldens")
    project.runpytest(*record_ticking).assert_outcomes(passed=1)
    _add_expect(project, "ticking", "stable_prefix: true\n")
    result = project.runpytest("evals", "-k", "ticking")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*ticking.yaml:expect.stable_prefix: request #2 changes the system sent in request #1, so a provider's "
        "prompt cache cannot reuse the prefix:",
        "--- prefix (expected)", "+++ prefix (observed)",
        "*-*2026-01-15 09:3*", "*+*2026-01-15 09:3*",
    ])
    # the same agent on the harness's frozen clock keeps its prefix
    (project.path / "ticking.py").write_text(TICKING.replace(
        ",\n                 clock=lambda: datetime(2026, 1, 15, 9, 30) + timedelta(minutes=next(readings)))", ")"))
    project.runpytest(*record_ticking).assert_outcomes(passed=1)
    project.runpytest("evals", "-k", "ticking").assert_outcomes(passed=1)


@pytest.mark.parametrize("expect, message", [
    ("retrieved: {names: [a], contains: [b]}", "give exactly one of names or contains"),
    ("retrieved: [{names: [a]}, {names: [b]}]", "expect.retrieved lists 2 turn(s), the case has 1"),
    ("usage: {max_tokens: 5}", "unknown usage limit(s) ['max_tokens']"),
    ("usage: {max_rounds: 2, input_tokens: 5}", "give either usage limits (max_*) or exact counts, not both"),
])
def test_malformed_expectations_are_one_clear_error(project, expect, message):
    _add_expect(project, "with_tool", expect + "\n")
    result = project.runpytest("evals", "-k", "with_tool")
    result.assert_outcomes(failed=1)
    assert message in result.stdout.str()


ANSWERS = '''
from pydantic import BaseModel


class Pantry(BaseModel):
    items: list[str]
'''


def test_a_structured_answer_is_pinned_by_its_fields_and_a_schema_edit_fails_its_case(project):
    """output_schema: the golden holds the answer's fields; a hand-written structured check names the
    fields that differ; editing the schema model changes the request body the golden pins."""
    (project.path / "answers.py").write_text(ANSWERS)
    _edit_case(project, "with_tool", 'agent: {tools: ["pantry_tools:lookup"]}',
               'agent: {tools: ["pantry_tools:lookup"], output_schema: "answers:Pantry"}')
    _edit_case(project, "with_tool", "text: Fish sauce and palm sugar.", """text: '{"items": ["fish sauce", "palm sugar"]}'""")
    record(project)
    golden = (project.path / "fixtures" / "goldens" / "with_tool.golden.yaml").read_text()
    assert "output:\n  structured:\n    items:\n    - fish sauce\n    - palm sugar\n" in golden
    assert "name: Pantry" in golden and "strict: true" in golden

    _add_expect(project, "with_tool", "output: {structured: {items: [fish sauce]}}\n")
    result = project.runpytest("evals", "-k", "with_tool")
    result.assert_outcomes(failed=1)
    assert ("with_tool.yaml:output: {'structured': {'items': ['fish sauce']}} does not hold for "
            """'{"items": ["fish sauce", "palm sugar"]}'""") in result.stdout.str()

    _edit_case(project, "with_tool", "items: [fish sauce]}", "items: [fish sauce, palm sugar]}")
    project.runpytest("evals").assert_outcomes(passed=2)
    (project.path / "answers.py").write_text(ANSWERS + "    brands: list[str]\n")
    result = project.runpytest("evals")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*with_tool.golden.yaml:requests (expected)*", "*+*- brands*"])
