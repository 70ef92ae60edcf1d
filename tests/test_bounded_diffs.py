"""A failing case's diff is bounded in time and size whatever the size of its values (every diff
goes through ``common/diff.py``), and a recording warns about a value over ``value_sizes.LARGE``.

No test here is timed: the inputs are shaped and sized so that a diff whose work grows faster than
the input (difflib on repeated lines, YAML written out whole several times per failure) would not
end within a test run: on the old code the first one took minutes (docs/cases.md, large values)."""

from __future__ import annotations

import random
import textwrap
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest_plugins = ["pytester"]

import bm25s  # noqa: E402,F401  (imported before pytester's in-process runs; see test_harness.py)
import numpy  # noqa: E402,F401
import openai  # noqa: E402,F401
import vcr  # noqa: E402,F401

from rag_core.evals.common import diff as compare  # noqa: E402
from rag_core.evals.common.failure import Failure  # noqa: E402
from rag_core.evals.report.sidebyside import rows  # noqa: E402
from rag_core.evals.runs.failures import entry  # noqa: E402
from tests.golden_project import CASES, project  # noqa: E402,F401  (project: a fixture)


def manual(lines: int) -> list[str]:
    """A long document whose lines each come back every 101 lines: just under 1% of the lines, so
    difflib's autojunk keeps them all, and matching them line by line grows with the square of the
    length."""
    return [f"step {i % 101}: stir the wok" for i in range(lines)]


def test_a_one_line_change_in_megabytes_gives_a_short_diff_that_shows_it():
    lines = manual(400_000)  # 9 MB, twice in each value
    before = {"requests": [{"input": "\n".join(lines), "instructions": "Be brief."}] * 2}
    lines[200_000] += " gently"
    after = {"requests": [{"input": "\n".join(lines), "instructions": "Be brief."}] * 2}
    failure = Failure("snapshot", "golden", "fixtures/goldens/big.golden.yaml", "requests", golden=before,
                      observed=after)
    diff = failure.diff()
    assert "-    step 20: stir the wok\n+    step 20: stir the wok gently\n" in diff
    head = sum(map(len, lines[:199_998])) + 199_998  # the lines before the context, with their line ends
    assert f"     ⋯ 199,998 equal lines ({head:,} characters)\n     step 18: stir the wok\n" in diff
    assert "     step 22: stir the wok\n     ⋯ 199,997 equal lines (" in diff
    assert diff.count("\n") < 40 and len(diff) < 4_000
    assert failure.text().endswith(diff.rstrip("\n"))  # the terminal shows it after the message
    kept = entry(failure)  # the run record keeps the same bounded diff, whole
    assert kept.diff == diff and "diff" not in kept.truncated


def test_a_change_deep_inside_a_long_line_is_shown_around_it_with_counts():
    line = "x" * 20_000_000
    diff = compare.unified("out", {"output": line}, {"output": line[:12_000_000] + "Y" + line[12_000_001:]})
    changed = [row for row in diff.splitlines() if row.startswith("+output")]
    assert len(changed) == 1 and "Y" in changed[0] and len(changed[0]) < compare.LINE
    assert "(11,999,900 equal characters)⋯" in changed[0] and "more characters)" in changed[0]
    assert len(diff) < 3 * compare.LINE


def test_a_diff_of_many_changed_lines_shows_at_most_its_bound_and_counts_the_rest():
    before = [f"line {i}" for i in range(200_000)]
    after = [f"line {i}" if i % 2 else f"line {i} changed" for i in range(200_000)]
    diff = compare.unified("out", "\n".join(before), "\n".join(after))
    assert diff.count("\n") <= compare.SHOWN + 4
    assert "of this diff not shown" in diff
    middle = compare.match_lines(before, after)
    assert middle.not_compared == (200_000 - 1 - compare.COMPARED,) * 2  # line 0 is equal: set aside


def test_the_side_by_side_rows_are_matched_within_the_same_bounds():
    lines = manual(400_000)
    golden = "\n".join(lines)
    lines[1_000] = "step 0: rinse the wok"
    lines[300_000] = "step 0: dry the wok"
    shown = rows(golden, "\n".join(lines))
    assert len(shown) < 40
    assert ["~", "step 91: stir the wok", "step 0: rinse the wok"] in [row.to_json() for row in shown]
    assert any(row.tag == "…" and "not compared" in (row.left or "") for row in shown)


