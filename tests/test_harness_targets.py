"""Meta-tests: golden cases for code that is not a rag_core agent (``target:``), pinned
through its traffic, and differential cases (``compare_with:``)."""

from __future__ import annotations

import textwrap

import pytest

pytest_plugins = ["pytester"]

import bm25s  # noqa: E402,F401  (imported before pytester's in-process runs; see test_harness.py)
import numpy  # noqa: E402,F401
import openai  # noqa: E402,F401
import vcr  # noqa: E402,F401

from tests.golden_project import CASES, project, run_hint  # noqa: E402,F401  (project: a fixture)

# a team's existing agent: the openai SDK and a loop, nothing from rag_core
SHOP_AGENT = '''
import json

from openai import OpenAI

INSTRUCTIONS = "You sell Thai groceries. Check stock with in_stock before you answer."
TOOLS = [{"type": "function", "name": "in_stock", "description": "Is an item in stock?",
          "parameters": {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"],
                         "additionalProperties": False}, "strict": True}]


def shop_agent(question, context):
    client = OpenAI(max_retries=0)
    items = [{"role": "user", "content": question}]
    while True:
        response = client.responses.create(model="gpt-5.2", instructions=INSTRUCTIONS, input=items, tools=TOOLS)
        calls = [i for i in response.output if i.type == "function_call"]
        if not calls:
            return response.output_text
        for call in calls:
            items.append({"type": "function_call", "call_id": call.call_id, "name": call.name,
                          "arguments": call.arguments})
            items.append({"type": "function_call_output", "call_id": call.call_id, "output": "yes"})


def shop_agent_twin(question, context):
    return shop_agent(question, context)
'''

SHOP_CASE = """
    id: shop
    target: shop_agent:shop_agent
    input: Do you have palm sugar?
    emulate:
      - tool_calls: [{name: in_stock, arguments: {item: palm sugar}}]
      - text: Yes, palm sugar is in stock.
"""


@pytest.fixture
def shop(project):
    (project.path / "shop_agent.py").write_text(SHOP_AGENT)
    (project.path / "fixtures" / "goldens" / "shop.yaml").write_text(textwrap.dedent(SHOP_CASE))
    result = project.runpytest("evals", "--record-mode=once", "--emulator", "--update-goldens")
    result.assert_outcomes(passed=len(CASES) + 1)
    return project


def test_a_target_case_pins_what_its_traffic_shows(shop):
    golden = (shop.path / "fixtures" / "goldens" / "shop.golden.yaml").read_text()
    assert golden.startswith("system_prompt: You sell Thai groceries. Check stock with in_stock before you answer.\n")
    for line in ("- name: in_stock", "apis:\n- openai-responses\n- openai-responses\n", "  - name: in_stock\n    arguments:\n      item: palm sugar",
                 "output:\n  equals: Yes, palm sugar is in stock.", "user_messages:\n- Do you have palm sugar?"):
        assert line in golden, line
    assert "references" not in golden  # not visible on the wire: absent, not faked
    shop.runpytest("evals").assert_outcomes(passed=len(CASES) + 1)
    # every field of the golden is compared, apis too
    path = shop.path / "fixtures" / "goldens" / "shop.golden.yaml"
    path.write_text(golden.replace("apis:\n- openai-responses\n- openai-responses\n", "apis:\n- openai-responses\n"))
    result = shop.runpytest("evals")
    result.assert_outcomes(passed=len(CASES), failed=1)
    assert "--- fixtures/goldens/shop.golden.yaml:apis (expected)" in result.stdout.str()


def test_editing_the_foreign_agents_instructions_fails_exactly_its_case(shop):
    module = shop.path / "shop_agent.py"
    module.write_text(module.read_text().replace("Check stock with in_stock", "Always check stock with in_stock"))
    result = shop.runpytest("evals")
    result.assert_outcomes(passed=len(CASES), failed=1)
    out = result.stdout.str()
    assert "FAILED evals/test_goldens.py::test_golden_case[shop]" in out
    assert "--- fixtures/goldens/shop.golden.yaml:system_prompt (expected)" in out
    assert "-You sell Thai groceries. Check stock with in_stock before you answer." in out
    assert "+You sell Thai groceries. Always check stock with in_stock before you answer." in out
    # the cassette's requests changed too: the printed fix re-records and accepts the golden
    run_hint(shop, result, "if the change is intended: ")
    shop.runpytest("evals").assert_outcomes(passed=len(CASES) + 1)
    assert "Always check stock" in (shop.path / "fixtures" / "goldens" / "shop.golden.yaml").read_text()


