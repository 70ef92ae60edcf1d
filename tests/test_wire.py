"""Golden fields read from provider traffic alone (rag_core/evals/harness/wire.py): on real
recordings made by other projects, and on every golden case of this project, where the wire
must agree with the agent's own account."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

from rag_core.evals.harness import wire
from rag_core.evals.harness.case import case_files, load_expect, parse_case_file
from rag_core.evals.harness.recorder import _json
from rag_core.evals.harness.runner import Settings, run_case

from tests.recordings import interactions

ROOT = Path(__file__).resolve().parents[1]
GOLDENS = ROOT / "fixtures" / "goldens"


def _exchanges(name: str) -> list[wire.Exchange]:
    found = []
    for interaction in interactions(name):
        request, response = interaction["request"], interaction["response"]
        headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
        body = response["body"]["string"]
        stream = "event-stream" in str(headers.get("content-type", ""))
        found.append(wire.Exchange(request["method"], urlparse(request["uri"]).path, _json(request["body"]),
                                   response["status"]["code"], body if stream else _json(body)))
    return found


@pytest.mark.parametrize(("method", "path", "api"), [
    ("POST", "/v1/responses", "openai-responses"),
    ("POST", "/openai/v1/chat/completions", "openai-chat"),
    ("POST", "/v1/embeddings", "openai-embeddings"),
    ("POST", "/v1beta/models/gemini-2.5-flash:generateContent", "gemini"),
    ("POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "gemini"),
    ("POST", "/v1beta/models/gemini-embedding-001:batchEmbedContents", "gemini-embeddings"),
    ("POST", "/v2/chat", "cohere-chat"),
    ("POST", "/v2/embed", "cohere-embed"),
    ("POST", "/v2/rerank", "cohere-rerank"),
    ("GET", "/v1/models", None),
    ("POST", "/v1/files", None),
])
def test_the_api_is_named_from_method_and_path(method, path, api):
    assert wire.api_of(method, path) == api


def test_real_responses_tool_round_trip():
    seen = wire.observe(_exchanges("openai/responses_tool_call_roundtrip_nonstream_gpt-4o.yaml"), [0])
    assert seen["apis"] == ["openai-responses", "openai-responses"]
    assert seen["user_messages"] == ["What is the capital of PotatoLand?"]
    assert [t["name"] for t in seen["tools"]] == ["get_capital"]
    assert seen["tools"][0]["parameters"]["required"] == ["country"]
    assert seen["tool_calls"] == {"calls": [{"name": "get_capital", "arguments": {"country": "PotatoLand"}}]}
    assert seen["final_text"] == "The capital of PotatoLand is Potato City."
    assert seen["usage"]["total_tokens"] == seen["usage"]["input_tokens"] + seen["usage"]["output_tokens"]


def test_real_chat_stream_is_assembled_from_its_deltas():
    seen = wire.observe(_exchanges("openai/chat_stream_tool_call_include_usage_roundtrip_gpt-4o-mini.yaml"), [0])
    assert seen["tool_calls"] == {"calls": [{"name": "get_capital", "arguments": {"country": "UK"}}]}
    assert seen["final_text"] == "The capital of the UK is London."
    assert seen["tools"] == [{"name": "get_capital", "description": "", "parameters": {
        "additionalProperties": False, "properties": {"country": {"type": "string"}}, "required": ["country"],
        "type": "object"}}]
    assert seen["usage"] == {"input_tokens": 131, "output_tokens": 24, "total_tokens": 155}


def test_real_responses_stream_reads_the_completed_event():
    seen = wire.observe(_exchanges("openai/responses_stream_reasoning_tool_call_gpt-5.yaml"), [0])
    assert seen["tool_calls"] == {"calls": [{"name": "final_result", "arguments": {"result": 6666}}]}
    assert seen["final_text"] is None  # the answer is a tool call; reasoning is not text


def test_real_gemini_round_trip_skips_the_function_response_turn():
    seen = wire.observe(_exchanges("gemini/gemini_generatecontent_function_call_roundtrip_2.0-flash.yaml"), [0])
    # the second request's last "user" content is a functionResponse, not what the user said
    assert seen["user_messages"] == ["What is the largest city in the user country?"]
    assert [t["name"] for t in seen["tools"]] == ["get_user_country", "final_result"]
    assert [c["name"] for c in seen["tool_calls"]["calls"]] == ["get_user_country", "final_result"]
    assert seen["tool_calls"]["calls"][1]["arguments"] == {"city": "Mexico City", "country": "Mexico"}


def test_gemini_schema_types_read_as_json_schema_types():
    """Agno declares Gemini tools in Gemini's own schema (``parameters``, capitalised types);
    rag_core sends JSON Schema (``parameters_json_schema``): the neutral tool is the same."""
    query = {"properties": {"query": {"type": "{string}", "description": "The query."},
                            "type": {"type": "{string}"}},  # a property named type keeps its name
             "required": ["query"], "type": "{object}"}

    def declared(field: str, spell) -> dict:
        schema = json.loads(json.dumps(query).replace("{string}", spell("string")).replace("{object}", spell("object")))
        return {"contents": [], "tools": [{"functionDeclarations": [{"name": "search", "description": "d", field: schema}]}]}

    expected = declared("parameters_json_schema", str)["tools"][0]["functionDeclarations"][0]["parameters_json_schema"]
    assert wire.tools(declared("parameters", str.upper)) == wire.tools(declared("parameters_json_schema", str)) == [
        {"name": "search", "description": "d", "parameters": expected}]


def test_real_cohere_chat_tool_call():
    seen = wire.observe(_exchanges("cohere/cohere_v2_chat_tool_call_command-r.yaml"), [0])
    assert seen["apis"] == ["cohere-chat"]
    assert seen["tool_calls"] == {"calls": [{"name": "Person", "arguments": {"age": 27, "name": "Erick"}}]}


def test_error_answers_and_non_chat_traffic_give_no_answer():
    for name in ("openai/embeddings_error_404_model_not_found.yaml", "cohere/cohere_v2_rerank_rerank-v3.5.yaml"):
        seen = wire.observe(_exchanges(name), [0])
        assert seen["system_prompt"] is None and seen["tool_calls"] == {"calls": []} and seen["usage"] == {}


def test_system_prompt_in_each_wire_shape():
    assert wire.system_prompt({"instructions": "Be brief.", "input": "hi"}) == "Be brief."
    assert wire.system_prompt({"input": [{"role": "developer", "content": [{"type": "input_text", "text": "A"}]},
                                         {"role": "user", "content": "hi"}]}) == "A"
    assert wire.system_prompt({"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "u"}]}) == "S"
    assert wire.system_prompt({"contents": [], "systemInstruction": {"parts": [{"text": "G"}]}}) == "G"
    assert wire.system_prompt({"messages": [{"role": "user", "content": "u"}]}) is None


def _agent_cases():
    return [case for path in case_files(GOLDENS) for case in parse_case_file(path) if case.target is None]


@pytest.mark.parametrize("case", _agent_cases(), ids=lambda c: c.id)
def test_every_golden_case_reads_the_same_from_the_wire(case, monkeypatch):
    """The wire-derived system prompt, user messages, tools and tool calls of every rag_core
    golden case equal the agent-level ones its golden pins."""
    for module in case.requires:
        pytest.importorskip(module)
    monkeypatch.syspath_prepend(str(ROOT))  # factories live in evals/
    result = run_case(case, Settings(cassettes_dir=ROOT / "cassettes", fixtures_dir=ROOT / "fixtures"))
    assert result.failures == []
    golden = load_expect(case.golden_path)
    seen = result.wire
    assert seen["system_prompt"] == golden.system_prompt
    assert seen["user_messages"] == golden.user_messages
    assert seen["tools"] == [wire.neutral_tool(t) for t in golden.tools]
    assert seen["tool_calls"]["calls"] == [c.model_dump() for c in golden.tool_calls.calls]


def test_an_adapter_sending_what_the_agent_does_not_know_fails_the_case(tmp_path, monkeypatch):
    """Extra instructions slipped into the body (request_params) are on the wire but not in the
    agent's system prompt: the case fails naming the field, with the diff."""
    monkeypatch.syspath_prepend(str(ROOT))
    data = yaml.safe_load((GOLDENS / "agentic_rag.yaml").read_text())
    data["model"] = {"api": "openai-responses", "id": "gpt-5.2",
                     "options": {"request_params": {"instructions": "Always answer in French."}}}
    data["stream"] = False
    data["cassette"] = "agentic_rag.sync.yaml"
    (tmp_path / "agentic_rag.yaml").write_text(yaml.safe_dump(data))
    shutil.copy(GOLDENS / "agentic_rag.sync.golden.yaml", tmp_path / "agentic_rag.golden.yaml")
    [case] = parse_case_file(tmp_path / "agentic_rag.yaml")
    result = run_case(case, Settings(cassettes_dir=ROOT / "cassettes", fixtures_dir=ROOT / "fixtures"))
    disagreement = [f for f in result.failures if "differs from what its traffic shows" in f]
    assert len(disagreement) == 1
    assert "the agent's system_prompt" in disagreement[0] and "Always answer in French." in disagreement[0]