def test_everyday_values_are_diffed_whole():
    before = {"system_prompt": "Be brief.\nUse metric units.", "tools": [{"name": "lookup"}] * 3}
    after = {"system_prompt": "Be very brief.\nUse metric units.", "tools": [{"name": "lookup"}] * 3}
    assert compare.unified("g", before, after) == (
        "--- g (expected)\n+++ g (observed)\n@@ -1,5 +1,5 @@\n system_prompt: |-\n-  Be brief.\n+  Be very brief.\n"
        "   Use metric units.\n tools:\n - name: lookup\n")


BIG_CASE = """
    id: pasted
    agent: {instructions: [Be brief.]}
    input: {text}
    emulate:
      - text: Soak the noodles.
"""


def test_recording_a_value_over_the_documented_size_warns_naming_the_file_field_and_size(project):
    text = "Soak the rice noodles in warm water. " * 40_000  # 1.5 MB
    (project.path / "fixtures" / "goldens" / "pasted.yaml").write_text(
        textwrap.dedent(BIG_CASE).replace("{text}", text.strip()))
    result = project.runpytest("evals", "-k", "pasted", "--record-mode=once", "--emulator")
    result.assert_outcomes(passed=1, deselected=len(CASES))
    out = result.stdout.str()
    for line in ("fixtures/goldens/pasted.yaml: 1 value(s) over 1.0 MB: input (1.4 MB)",
                 "cassettes/pasted.yaml: 1 value(s) over 1.0 MB: interactions[0].request.body.json.input[1].content "
                 "(1.4 MB)",
                 "fixtures/goldens/pasted.golden.yaml: 2 value(s) over 1.0 MB: user_messages[0] (1.4 MB); "
                 "requests[0].input[1].content (1.4 MB)"):
        assert f"PytestWarning: {line}. Every replay reads them whole" in out, line
    replayed = project.runpytest("evals", "-k", "pasted")  # a replay records nothing: nothing to warn about
    replayed.assert_outcomes(passed=1, deselected=len(CASES))
    assert "value(s) over" not in replayed.stdout.str()


@pytest.mark.parametrize("limit", [10, 1_000])
def test_large_values_are_found_with_their_paths(limit):
    from rag_core.evals.common.value_sizes import large_values

    data = {"a": [{"b": "é" * 600}, "small"], "c": b"x" * 2_000}
    found = [(value.path, value.size) for value in large_values(data, limit)]
    expected = [("a[0].b", 1_200), ("c", 2_000)] + ([("a[1]", 5)] if limit < 5 else [])
    assert found == [pair for pair in expected if pair[1] > limit]


# small bounds, so that small values are cut the way megabytes are
SMALL_BOUNDS = {"WHOLE": 50, "BUDGET": 400, "TEXT": 60, "LINE": 20, "WINDOW": 5, "EQUAL_WHOLE": 10, "ITEMS": 4}
texts = st.text(alphabet="ab\n", max_size=80)
values = st.recursive(texts | st.integers(0, 2), lambda inner: st.lists(inner, max_size=8)
                      | st.dictionaries(st.sampled_from(["x", "y", "z", "w"]), inner, max_size=5), max_leaves=30)


def _edited(value: Any, rng: random.Random) -> Any:
    """``value`` with one small edit somewhere inside: a character, an item, or a value."""
    if isinstance(value, str):
        at = rng.randrange(len(value) + 1)
        return value[:at] + rng.choice("abc\n") + value[at + 1:]
    if isinstance(value, list) and value:
        at, value = rng.randrange(len(value)), list(value)
        if rng.random() < 0.2:
            del value[at]
        else:
            value[at] = _edited(value[at], rng)
        return value
    if isinstance(value, dict) and value:
        key, value = rng.choice(sorted(value)), dict(value)
        value[key] = _edited(value[key], rng)
        return value
    return [value]


@settings(max_examples=150, deadline=None)
@given(before=values, other=values, seed=st.integers(0, 2**32 - 1))
def test_two_values_that_differ_are_never_cut_into_equal_ones(before, other, seed):
    """However the bounds cut two values, a difference stays a difference (and a diff is never empty)."""
    from rag_core.evals.common import abridge

    rng = random.Random(seed)
    after = _edited(before, rng) if rng.random() < 0.8 else other  # mostly one small edit deep inside
    with pytest.MonkeyPatch.context() as patch:
        for name, value in SMALL_BOUNDS.items():
            patch.setattr(abridge, name, value)
        cut_before, cut_after = abridge.abridged(before, after)
        assert (cut_before != cut_after) == (before != after)
        assert bool(compare.unified("t", before, after)) == (before != after)
