"""Recording new episodes against the emulator: ``--record-mode=new_episodes --emulator`` plays what
the cassette holds and lets the emulator answer the rest, each model call with its own turn.

The emulator counted only the calls it answered itself: a case whose calls the cassette all held
failed ("emulate: scripts 2 turn(s), but the run asked for 0"), and a new call after played ones
was answered with the script's first turn instead of the one after them."""

from __future__ import annotations

import pytest

pytest.importorskip("vcr")
pytest.importorskip("openai")

import yaml  # noqa: E402

from tests.golden_project import CASES, TOOLS, project, record  # noqa: E402,F401  (project: a fixture)

pytest_plugins = ["pytester"]


def test_new_episodes_against_the_emulator_plays_what_the_cassette_holds_and_ci_replays_green(project, monkeypatch):
    record(project)
    project.runpytest("evals", "--record-mode=new_episodes", "--emulator").assert_outcomes(passed=len(CASES))
    with monkeypatch.context() as ci:
        ci.setenv("CI", "true")
        project.runpytest("evals").assert_outcomes(passed=len(CASES))


def test_a_call_the_cassette_does_not_hold_gets_the_turn_after_the_played_ones(project):
    """The tool now answers otherwise: the first call is played from the cassette, the second (it
    carries the tool's output) is new, and the emulator answers it with the script's second turn,
    the final text, so the agent makes its two calls as when it was recorded."""
    record(project)
    (project.path / "pantry_tools.py").write_text(TOOLS.replace("fish sauce, palm sugar, tamarind", "rice, limes"))
    result = project.runpytest("evals", "--case", "with_tool", "--record-mode=new_episodes", "--emulator",
                               "--update-goldens")
    result.assert_outcomes(passed=1)
    cassette = yaml.safe_load((project.path / "cassettes" / "with_tool.yaml").read_text())
    new = cassette["interactions"][2:]
    assert len(new) == 1, [i["request"]["body"] for i in new]
    assert "rice, limes" in str(new[0]["request"]["body"])
    assert "Fish sauce and palm sugar." in str(new[0]["response"]["body"])
    golden = yaml.safe_load((project.path / "fixtures" / "goldens" / "with_tool.golden.yaml").read_text())
    assert len(golden["requests"]) == 2