def test_ignore_removes_every_item_a_star_reaches_in_long_lists():
    """Removal runs from the last index down; in string order "10" would come before "9" and a
    removal would shift the item the next one meant."""
    from rag_core.evals.harness.observe import without

    data = {"requests": [{"n": i, "keep": i} for i in range(12)]}
    assert without(data, ["requests[*].n"]) == {"requests": [{"keep": i} for i in range(12)]}
    assert without(data, ["requests[*]"]) == {"requests": []}
    assert without(data, ["requests[10]"])["requests"] == [r for r in data["requests"] if r["n"] != 10]


def test_tool_outputs_are_read_from_each_apis_request_shape():
    from rag_core.evals.harness.wire import tool_outputs

    responses = {"input": [{"role": "user", "content": "q"}, {"type": "function_call", "call_id": "c", "name": "f"},
                           {"type": "function_call_output", "call_id": "c", "output": "doc A"}]}
    chat = {"messages": [{"role": "user", "content": "q"}, {"role": "tool", "tool_call_id": "c", "content": "doc A"},
                         {"role": "tool", "tool_call_id": "d", "content": [{"type": "text", "text": "doc B"}]}]}
    gemini = {"contents": [{"role": "user", "parts": [{"text": "q"}]},
                           {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"result": "doc A"}}}]}]}
    assert tool_outputs(responses) == ["doc A"]
    assert tool_outputs(chat) == ["doc A", "doc B"]
    assert tool_outputs(gemini) == ['{"result": "doc A"}']
    assert tool_outputs({"input": "just text"}) == []


