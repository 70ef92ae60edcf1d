"""What a newcomer's first recordings say when they go wrong the usual ways: a recording that went
live without a key, a streamed agent whose provider counted no tokens, a judged case recorded
against the emulator without its verdicts. Each message says what happened and what to do, and
the command or snippet it gives is run here and ends green."""

from __future__ import annotations

import textwrap

import pytest

pytest_plugins = ["pytester"]

import openai  # noqa: E402,F401  (imported before pytester's in-process runs; see test_harness.py)
import vcr  # noqa: E402,F401

from rag_core.providers import PROVIDERS  # noqa: E402
from tests.golden_project import project, run_hint  # noqa: E402,F401  (fixtures)

AGENTS = '''
import os

from openai import OpenAI


def answer(question):
    client = OpenAI(max_retries=0)
    completion = client.chat.completions.create(model="gpt-5.2", messages=[{"role": "user", "content": question}])
    return completion.choices[0].message.content


def streamed(question):
    client = OpenAI(max_retries=0)
    stream = client.chat.completions.create(model="gpt-5.2", messages=[{"role": "user", "content": question}],
                                            stream=True)
    return "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)


def streamed_with_usage(question):
    client = OpenAI(max_retries=0)
    stream = client.chat.completions.create(model="gpt-5.2", messages=[{"role": "user", "content": question}],
                                            stream=True, stream_options={"include_usage": True})
    return "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)


def own_key(question):
    # a program that reads a key of its own: its SDK raises before any request is made
    client = OpenAI(api_key=os.environ["MY_GATEWAY_KEY"], max_retries=0)
    return client.chat.completions.create(model="gpt-5.2", messages=[{"role": "user", "content": question}])
'''

KEY_VARIABLES = [variable for provider in PROVIDERS for variable in provider.key_variables]


def target_case(project, case_id: str, target: str, extra: str = "") -> None:
    (project.path / "pantry_agents.py").write_text(AGENTS)
    (project.path / "fixtures" / "goldens" / f"{case_id}.yaml").write_text(textwrap.dedent(f"""\
        id: {case_id}
        target: pantry_agents:{target}
        input: How do I make pad thai?
        emulate:
          - text: Soak the rice noodles, then fry them with tamarind.
        """) + extra)


@pytest.fixture
def no_keys(monkeypatch):
    for variable in KEY_VARIABLES:
        monkeypatch.delenv(variable, raising=False)


# a host no resolver knows (.invalid is reserved for that): the live API is out of reach on any
# machine (a loopback address would not do: the harness lets loopback through to local services)
UNREACHABLE = "api.rag-core-test.invalid"


def test_a_recording_without_emulator_or_key_says_it_went_live_and_how_to_record_against_the_emulator(
        project, no_keys, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", f"https://{UNREACHABLE}/v1")
    target_case(project, "plain", "answer")
    result = project.runpytest("evals", "-k", "plain", "--record-mode=once")
    result.assert_outcomes(failed=1, deselected=2)
    out = result.stdout.str()
    assert "the run failed: APIConnectionError: Connection error." in out, out
    assert (f"This recorded live (without --emulator): it could not connect to {UNREACHABLE} and OPENAI_API_KEY "
            "is not set (a dummy key was sent). Set OPENAI_API_KEY to record against the live API, or record against the "
            "built-in emulator: pytest") in out, out
    assert not (project.path / "cassettes" / "plain.yaml").exists()
    run_hint(project, result, "or record against the built-in emulator: ")
    assert (project.path / "cassettes" / "plain.yaml").is_file()
    assert (project.path / "fixtures" / "goldens" / "plain.golden.yaml").is_file()
    monkeypatch.setenv("CI", "true")
    project.runpytest("evals", "-k", "plain").assert_outcomes(passed=1, deselected=2)


def test_a_key_that_is_set_but_a_provider_that_cannot_be_reached_says_so(project, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", f"https://{UNREACHABLE}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-not-a-real-key")
    target_case(project, "plain", "answer")
    result = project.runpytest("evals", "-k", "plain", "--record-mode=once")
    result.assert_outcomes(failed=1, deselected=2)
    assert (f"This recorded live (without --emulator): it could not connect to {UNREACHABLE}. Check that the "
            f"network reaches {UNREACHABLE}, or record against the built-in emulator: pytest") in result.stdout.str()


def test_a_recording_whose_sdk_raises_before_any_request_says_it_went_live_without_a_key(project, no_keys):
    target_case(project, "gateway", "own_key")
    result = project.runpytest("evals", "-k", "gateway", "--record-mode=once")
    result.assert_outcomes(failed=1, deselected=2)
    out = result.stdout.str()
    assert "the run failed: KeyError: 'MY_GATEWAY_KEY'" in out, out
    assert ("This recorded live (without --emulator): no provider key is set (e.g. OPENAI_API_KEY). Set the "
            "provider's key to record against the live API, or record against the built-in emulator: pytest") in out


def test_a_stream_that_reported_no_usage_is_named_in_the_summary_not_counted_as_zero(project):
    target_case(project, "streamed", "streamed")
    target_case(project, "metered", "streamed_with_usage")
    recorded = project.runpytest("evals", "-k", "streamed or metered", "--record-mode=once", "--emulator")
    recorded.assert_outcomes(passed=2, deselected=2)
    replayed = project.runpytest("evals", "-k", "streamed or metered")
    replayed.assert_outcomes(passed=2, deselected=2)
    for result in (recorded, replayed):
        summary = next(line for line in result.stdout.lines if "tokens in recordings" in line)
        assert summary.endswith(" tokens in recordings (not counted: streamed, whose stream reported no usage; a "
                                "stream reports it only when asked, e.g. Chat Completions' "
                                "stream_options={'include_usage': True})"), summary
        assert not summary.split(",")[-2].strip().startswith("0 tokens"), summary  # the metered case counts


def test_a_judged_case_recorded_against_the_emulator_without_verdicts_names_the_file_the_judge_and_what_to_add(
        project, monkeypatch):
    judged = project.path / "fixtures" / "goldens" / "judged.yaml"
    target_case(project, "judged", "answer", "expect:\n  judge:\n    - metric: answer_relevance\n")
    result = project.runpytest("evals", "-k", "judged", "--record-mode=once", "--emulator")
    result.assert_outcomes(failed=1, deselected=2)
    out = result.stdout.str()
    assert ("fixtures/goldens/judged.yaml: expect.judge[0] (answer_relevance) has no verdict for the emulator to "
            "answer with: recording with --emulator needs one per judge, in order, under emulate_judge:. Add to the "
            "case file:") in out, out
    assert "retries" not in out  # a case file to fix, not a provider to try again
    assert not (project.path / "cassettes" / "judged.yaml").exists()
    lines = result.stdout.lines
    start = lines.index("emulate_judge:")
    snippet = "\n".join(lines[start:start + 2]) + "\n"
    judged.write_text(judged.read_text() + snippet)
    project.runpytest("evals", "-k", "judged", "--record-mode=once", "--emulator").assert_outcomes(
        passed=1, deselected=2)
    monkeypatch.setenv("CI", "true")
    project.runpytest("evals", "-k", "judged").assert_outcomes(passed=1, deselected=2)
