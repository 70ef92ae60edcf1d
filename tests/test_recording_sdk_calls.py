"""Meta-tests: a program that calls more than its model (it lists or retrieves the model, counts
its input tokens first) records against the emulator and replays, as written for the provider; one
that calls an endpoint the emulator does not serve fails its recording naming the request and what
to do, and doing it (scripting the answer) records and replays."""

from __future__ import annotations

import re
import textwrap

import pytest

pytest_plugins = ["pytester"]

import openai  # noqa: E402,F401  (imported before pytester's in-process runs; see test_harness.py)
import vcr  # noqa: E402,F401

ANSWER = "Soak rice noodles, then fry them with tamarind."

# each counts its input before it asks, as a program staying under a context limit does
COUNTING_AGENTS = '''
from openai import OpenAI

LIMIT = 2000
INSTRUCTIONS = "You are a Thai cook. Answer in one sentence."


def openai_agent(question):
    client = OpenAI(max_retries=0)
    model = client.models.retrieve("gpt-5.2").id
    request = dict(model=model, instructions=INSTRUCTIONS, input=question)
    counted = client.responses.input_tokens.count(**request).input_tokens
    if counted > LIMIT:
        return "too long"
    response = client.responses.create(**request, max_output_tokens=200)
    return f"{response.output_text} [counted {counted}, used {response.usage.input_tokens}]"


def claude_agent(question):
    import anthropic

    client = anthropic.Anthropic(max_retries=0)
    model = next(m.id for m in client.models.list() if m.id.startswith("claude-haiku"))
    request = dict(model=model, system=INSTRUCTIONS, messages=[{"role": "user", "content": question}])
    counted = client.messages.count_tokens(**request).input_tokens
    message = client.messages.create(**request, max_tokens=200)
    return f"{message.content[0].text} [counted {counted}, used {message.usage.input_tokens}]"


def gemini_agent(question):
    from google import genai

    client = genai.Client()
    counted = client.models.count_tokens(model="gemini-2.5-flash", contents=question).total_tokens
    response = client.models.generate_content(model="gemini-2.5-flash", contents=question)
    return f"{response.text} [counted {counted}, used {response.usage_metadata.prompt_token_count}]"


def file_agent(question):
    client = OpenAI(max_retries=0)
    menu = client.files.retrieve("file-menu")
    response = client.responses.create(model="gpt-5.2", input=f"{question} (see {menu.filename})")
    return response.output_text
'''

CASE = """
    id: {id}
    target: counting_agents:{target}
    input: How do I make pad thai?
    emulate:
      - text: {answer}
"""


def _project(pytester: pytest.Pytester, cases: dict[str, str]) -> pytest.Pytester:
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\npythonpath = .\n")
    (pytester.path / "counting_agents.py").write_text(COUNTING_AGENTS)
    goldens = pytester.path / "fixtures" / "goldens"
    goldens.mkdir(parents=True)
    for case_id, target in cases.items():
        (goldens / f"{case_id}.yaml").write_text(textwrap.dedent(CASE.format(id=case_id, target=target, answer=ANSWER)))
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "test_goldens.py").write_text(
        "def test_golden_case(golden_case, golden_harness):\n    golden_harness.check(golden_case)\n")
    return pytester


def test_agents_that_count_tokens_and_list_models_record_and_replay(pytester):
    """Each of these failed its recording on the emulator's 404 (and was told a case that tests an
    error must say so under expect: error:)."""
    cases = {"counted_openai": "openai_agent"}
    for module, case_id, target in (("anthropic", "counted_claude", "claude_agent"),
                                    ("google.genai", "counted_gemini", "gemini_agent")):
        try:
            __import__(module)
        except ImportError:
            continue
        cases[case_id] = target
    project = _project(pytester, cases)
    recorded = project.runpytest("evals", "--record-mode=once", "--emulator")
    recorded.assert_outcomes(passed=len(cases))
    expected_apis = {
        "counted_openai": ["GET /v1/models/gpt-5.2", "POST /v1/responses/input_tokens", "openai-responses"],
        "counted_claude": ["GET /v1/models", "POST /v1/messages/count_tokens", "anthropic-messages"],
        # the API version is the SDK release's default (v1beta, or v1 from google-genai 3)
        "counted_gemini": ["POST /v1*/models/gemini-2.5-flash:countTokens", "gemini"],
    }
    for case_id in cases:
        golden = (project.path / "fixtures" / "goldens" / f"{case_id}.golden.yaml").read_text()
        apis = "".join(f"- {re.escape(api)}\n" for api in expected_apis[case_id]).replace(r"\*", r"\w*")
        assert re.search("apis:\n" + apis, golden), golden
        # the count the program made first is the one the model call reported
        counted, used = re.search(r"\[counted (\d+), used (\d+)\]", golden).groups()
        assert counted == used, golden
        assert ANSWER in golden
    replayed = project.runpytest("evals")
    replayed.assert_outcomes(passed=len(cases))


FILE = "{endpoint: GET /v1/files/file-menu, body: {id: file-menu, object: file, bytes: 120, created_at: 1767225600, " \
       "filename: menu.txt, purpose: assistants, status: processed}}"


def test_an_unserved_endpoint_fails_the_recording_naming_it_and_scripting_it_records(pytester):
    project = _project(pytester, {"with_menu": "file_agent"})
    failed = project.runpytest("evals", "--record-mode=once", "--emulator")
    failed.assert_outcomes(failed=1)
    out = failed.stdout.str()
    assert ("fixtures/goldens/with_menu.yaml: the emulator does not serve GET /v1/files/file-menu: record this case "
            "against the live API instead (with the provider's key set, without --emulator), or script the answer in "
            "the case's emulate: list, e.g. - {endpoint: GET /v1/files/file-menu, body: {...}}") in out, out
    assert "expect: error:" not in out
    assert not (project.path / "fixtures" / "goldens" / "with_menu.golden.yaml").exists()
    # what the message says to do: script the answer
    case = project.path / "fixtures" / "goldens" / "with_menu.yaml"
    case.write_text(case.read_text() + f"  - {FILE}\n")
    project.runpytest("evals", "--record-mode=once", "--emulator").assert_outcomes(passed=1)
    golden = (project.path / "fixtures" / "goldens" / "with_menu.golden.yaml").read_text()
    assert "apis:\n- GET /v1/files/file-menu\n- openai-responses\n" in golden and "see menu.txt" in golden
    project.runpytest("evals").assert_outcomes(passed=1)


def test_a_scripted_endpoint_that_names_no_method_and_path_is_a_case_file_error(tmp_path, monkeypatch):
    from rag_core.evals.common.errors import CaseFileError
    from rag_core.evals.golden.case_files import parse_case_file

    monkeypatch.chdir(tmp_path)
    (tmp_path / "menu.yaml").write_text(textwrap.dedent(CASE.format(id="menu", target="file_agent", answer=ANSWER))
                                        + "  - {endpoint: /v1/files/file-menu, body: {}}\n")
    with pytest.raises(CaseFileError) as raised:
        parse_case_file(tmp_path / "menu.yaml")
    assert str(raised.value) == ("menu.yaml:7: emulate[1].endpoint: '/v1/files/file-menu' is not a method "
                                 "and a path, e.g. 'GET /v1/files/file-abc' (without a query)")