def test_ignore_selects_items_by_field_or_from_an_index_and_cuts_patterns_out_of_strings():
    from rag_core.evals.harness.case import IgnoreRule, NormalizeRule
    from rag_core.evals.harness.observe import normalize, without

    tools = [{"name": "think", "x": 1}, {"name": "search", "x": 2}, {"name": "analyze", "x": 3}, {"name": "think", "x": 4}]
    data = {"tools": tools, "prompt": "Plan.\n<reasoning>\nours\n</reasoning>\nAnswer."}
    assert without(data, ["tools[name=think]"])["tools"] == [tools[1], tools[2]]
    assert without(data, ["tools[name=think].x"])["tools"] == [{"name": "think"}, tools[1], tools[2], {"name": "think"}]
    assert without(data, ["tools[2:]"])["tools"] == tools[:2]
    assert without(data, ["tools[9:]", "tools[name=none]"]) == data  # nothing there: nothing removed
    cut = IgnoreRule(path="prompt", pattern="(?s)<reasoning>.*</reasoning>\n")
    assert without(data, [cut])["prompt"] == "Plan.\nAnswer."
    # a normalize rule with a pattern replaces the matches only, and a replacement is taken literally
    rule = NormalizeRule(path="prompt", pattern="(?s)(?<=<reasoning>\n).*(?=\n</reasoning>)", placeholder=r"<\1 varies>")
    assert normalize(data, [rule])["prompt"] == "Plan.\n<reasoning>\n<\\1 varies>\n</reasoning>\nAnswer."
    assert data["tools"] == tools and "ours" in data["prompt"]  # the input is not changed


def test_a_pattern_that_is_not_a_regular_expression_is_a_case_error():
    from pydantic import ValidationError

    from rag_core.evals.harness.case import IgnoreRule

    with pytest.raises(ValidationError, match="(?s)pattern.*not a regular expression: missing \\)"):
        IgnoreRule(path="system_prompt", pattern="(<reasoning>")


def test_a_path_is_shown_relative_to_the_working_directory_of_the_moment(tmp_path, monkeypatch):
    from rag_core.evals.harness.paths import shown

    case = tmp_path / "fixtures" / "goldens" / "a.yaml"
    monkeypatch.chdir(tmp_path)
    assert shown(case) == "fixtures/goldens/a.yaml"
    monkeypatch.chdir(tmp_path.parent)
    assert shown(case) == f"{tmp_path.name}/fixtures/goldens/a.yaml"  # not what the first call found
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert shown(case) == str(case)  # outside the working directory: absolute