def test_compare_with_fails_with_the_diff_and_ignore_declares_it(shop):
    case = shop.path / "fixtures" / "goldens" / "twins.yaml"
    case.write_text(textwrap.dedent(SHOP_CASE).replace("id: shop", "id: twins")
                    + "compare_with: shop_agent:shop_agent_twin\n")
    recorded = shop.runpytest("evals", "-k", "twins", "--record-mode=once", "--emulator")
    recorded.assert_outcomes(passed=1)  # the same code: the same traffic
    assert (shop.path / "cassettes" / "twins.compare.yaml").exists()

    module = shop.path / "shop_agent.py"
    module.write_text(module.read_text() + textwrap.dedent('''
        def shop_agent_twin(question, context):
            global INSTRUCTIONS
            INSTRUCTIONS = "You sell Thai groceries."
            return shop_agent(question, context)
    '''))
    result = shop.runpytest("evals", "-k", "twins", "--record-mode=rewrite", "--emulator")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "compare_with: shop_agent:shop_agent_twin sends a different system_prompt than shop_agent:shop_agent" in out
    assert "+++ system_prompt (shop_agent:shop_agent_twin)" in out
    # the requests carry the same instructions: the same change, named where it shows up too
    assert "the same change shows up in fixtures/goldens/twins.yaml: chat_requests" in out

    case.write_text(case.read_text() + "ignore: [system_prompt, 'chat_requests[*].instructions']\n")
    shop.runpytest("evals", "-k", "twins").assert_outcomes(passed=1)


def test_target_mistakes_are_named(project, monkeypatch):
    monkeypatch.delenv("RAG_CORE_REQUIRE_ALL_CASES", raising=False)
    goldens = project.path / "fixtures" / "goldens"
    (goldens / "both.yaml").write_text("id: both\ntarget: m:f\nagent: {markdown: true}\ninput: hi\n")
    (goldens / "nowhere.yaml").write_text("id: nowhere\ntarget: no_such_module:agent\ninput: hi\n")
    (goldens / "later.yaml").write_text("id: later\ntarget: m:f\nrequires: [no_such_package_here]\ninput: hi\n")
    result = project.runpytest("evals", "-rs", "-k", "both or nowhere or later", "--record-mode=once", "--emulator")
    out = result.stdout.str()
    assert "both.yaml: a target case builds its own clients and agent: remove agent" in out
    assert "nowhere.yaml: target: cannot import 'no_such_module:agent': no module named 'no_such_module' (not installed" in out
    assert "later requires no_such_package_here, which is not installed" in out
    result.assert_outcomes(failed=2, skipped=1)

    # where every case must run (CI), a missing requirement fails instead of skipping
    monkeypatch.setenv("RAG_CORE_REQUIRE_ALL_CASES", "1")
    strict = project.runpytest("evals", "-k", "later")
    strict.assert_outcomes(failed=1)
    assert "RAG_CORE_REQUIRE_ALL_CASES is set: no case may skip" in strict.stdout.str()


def test_a_target_is_judged_on_the_tool_results_its_traffic_carried(shop):
    case = shop.path / "fixtures" / "goldens" / "shop.yaml"
    case.write_text(case.read_text() + textwrap.dedent("""
        emulate_judge:
          - score: 1.0
            reason: The stock check says yes.
            claims: [{claim: Palm sugar is in stock., supported: true, evidence: "yes"}]
        expect:
          judge: [{metric: faithfulness}]
    """))
    shop.runpytest("evals", "-k", "shop", "--record-mode=rewrite", "--emulator", "--update-goldens").assert_outcomes(
        passed=1)
    golden = (shop.path / "fixtures" / "goldens" / "shop.golden.yaml").read_text()
    # the context is the in_stock result the agent sent back; the answer is what the target returned
    assert "<context>\n        [1] yes\n        </context>" in golden
    assert "<answer>\n        Yes, palm sugar is in stock.\n        </answer>" in golden
    assert "    score: 1.0\n    passed: true\n" in golden
    shop.runpytest("evals", "-k", "shop").assert_outcomes(passed=1)
