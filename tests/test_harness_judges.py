"""Meta-tests: LLM judges recorded in the case's cassette, replayed to the same verdict, pinned in
the golden; a rubric edit fails exactly its case; a low score fails with the reason."""

from __future__ import annotations

pytest_plugins = ["pytester"]

import bm25s  # noqa: E402,F401  (imported before pytester's in-process runs; see test_harness.py)
import numpy  # noqa: E402,F401
import openai  # noqa: E402,F401
import vcr  # noqa: E402,F401

from rag_core.evals.golden.judges import ClaimCheck, Verdict, judge_prompt, score_of  # noqa: E402
from tests.golden_project import project, record, run_hint  # noqa: E402,F401  (project: a fixture)

RUBRIC = """
emulate_judge:
  - {score: 1.0, reason: It says to soak the noodles.}
expect:
  judge:
    - metric: rubric
      criteria: Says what to do with the noodles.
"""

FAITHFULNESS = """
emulate_judge:
  - score: 0.9
    reason: The claim about Bangkok is not in the context.
    claims:
      - {claim: Soak the noodles., supported: true, evidence: Soak flat rice noodles}
      - {claim: Pad thai comes from Bangkok., supported: false}
expect:
  judge:
    - {metric: faithfulness, threshold: 0.8}
"""


def _case(project, name: str):
    return project.path / "fixtures" / "goldens" / f"{name}.yaml"


def _with_judge(project, name: str, text: str) -> None:
    case = _case(project, name)
    case.write_text(case.read_text() + text)


def test_a_rubric_edit_fails_exactly_its_case_with_the_request_diff_and_rerecording_accepts_it(project):
    _with_judge(project, "with_markdown", RUBRIC)
    record(project)
    cassette = (project.path / "cassettes" / "with_markdown.yaml").read_text()
    assert cassette.count("rag-core-judge:") == 1 and "- rubric" in cassette  # the judge's interaction is marked
    golden = (project.path / "fixtures" / "goldens" / "with_markdown.golden.yaml").read_text()
    assert "judges:\n- metric: rubric\n  request:" in golden and "Says what to do with the noodles." in golden
    assert "  verdict:\n    score: 1.0\n    passed: true\n    reason: It says to soak the noodles." in golden
    assert project.runpytest("evals").ret == 0  # replayed: the same verdict, no key, no network

    case = _case(project, "with_markdown")
    case.write_text(case.read_text().replace("Says what to do with the noodles.", "Gives the soaking time."))
    result = project.runpytest("evals")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "with_markdown.golden.yaml:judges (expected)" in out
    changed = [line.split()[0] + " " + " ".join(line.split()[1:]) for line in result.stdout.lines
               if line.startswith(("-  ", "+  "))]
    assert "- Says what to do with the noodles." in changed and "+ Gives the soaking time." in changed
    # the judge's request in the cassette is the same change: named, not shown again
    assert "the same change shows up in cassettes/with_markdown.yaml: request[2]" in out
    run_hint(project, result, "if the change is intended: ")
    assert project.runpytest("evals", "--strict-cassettes").ret == 0


def test_a_low_score_fails_with_the_reason_and_the_unsupported_claims_every_time(project):
    _with_judge(project, "with_markdown", FAITHFULNESS)
    result = project.runpytest("evals", "--record-mode=once", "--emulator", "--update-goldens")
    result.assert_outcomes(passed=1, failed=1)
    message = ("with_markdown.yaml:expect.judge[0] (faithfulness): score 0.50 is below the threshold 0.8: The claim "
               "about Bangkok is not in the context.; not supported: ['Pad thai comes from Bangkok.']")
    assert message in result.stdout.str()
    # the score is the supported share of the claims (1 of 2), not the 0.9 the judge wrote
    golden = (project.path / "fixtures" / "goldens" / "with_markdown.golden.yaml").read_text()
    assert "    score: 0.5\n    passed: false\n" in golden
    for _ in range(2):  # replayed: the same verdict each time
        again = project.runpytest("evals")
        again.assert_outcomes(passed=1, failed=1)
        assert message in again.stdout.str()


def test_a_judge_added_after_recording_asks_for_a_recording_that_works(project):
    record(project)
    _with_judge(project, "with_markdown", RUBRIC)
    result = project.runpytest("evals", "-k", "with_markdown")
    result.assert_outcomes(failed=1)
    assert "sent POST /v1/responses (request #3), which cassettes/with_markdown.yaml does not hold" in result.stdout.str()
    run_hint(project, result, "Record it again: ")


def test_emulate_judge_gives_one_verdict_per_judge(project):
    _with_judge(project, "with_markdown", RUBRIC.replace("expect:", "  - {score: 0.5, reason: again}\nexpect:"))
    result = project.runpytest("evals", "-k", "with_markdown")
    result.assert_outcomes(failed=1)
    assert "emulate_judge scripts 2 verdict(s) for 1 expect.judge entr(ies): give one per judge" in result.stdout.str()


def test_scores_that_count_claims_are_computed_and_prompts_are_pure():
    verdict = Verdict(score=0.9, reason="r", claims=[ClaimCheck(claim="a", supported=True, evidence=None),
                                                      ClaimCheck(claim="b", supported=False, evidence=None)])
    assert score_of("faithfulness", verdict) == score_of("context_relevance", verdict) == 0.5
    assert score_of("answer_relevance", verdict) == 0.9
    assert score_of("rubric", Verdict(score=1.7, reason="r", claims=[])) == 1.0  # clamped to the scale
    assert score_of("faithfulness", Verdict(score=0, reason="r", claims=[])) == 1.0  # no claim, none unsupported
    prompt = judge_prompt("faithfulness", "q?", "a.", ["one", "two"])
    assert prompt == "<question>\nq?\n</question>\n\n<context>\n[1] one\n\n[2] two\n</context>\n\n<answer>\na.\n</answer>"
    assert "<context>" not in judge_prompt("answer_relevance", "q?", "a.", ["one"])
    assert "<criteria>\nbe brief\n</criteria>" in judge_prompt("rubric", "q?", "a.", [], "be brief")


def test_a_judge_without_a_scripted_verdict_is_told_to_script_one(project):
    """The message said to add turns to emulate: (the agent's script), which cannot help."""
    case = project.path / "fixtures" / "goldens" / "with_tool.yaml"
    case.write_text(case.read_text() + "expect:\n  judge: [{metric: answer_relevance}]\n")
    result = project.runpytest("evals", "-k", "with_tool", "--record-mode=once", "--emulator")
    result.assert_outcomes(failed=1, deselected=1)
    out = result.stdout.str()
    assert ("fixtures/goldens/with_tool.yaml: expect.judge[0] (answer_relevance) has no verdict for the emulator to "
            "answer with: recording with --emulator needs one per judge, in order, under emulate_judge:") in out
    assert "add the missing turns to emulate:" not in out
