"""Golden fields read from provider traffic alone (rag_core/evals/wire/: traffic.py and a module per API family): on real
recordings made by other projects, and on every golden case of this project, where the wire
must agree with the agent's own account."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

from rag_core.evals.wire import parts, traffic
from rag_core.evals.wire.exchange import Exchange
from rag_core.providers import api_of
from rag_core.evals.golden.case import load_expect
from rag_core.evals.golden.case_files import case_files, parse_case_file
from rag_core.evals.recording.cassette_traffic import json_body
from rag_core.evals.golden.runner import Settings, run_case

from tests.recordings import interactions

# a path of each API the request-side readings below are given bodies of
RESPONSES, CHAT, GEMINI, MESSAGES = "/v1/responses", "/v1/chat/completions", "/v1beta/models/gemini-2.5-flash:generateContent", "/v1/messages"

ROOT = Path(__file__).resolve().parents[1]
GOLDENS = ROOT / "fixtures" / "goldens"


def _body_text(response: dict) -> str:
    """A recorded response body as text. Some recordings keep the body as the server sent it,
    gzip-compressed bytes (``!!binary``); the harness records with vcrpy's
    ``decode_compressed_response``, so it reads them decompressed, and so do these tests."""
    body = response["body"]["string"]
    if isinstance(body, bytes):
        body = gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body
        body = body.decode("utf-8")
    return body


def _exchanges(name: str) -> list[Exchange]:
    found = []
    for interaction in interactions(name):
        request, response = interaction["request"], interaction["response"]
        headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
        body = _body_text(response)
        stream = "event-stream" in str(headers.get("content-type", ""))
        found.append(Exchange(request["method"], urlparse(request["uri"]).path, json_body(request["body"]),
                                   response["status"]["code"], body if stream else json_body(body)))
    return found


def _sse(events: list, *, named: bool = False, done: bool = False) -> str:
    """Server-sent events as a provider frames them: ``data:`` lines (after an ``event:`` line
    naming the event's type where ``named``), ``data: [DONE]`` at the end where ``done``."""
    frames = [(f"event: {e['type']}\n" if named else "") + f"data: {json.dumps(e)}\n\n" for e in events]
    return "".join(frames) + ("data: [DONE]\n\n" if done else "")


@pytest.mark.parametrize(("method", "path", "api"), [
    ("POST", "/v1/responses", "openai-responses"),
    ("POST", "/openai/v1/chat/completions", "openai-chat"),
    ("POST", "/v1/embeddings", "openai-embeddings"),
    ("POST", "/v1beta/models/gemini-2.5-flash:generateContent", "gemini"),
    ("POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "gemini-stream"),
    ("POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", "gemini-stream"),
    ("POST", "/v1beta/models/gemini-embedding-001:batchEmbedContents", "gemini-embeddings"),
    ("POST", "/v2/chat", "cohere-chat"),
    ("POST", "/v2/embed", "cohere-embed"),
    ("POST", "/v2/rerank", "cohere-rerank"),
    ("POST", "/v1/messages", "anthropic-messages"),
    ("POST", "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse", "bedrock-converse"),
    ("POST", "/model/amazon.nova-lite-v1%3A0/converse-stream", "bedrock-converse-stream"),
    ("POST", "/v1/threads/thread_abc/messages", None),  # OpenAI Assistants: not the Messages API
    ("GET", "/v1/models", None),
    ("POST", "/v1/files", None),
])
def test_the_api_is_named_from_method_and_path(method, path, api):
    assert api_of(method, path) == api


def test_real_responses_tool_round_trip():
    seen = traffic.fields_of(_exchanges("openai/responses_tool_call_roundtrip_nonstream_gpt-4o.yaml"), [0])
    assert seen["apis"] == ["openai-responses", "openai-responses"]
    assert seen["user_messages"] == ["What is the capital of PotatoLand?"]
    assert [t["name"] for t in seen["tools"]] == ["get_capital"]
    assert seen["tools"][0]["parameters"]["required"] == ["country"]
    assert seen["tool_calls"] == {"calls": [{"name": "get_capital", "arguments": {"country": "PotatoLand"}}]}
    assert seen["final_text"] == "The capital of PotatoLand is Potato City."
    assert seen["usage"]["total_tokens"] == seen["usage"]["input_tokens"] + seen["usage"]["output_tokens"]


def test_real_chat_stream_is_assembled_from_its_deltas():
    seen = traffic.fields_of(_exchanges("openai/chat_stream_tool_call_include_usage_roundtrip_gpt-4o-mini.yaml"), [0])
    assert seen["tool_calls"] == {"calls": [{"name": "get_capital", "arguments": {"country": "UK"}}]}
    assert seen["final_text"] == "The capital of the UK is London."
    assert seen["tools"] == [{"name": "get_capital", "description": "", "parameters": {
        "additionalProperties": False, "properties": {"country": {"type": "string"}}, "required": ["country"],
        "type": "object"}}]
    assert seen["usage"] == {"input_tokens": 131, "output_tokens": 24, "total_tokens": 155}


def test_real_responses_stream_reads_the_completed_event():
    seen = traffic.fields_of(_exchanges("openai/responses_stream_reasoning_tool_call_gpt-5.yaml"), [0])
    assert seen["tool_calls"] == {"calls": [{"name": "final_result", "arguments": {"result": 6666}}]}
    assert seen["final_text"] is None  # the answer is a tool call; reasoning is not text


def test_real_gemini_round_trip_skips_the_function_response_turn():
    seen = traffic.fields_of(_exchanges("gemini/gemini_generatecontent_function_call_roundtrip_2.0-flash.yaml"), [0])
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
    assert traffic.tools(GEMINI, declared("parameters", str.upper)) == traffic.tools(GEMINI, declared("parameters_json_schema", str)) == [
        {"name": "search", "description": "d", "parameters": expected}]


def test_real_cohere_chat_tool_call():
    seen = traffic.fields_of(_exchanges("cohere/cohere_v2_chat_tool_call_command-r.yaml"), [0])
    assert seen["apis"] == ["cohere-chat"]
    assert seen["tool_calls"] == {"calls": [{"name": "Person", "arguments": {"age": 27, "name": "Erick"}}]}


def test_error_answers_and_non_chat_traffic_give_no_answer():
    for name in ("openai/embeddings_error_404_model_not_found.yaml", "cohere/cohere_v2_rerank_rerank-v3.5.yaml"):
        seen = traffic.fields_of(_exchanges(name), [0])
        assert seen["system_prompt"] is None and seen["tool_calls"] == {"calls": []} and seen["usage"] == {}


def test_system_prompt_in_each_wire_shape():
    assert traffic.system_prompt(RESPONSES, {"instructions": "Be brief.", "input": "hi"}) == "Be brief."
    assert traffic.system_prompt(RESPONSES, {"input": [{"role": "developer", "content": [{"type": "input_text", "text": "A"}]},
                                                       {"role": "user", "content": "hi"}]}) == "A"
    assert traffic.system_prompt(CHAT, {"messages": [{"role": "system", "content": "S"},
                                                     {"role": "user", "content": "u"}]}) == "S"
    assert traffic.system_prompt(GEMINI, {"contents": [], "systemInstruction": {"parts": [{"text": "G"}]}}) == "G"
    assert traffic.system_prompt(CHAT, {"messages": [{"role": "user", "content": "u"}]}) is None


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
    assert seen["tools"] == [parts.neutral_tool(t) for t in golden.tools]
    assert seen["tool_calls"]["calls"] == [c.as_read() for c in golden.tool_calls.calls]


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
    disagreement = [f.text() for f in result.failures if f.check == "agreement"]
    assert len(disagreement) == 1
    assert "the agent's system_prompt" in disagreement[0] and "Always answer in French." in disagreement[0]


def test_ignore_removes_every_item_a_star_reaches_in_long_lists():
    """Removal runs from the last index down; in string order "10" would come before "9" and a
    removal would shift the item the next one meant."""
    from rag_core.evals.golden.normalizing import without

    data = {"requests": [{"n": i, "keep": i} for i in range(12)]}
    assert without(data, ["requests[*].n"]) == {"requests": [{"keep": i} for i in range(12)]}
    assert without(data, ["requests[*]"]) == {"requests": []}
    assert without(data, ["requests[10]"])["requests"] == [r for r in data["requests"] if r["n"] != 10]


def test_tool_outputs_are_read_from_each_apis_request_shape():
    responses = {"input": [{"role": "user", "content": "q"}, {"type": "function_call", "call_id": "c", "name": "f"},
                           {"type": "function_call_output", "call_id": "c", "output": "doc A"}]}
    chat = {"messages": [{"role": "user", "content": "q"}, {"role": "tool", "tool_call_id": "c", "content": "doc A"},
                         {"role": "tool", "tool_call_id": "d", "content": [{"type": "text", "text": "doc B"}]}]}
    gemini = {"contents": [{"role": "user", "parts": [{"text": "q"}]},
                           {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"result": "doc A"}}}]}]}
    assert traffic.tool_outputs(RESPONSES, responses) == ["doc A"]
    assert traffic.tool_outputs(CHAT, chat) == ["doc A", "doc B"]
    assert traffic.tool_outputs(GEMINI, gemini) == ['{"result": "doc A"}']
    assert traffic.tool_outputs(RESPONSES, {"input": "just text"}) == []


def test_ignore_selects_items_by_field_or_from_an_index_and_cuts_patterns_out_of_strings():
    from rag_core.evals.golden.normalize_rules import IgnoreRule, NormalizeRule
    from rag_core.evals.golden.normalizing import normalize, without

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

    from rag_core.evals.golden.normalize_rules import IgnoreRule

    with pytest.raises(ValidationError, match="(?s)pattern.*not a regular expression: missing \\)"):
        IgnoreRule(path="system_prompt", pattern="(<reasoning>")


def test_a_path_is_shown_relative_to_the_working_directory_of_the_moment(tmp_path, monkeypatch):
    from rag_core.evals.common.paths import shown

    case = tmp_path / "fixtures" / "goldens" / "a.yaml"
    monkeypatch.chdir(tmp_path)
    assert shown(case) == "fixtures/goldens/a.yaml"
    monkeypatch.chdir(tmp_path.parent)
    assert shown(case) == f"{tmp_path.name}/fixtures/goldens/a.yaml"  # not what the first call found
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert shown(case) == str(case)  # outside the working directory: absolute


# --- defects found in the wire readings: each test shows one ---------------------------------------

def _gemini_response(usage: dict, parts: list | None = None) -> dict:
    """A generateContent answer built with google-genai's own types, as the API spells it (camelCase)."""
    from google.genai import types

    response = types.GenerateContentResponse(
        candidates=[types.Candidate(content=types.Content(role="model", parts=parts or [types.Part(text="Paris.")]),
                                    finish_reason=types.FinishReason.STOP)],
        usage_metadata=types.GenerateContentResponseUsageMetadata(**usage))
    return response.model_dump(mode="json", by_alias=True, exclude_none=True)


def test_gemini_usage_counts_thoughts_as_output_and_tool_use_prompts_as_input():
    """Gemini reports thinking (``thoughtsTokenCount``) and the prompt of a built-in tool's call
    (``toolUsePromptTokenCount``) apart from ``candidatesTokenCount`` and ``promptTokenCount``,
    and counts them in ``totalTokenCount``. Read as OpenAI's usage is (whose output includes
    reasoning), input + output is the total. Bodies built with google-genai's types."""
    thinking = _gemini_response({"prompt_token_count": 136, "candidates_token_count": 16, "thoughts_token_count": 76,
                                 "total_token_count": 228})
    assert thinking["usageMetadata"]["thoughtsTokenCount"] == 76  # the wire spelling
    exchange = Exchange("POST", "/v1beta/models/gemini-2.5-flash:generateContent", {"contents": []}, 200, thinking)
    assert traffic.answer(exchange).usage == {"input_tokens": 136, "output_tokens": 92, "total_tokens": 228}

    searched = _gemini_response({"prompt_token_count": 100, "tool_use_prompt_token_count": 40,
                                 "candidates_token_count": 10, "thoughts_token_count": 5, "total_token_count": 155})
    exchange = Exchange("POST", "/v1beta/models/gemini-2.5-flash:generateContent", {"contents": []}, 200, searched)
    usage = traffic.answer(exchange).usage
    assert usage == {"input_tokens": 140, "output_tokens": 15, "total_tokens": 155}
    assert usage["input_tokens"] + usage["output_tokens"] == usage["total_tokens"]


def test_gemini_built_in_tools_are_kept_under_their_type():
    """``codeExecution``, ``googleSearch``, ``urlContext`` and ``fileSearch`` are Gemini's
    built-in tools: kept under their type (as Responses' ``web_search`` is), not read as a
    function named None; one tool object may hold declarations and built-in tools side by side,
    and the REST API's snake_case spelling reads the same. Bodies built with google-genai's types."""
    from google.genai import types

    from rag_core.evals.wire.gemini import validate_body as validate_gemini_body

    declaration = types.FunctionDeclaration(name="lookup", description="d", parameters_json_schema={"type": "object"})
    sent = [types.Tool(function_declarations=[declaration]), types.Tool(code_execution=types.ToolCodeExecution()),
            types.Tool(google_search=types.GoogleSearch()), types.Tool(url_context=types.UrlContext()),
            types.Tool(file_search=types.FileSearch(file_search_store_names=["fileSearchStores/recipes"]))]
    body = {"contents": [], "tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in sent]}
    validate_gemini_body(body)
    expected = [{"name": "lookup", "description": "d", "parameters": {"type": "object"}}, {"type": "codeExecution"},
                {"type": "googleSearch"}, {"type": "urlContext"}, {"type": "fileSearch"}]
    assert traffic.tools(GEMINI, body) == expected

    snake = {"contents": [], "tools": [t.model_dump(mode="json", exclude_none=True) for t in sent]}
    assert "google_search" in snake["tools"][2]
    assert traffic.tools(GEMINI, snake) == expected
    together = {"contents": [], "tools": [{"functionDeclarations": body["tools"][0]["functionDeclarations"],
                                           "googleSearch": {}}]}
    assert traffic.tools(GEMINI, together) == [expected[0], {"type": "googleSearch"}]


def test_gemini_tools_sent_as_one_object_are_read():
    """The Gemini API accepts ``tools`` as a single Tool object where a list is documented (JSON
    mapping of a repeated field); it offers the same tools as the one-item list."""
    listed = {"contents": [], "tools": [{"functionDeclarations": [
        {"name": "lookup", "description": "d", "parameters": {"type": "OBJECT", "properties": {}}}]}]}
    single = {"contents": [], "tools": listed["tools"][0]}
    assert traffic.tools(GEMINI, single) == traffic.tools(GEMINI, listed) == [
        {"name": "lookup", "description": "d", "parameters": {"type": "object", "properties": {}}}]


def test_chat_deprecated_functions_are_read_as_tools_and_tool_calls():
    """Chat Completions' deprecated ``functions`` (request) and ``function_call`` (answer, and
    ``delta.function_call`` in streams) are tools and tool calls; a ``function`` role message is
    a tool result. Bodies built with the openai SDK's own types (params validated, responses
    dumped from ``ChatCompletion`` / ``ChatCompletionChunk``)."""
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

    from rag_core.evals.wire.openai import validate_chat_body

    function = {"name": "lookup_recipe", "description": "Find a recipe.",
                "parameters": {"type": "object", "properties": {"dish": {"type": "string"}}, "required": ["dish"]}}
    first = {"model": "gpt-3.5-turbo", "functions": [function], "function_call": "auto",
             "messages": [{"role": "user", "content": "How do I make pad thai?"}]}
    second = dict(first, messages=first["messages"] + [
        {"role": "assistant", "content": None,
         "function_call": {"name": "lookup_recipe", "arguments": '{"dish":"pad thai"}'}},
        {"role": "function", "name": "lookup_recipe", "content": "Soak rice noodles."}])
    for body in (first, second):
        validate_chat_body(body)
    called = ChatCompletion.model_validate({
        "id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-3.5-turbo",
        "choices": [{"index": 0, "finish_reason": "function_call", "message": {
            "role": "assistant", "content": None,
            "function_call": {"name": "lookup_recipe", "arguments": '{"dish":"pad thai"}'}}}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}}).model_dump(mode="json")
    chunks = [ChatCompletionChunk.model_validate({
        "id": "c2", "object": "chat.completion.chunk", "created": 1, "model": "gpt-3.5-turbo",
        "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}).model_dump(mode="json", exclude_none=True)
        for delta in ({"role": "assistant", "function_call": {"name": "lookup_recipe", "arguments": ""}},
                      {"function_call": {"arguments": '{"dish":'}}, {"function_call": {"arguments": '"pad thai"}'}})]
    path = "/v1/chat/completions"
    seen = traffic.fields_of([Exchange("POST", path, first, 200, called),
                         Exchange("POST", path, second, 200, _sse(chunks, done=True))], [0])
    assert seen["tools"] == [function]
    assert seen["tool_calls"] == {"calls": [{"name": "lookup_recipe", "arguments": {"dish": "pad thai"}}] * 2}
    assert seen["tool_outputs"] == ["Soak rice noodles."]
    assert seen["usage"] == {"input_tokens": 50, "output_tokens": 10, "total_tokens": 60}
    assert traffic.prompt_prefix(path, first)["tools"] == [function]


def _cohere_client(answer: str, content_type: str, sent: list):
    """A cohere ClientV2 whose requests are answered with ``answer`` (and their JSON bodies kept in ``sent``)."""
    import cohere
    import httpx

    def handle(request):
        sent.append(json.loads(request.read()))
        return httpx.Response(200, content=answer.encode(), headers={"content-type": content_type})

    return cohere.ClientV2(api_key="k", httpx_client=httpx.Client(transport=httpx.MockTransport(handle)))


# a Cohere v2 chat stream, event by event as the v2 chat API reference documents them
COHERE_TOOL_STREAM = [
    {"type": "message-start", "id": "m1", "delta": {"message": {"role": "assistant"}}},
    {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "I will look the recipe up."}}},
    {"type": "tool-call-start", "index": 0, "delta": {"message": {"tool_calls": {
        "id": "lookup_recipe_1", "type": "function", "function": {"name": "lookup_recipe", "arguments": ""}}}}},
    {"type": "tool-call-delta", "index": 0,
     "delta": {"message": {"tool_calls": {"function": {"arguments": '{"dish":'}}}}},
    {"type": "tool-call-delta", "index": 0,
     "delta": {"message": {"tool_calls": {"function": {"arguments": ' "pad thai"}'}}}}},
    {"type": "tool-call-end", "index": 0},
    {"type": "message-end", "delta": {"finish_reason": "TOOL_CALL", "usage": {
        "billed_units": {"input_tokens": 20, "output_tokens": 12},
        "tokens": {"input_tokens": 900, "output_tokens": 30}}}},
]
COHERE_TEXT_STREAM = [
    {"type": "message-start", "id": "m2", "delta": {"message": {"role": "assistant"}}},
    {"type": "content-start", "index": 0, "delta": {"message": {"content": {"type": "thinking", "thinking": ""}}}},
    {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"thinking": "The recipe says soak."}}}},
    {"type": "content-end", "index": 0},
    {"type": "content-start", "index": 1, "delta": {"message": {"content": {"type": "text", "text": ""}}}},
    {"type": "content-delta", "index": 1, "delta": {"message": {"content": {"text": "Soak rice noodles, "}}}},
    {"type": "content-delta", "index": 1, "delta": {"message": {"content": {"text": "then fry them."}}}},
    {"type": "content-end", "index": 1},
    {"type": "message-end", "delta": {"finish_reason": "COMPLETE", "usage": {
        "billed_units": {"input_tokens": 30, "output_tokens": 8},
        "tokens": {"input_tokens": 950, "output_tokens": 25}}}},
]


def test_cohere_chat_streams_are_assembled():
    """A Cohere v2 chat stream (``data:`` events, then ``data: [DONE]``) delivers its answer in
    content deltas, its tool calls in tool-call start/delta events and its usage in
    ``message-end``: assembled as OpenAI and Gemini streams are. The events follow the v2 chat
    API reference; the cohere SDK's own stream parser reads each as the event type it names."""
    from cohere.v2.types import ContentDeltaV2ChatStreamResponse, MessageEndV2ChatStreamResponse

    for events, expected in ((COHERE_TOOL_STREAM, ([{"name": "lookup_recipe", "arguments": {"dish": "pad thai"}}], None,
                                                   {"input_tokens": 900, "output_tokens": 30, "total_tokens": 930})),
                             (COHERE_TEXT_STREAM, ([], "Soak rice noodles, then fry them.",
                                                   {"input_tokens": 950, "output_tokens": 25, "total_tokens": 975}))):
        stream, sent = _sse(events, named=True, done=True), []
        parsed = list(_cohere_client(stream, "text/event-stream", sent).chat_stream(
            model="command-a-03-2025", messages=[{"role": "user", "content": "How do I make pad thai?"}]))
        assert [p.type for p in parsed] == [e["type"] for e in events]  # the SDK knows every event
        end = parsed[-1]
        assert isinstance(end, MessageEndV2ChatStreamResponse) and end.delta.usage.tokens.output_tokens is not None
        sdk_text = "".join(p.delta.message.content.text or "" for p in parsed
                           if isinstance(p, ContentDeltaV2ChatStreamResponse))
        exchange = Exchange("POST", "/v2/chat", sent[0], 200, stream)
        got = traffic.answer(exchange)
        assert got is not None
        calls, text, usage = expected
        assert (got.tool_calls, got.text, got.usage) == (calls, text, usage)
        if text is not None:  # the SDK's deltas also carry the thinking, which is not the answer
            assert sdk_text == text


def test_cohere_document_tool_results_are_tool_outputs():
    """A Cohere v2 tool message may carry its result as ``document`` content parts
    (``{"type": "document", "document": {"data": {...}}}``): their data is what the tool
    returned. The request body is the one the cohere SDK itself sends (captured at its transport)."""
    import cohere

    sent: list = []
    answer = json.dumps({"id": "r", "finish_reason": "COMPLETE", "message": {
        "role": "assistant", "content": [{"type": "text", "text": "Soak the noodles."}]},
        "usage": {"tokens": {"input_tokens": 10, "output_tokens": 4}}})
    recipe = {"title": "Pad thai", "snippet": "Soak rice noodles, then fry them."}
    _cohere_client(answer, "application/json", sent).chat(model="command-a-03-2025", messages=[
        cohere.UserChatMessageV2(content="How do I make pad thai?"),
        cohere.AssistantChatMessageV2(tool_calls=[cohere.ToolCallV2(
            id="c1", type="function", function=cohere.ToolCallV2Function(name="lookup_recipe",
                                                                        arguments='{"dish": "pad thai"}'))]),
        cohere.ToolChatMessageV2(tool_call_id="c1", content=[
            cohere.DocumentToolContent(document=cohere.Document(data=recipe, id="doc-1"))]),
    ])
    body = sent[0]
    assert body["messages"][2]["content"] == [{"type": "document", "document": {"data": recipe, "id": "doc-1"}}]
    assert traffic.tool_outputs("/v2/chat", body) == [json.dumps(recipe, ensure_ascii=False)]
    mixed = {"messages": [{"role": "tool", "tool_call_id": "c1", "content": [
        {"type": "text", "text": "Two recipes:"}, {"type": "document", "document": {"data": recipe}},
        {"type": "document", "document": {"data": {"title": "Tom kha gai"}}}]}]}
    assert traffic.tool_outputs("/v2/chat", mixed) == ["Two recipes:", json.dumps(recipe), '{"title": "Tom kha gai"}']


def test_responses_function_call_output_as_a_list_of_parts_reads_its_text():
    """A Responses ``function_call_output`` may give its ``output`` as a list of input parts
    (text, images, files): its text parts are read, as Chat's list content is, and an image's
    base64 data is not dumped into the tool outputs. Body validated against the openai SDK's
    ``ResponseCreateParams``."""
    from rag_core.evals.wire.openai import validate_responses_body

    image = "data:image/png;base64," + "iVBORw0KGgo" * 20
    body = {"model": "gpt-5", "input": [
        {"role": "user", "content": "What is on the menu?"},
        {"type": "function_call", "call_id": "c1", "name": "menu", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": [
            {"type": "input_text", "text": "Pad thai. "}, {"type": "input_image", "image_url": image, "detail": "auto"},
            {"type": "input_text", "text": "Tom kha gai."}]},
        {"type": "function_call", "call_id": "c2", "name": "photo", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c2", "output": [{"type": "input_image", "image_url": image}]}]}
    validate_responses_body(body)
    assert traffic.tool_outputs(RESPONSES, body) == ["Pad thai. Tom kha gai."]


def test_gemini_streams_are_named_apart_from_generate_content():
    """``apis:`` tells a streamed Gemini call (``streamGenerateContent``, SSE with ``alt=sse`` or
    one JSON array without) from a plain one; both are read as chat traffic."""
    chunks = [_gemini_response({"prompt_token_count": 5, "candidates_token_count": 1, "total_token_count": 6}),
              _gemini_response({"prompt_token_count": 5, "candidates_token_count": 2, "total_token_count": 7},
                               parts=[{"text": " It is."}])]
    request = {"contents": [{"role": "user", "parts": [{"text": "Capital of France?"}]}]}
    base = "/v1beta/models/gemini-2.5-flash"
    seen = traffic.fields_of([Exchange("POST", f"{base}:streamGenerateContent", request, 200, _sse(chunks)),
                         Exchange("POST", f"{base}:streamGenerateContent", request, 200, chunks),
                         Exchange("POST", f"{base}:generateContent", request, 200, chunks[0])], [0, 1, 2])
    assert seen["apis"] == ["gemini-stream", "gemini-stream", "gemini"]
    assert seen["user_messages"] == ["Capital of France?"] * 3
    assert seen["final_text"] == "Paris."
    assert seen["usage"] == {"input_tokens": 15, "output_tokens": 5, "total_tokens": 20}
    assert traffic.answer(Exchange("POST", f"{base}:streamGenerateContent", request, 200, _sse(chunks))).text == (
        "Paris. It is.")


# --- Anthropic's Messages API ------------------------------------------------------------------

def test_real_anthropic_stream_tool_round_trip():
    seen = traffic.fields_of(_exchanges("anthropic/llm_anthropic_test_tools.yaml"), [0])
    assert seen["apis"] == ["anthropic-messages", "anthropic-messages"]
    assert seen["system_prompt"] is None
    assert seen["user_messages"] == ["Two names for a pet pelican"]
    assert seen["tools"] == [{"name": "pelican_name_generator", "description": "",
                              "parameters": {"properties": {}, "type": "object"}}]
    assert seen["tool_calls"] == {"calls": [{"name": "pelican_name_generator", "arguments": {}}] * 2}
    # the tool_result blocks come back with role user: tool outputs, not what the user said
    assert seen["tool_outputs"] == ["Charles", "Sammy"]
    assert seen["final_text"].startswith("Here are two great names for your pet pelican:\n\n1. **Charles**")
    assert seen["usage"] == {"input_tokens": 542 + 678, "output_tokens": 62 + 82, "total_tokens": 542 + 678 + 62 + 82}


def test_real_anthropic_stream_with_thinking_reads_no_thinking_as_text():
    seen = traffic.fields_of(_exchanges(
        "anthropic/llm_anthropic_test_fixed_version_tool_chain_with_thinking_display_regression.yaml"), [0])
    assert seen["tool_calls"] == {"calls": [{"name": "fixed_version", "arguments": {}}]}
    assert seen["tools"] == [{"name": "fixed_version", "description": "Return a fixed test version string",
                              "parameters": {"properties": {}, "type": "object"}}]
    assert seen["tool_outputs"] == ["0.32a0"]
    assert seen["final_text"].startswith("The version is **0.32a0**.")
    assert "call the fixed_version" not in seen["final_text"]  # the thinking block
    # output_tokens (92) already holds the 53 thinking tokens
    assert seen["usage"] == {"input_tokens": 598 + 707, "output_tokens": 92 + 89, "total_tokens": 598 + 707 + 92 + 89}

    adaptive = traffic.fields_of(_exchanges("anthropic/llm_anthropic_test_opus_46_adaptive_thinking.yaml"), [0])
    # text, thinking, text: the text blocks joined, as the SDK's get_final_text() joins them
    assert adaptive["final_text"] == "\n\n1. **Captain Scoop**\n2. **Gullet**"


def test_real_anthropic_web_search_is_a_server_tool():
    seen = traffic.fields_of(_exchanges("anthropic/llm_anthropic_test_web_search.yaml"), [0])
    assert seen["tools"] == [{"type": "web_search_20250305"}]
    assert seen["tool_calls"] == {"calls": []}  # server_tool_use ran at Anthropic: no call for the caller to run
    assert "San Francisco" in seen["final_text"]
    # message_start said 2039 input tokens; message_delta's running total (10423) replaces it
    assert seen["usage"] == {"input_tokens": 10423, "output_tokens": 341, "total_tokens": 10764}


def test_real_anthropic_structured_output_prefill_and_turns():
    schema = traffic.fields_of(_exchanges("anthropic/llm_anthropic_test_opus_46_schema.yaml"), [0])
    assert set(json.loads(schema["final_text"])) == {"name", "age", "bio"}
    assert schema["usage"] == {"input_tokens": 231, "output_tokens": 118, "total_tokens": 349}
    prefill = traffic.fields_of(_exchanges("anthropic/llm_anthropic_test_prompt_with_prefill_and_stop_sequences.yaml"), [0])
    assert prefill["user_messages"] == ["Very short function describing a pelican"]  # not the assistant's prefill
    assert prefill["final_text"].startswith("\ndef pelican():")
    turns = traffic.fields_of(_exchanges("anthropic/llm_anthropic_test_async_prompt.yaml"), [0, 1])
    assert turns["user_messages"] == ["Two names for a pet pelican, be brief", "in french"]
    assert turns["final_text"] == "- Capitaine\n- Bec (beak)"


def test_anthropic_json_answer_system_blocks_and_cache_usage():
    """The non-streamed Messages API, which no shared recording shows: the request is validated
    against the anthropic SDK's ``MessageCreateParamsNonStreaming``, the answer is what the SDK's
    ``Message`` type dumps, and ``client.messages.create`` reads it back the same. Input counts
    cache writes and reads (which Anthropic's ``input_tokens`` leaves out)."""
    import anthropic
    import httpx2
    from anthropic.types import Message, message_create_params
    from pydantic import TypeAdapter

    schema = {"type": "object", "properties": {"dish": {"type": "string"}}, "required": ["dish"]}
    request = {"model": "claude-opus-4-6", "max_tokens": 1024,
               "system": [{"type": "text", "text": "You answer from the cookbook."},
                          {"type": "text", "text": " Be brief.", "cache_control": {"type": "ephemeral"}}],
               "tools": [{"name": "lookup_recipe", "description": "Find a recipe.", "input_schema": schema},
                         {"type": "custom", "name": "rate", "input_schema": {"type": "object"}},
                         {"type": "web_search_20250305", "name": "web_search", "max_uses": 2}],
               "messages": [{"role": "user", "content": "How do I make pad thai?"},
                            {"role": "assistant", "content": [
                                {"type": "tool_use", "id": "toolu_1", "name": "lookup_recipe",
                                 "input": {"dish": "pad thai"}}]},
                            {"role": "user", "content": [
                                {"type": "tool_result", "tool_use_id": "toolu_1",
                                 "content": [{"type": "text", "text": "Soak rice noodles."}]},
                                {"type": "text", "text": "And quickly please."}]}]}
    TypeAdapter(message_create_params.MessageCreateParamsNonStreaming).validate_python(request)
    message = Message.model_validate({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-4-6", "stop_reason": "tool_use",
        "stop_sequence": None,
        "content": [{"type": "thinking", "thinking": "Look it up.", "signature": "s"},
                    {"type": "text", "text": "Checking. "},
                    {"type": "tool_use", "id": "toolu_2", "name": "rate", "input": {"stars": 5}}],
        "usage": {"input_tokens": 10, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 1000,
                  "output_tokens": 50}})
    body = message.model_dump(mode="json", exclude_none=True)
    client = anthropic.Anthropic(api_key="k", http_client=httpx2.Client(transport=httpx2.MockTransport(
        lambda _: httpx2.Response(200, json=body))))
    assert client.messages.create(**request) == message

    seen = traffic.fields_of([Exchange("POST", "/v1/messages", request, 200, body)], [0])
    assert seen["system_prompt"] == "You answer from the cookbook. Be brief."
    assert seen["user_messages"] == ["And quickly please."]
    assert seen["tools"] == [{"name": "lookup_recipe", "description": "Find a recipe.", "parameters": schema},
                             {"name": "rate", "parameters": {"type": "object"}}, {"type": "web_search_20250305"}]
    assert seen["tool_outputs"] == ["Soak rice noodles."]
    assert seen["tool_calls"] == {"calls": [{"name": "rate", "arguments": {"stars": 5}}]}
    assert seen["final_text"] == "Checking. "
    assert seen["usage"] == {"input_tokens": 1110, "output_tokens": 50, "total_tokens": 1160}
    assert traffic.system_prompt(MESSAGES, dict(request, system="Plain.")) == "Plain."
    assert traffic.prompt_prefix(MESSAGES, request) == {"system": request["system"], "tools": request["tools"]}


def test_anthropic_stream_assembles_tool_input_from_partial_json():
    """The shared recordings' tool calls all have empty input; here a tool_use block's input
    arrives in ``input_json_delta`` pieces, and a message_delta leaves cache counts out (they
    keep message_start's values). Events as the anthropic SDK's accumulation reads them: its
    ``messages.stream(...).get_final_message()`` gives the same call and usage."""
    import anthropic
    import httpx2

    events = [
        {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [],
                                              "model": "claude-haiku-4-5", "stop_reason": None, "stop_sequence": None,
                                              "usage": {"input_tokens": 20, "cache_read_input_tokens": 500,
                                                        "cache_creation_input_tokens": 0, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Looking it up."}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1,
         "content_block": {"type": "tool_use", "id": "toolu_1", "name": "lookup_recipe", "input": {}}},
        {"type": "content_block_delta", "index": 1,
         "delta": {"type": "input_json_delta", "partial_json": '{"dish": "pa'}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": 'd thai"}'}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"output_tokens": 40}},
        {"type": "message_stop"},
    ]
    stream = _sse(events, named=True)
    client = anthropic.Anthropic(api_key="k", http_client=httpx2.Client(transport=httpx2.MockTransport(
        lambda _: httpx2.Response(200, content=stream.encode(), headers={"content-type": "text/event-stream"}))))
    ask = [{"role": "user", "content": "x"}]
    with client.messages.stream(model="claude-haiku-4-5", max_tokens=64, messages=ask) as s:
        final = s.get_final_message()
    got = traffic.answer(Exchange("POST", "/v1/messages", {"messages": []}, 200, stream))
    sdk_calls = [{"name": b.name, "arguments": b.input} for b in final.content if b.type == "tool_use"]
    assert got.tool_calls == sdk_calls == [{"name": "lookup_recipe", "arguments": {"dish": "pad thai"}}]
    assert got.text == "Looking it up."
    assert got.usage == {"input_tokens": final.usage.input_tokens + final.usage.cache_read_input_tokens,
                         "output_tokens": final.usage.output_tokens, "total_tokens": 560}


# --- AWS Bedrock Converse -----------------------------------------------------------------------

def _bedrock_request(params: dict) -> tuple[str, dict]:
    """The path and JSON body botocore itself sends for a Converse call (params validated
    against the bedrock-runtime service model)."""
    import botocore.session
    from botocore import serialize, validate

    operation = botocore.session.get_session().get_service_model("bedrock-runtime").operation_model("Converse")
    validate.validate_parameters(params, operation.input_shape)
    request = serialize.create_serializer("rest-json").serialize_to_request(params, operation)
    return request["url_path"], json.loads(request["body"])


def test_bedrock_converse_is_read_from_bodies_botocore_builds():
    """Bedrock Converse, on bodies serialised by botocore from its bedrock-runtime service model
    (request) and validated against the model's ``ConverseResponse`` shape (answers). Usage as
    Bedrock counts it: ``totalTokens`` includes cache reads and writes, so input does too."""
    pytest.importorskip("botocore", reason="botocore is not installed (the frameworks extra)")
    import botocore.session
    from botocore import validate

    schema = {"type": "object", "properties": {"dish": {"type": "string"}}, "required": ["dish"]}
    ask = [{"role": "user", "content": [{"text": "How do I make pad thai?"}]}]
    tools = {"tools": [{"toolSpec": {"name": "lookup_recipe", "description": "Find a recipe.",
                                     "inputSchema": {"json": schema}}}, {"cachePoint": {"type": "default"}}]}
    system = [{"text": "You answer from the cookbook."}, {"cachePoint": {"type": "default"}}]
    model = "anthropic.claude-3-5-sonnet-20240620-v1:0"
    path, first = _bedrock_request({"modelId": model, "system": system, "messages": ask, "toolConfig": tools})
    called = {"role": "assistant", "content": [
        {"text": "Let me look."},
        {"toolUse": {"toolUseId": "t1", "name": "lookup_recipe", "input": {"dish": "pad thai"}}}]}
    _, second = _bedrock_request({"modelId": model, "system": system, "toolConfig": tools, "messages": ask + [
        called, {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [
            {"text": "Soak rice noodles."}, {"json": {"minutes": 20}}]}}]}]})
    answers = [
        {"output": {"message": called}, "stopReason": "tool_use", "metrics": {"latencyMs": 10},
         "usage": {"inputTokens": 4, "outputTokens": 20, "totalTokens": 4024, "cacheWriteInputTokens": 4000,
                   "cacheReadInputTokens": 0}},
        {"output": {"message": {"role": "assistant", "content": [{"text": "Soak the noodles, then fry."}]}},
         "stopReason": "end_turn", "metrics": {"latencyMs": 10},
         "usage": {"inputTokens": 30, "outputTokens": 8, "totalTokens": 4038, "cacheReadInputTokens": 4000}}]
    output_shape = botocore.session.get_session().get_service_model("bedrock-runtime").operation_model(
        "Converse").output_shape
    for body in answers:
        validate.validate_parameters(body, output_shape)
    assert path == "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse"
    seen = traffic.fields_of([Exchange("POST", path, first, 200, answers[0]),
                         Exchange("POST", path, second, 200, answers[1])], [0])
    assert seen["apis"] == ["bedrock-converse", "bedrock-converse"]
    assert seen["system_prompt"] == "You answer from the cookbook."
    assert seen["user_messages"] == ["How do I make pad thai?"]
    assert seen["tools"] == [{"name": "lookup_recipe", "description": "Find a recipe.", "parameters": schema}]
    assert seen["tool_calls"] == {"calls": [{"name": "lookup_recipe", "arguments": {"dish": "pad thai"}}]}
    assert seen["tool_outputs"] == ['Soak rice noodles.{"minutes": 20}']
    assert seen["final_text"] == "Soak the noodles, then fry."
    assert seen["usage"] == {"input_tokens": 4004 + 4030, "output_tokens": 28, "total_tokens": 4024 + 4038}
    assert traffic.prompt_prefix(path, second) == {"system": system, "tools": tools["tools"]}
    # ConverseStream's request reads the same, and its answer is read from AWS's binary event stream
    from rag_core.evals.emulator import bedrock
    from rag_core.evals.emulator.script import DeterministicIds, ScriptedTurn

    turn = ScriptedTurn(text="Let me look.", tool_calls=[{"name": "lookup_recipe", "arguments": {"dish": "pad thai"}}])
    _, _, frames, _ = bedrock.answer(turn, path + "-stream", first, DeterministicIds("wire"))
    stream = traffic.fields_of([Exchange("POST", path + "-stream", first, 200, frames)], [0])
    assert stream["apis"] == ["bedrock-converse-stream"] and stream["tools"] == seen["tools"]
    assert stream["tool_calls"] == seen["tool_calls"] and stream["final_text"] == "Let me look."
    usage = stream["usage"]
    assert usage["input_tokens"] > 0 and usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


def test_bedrock_server_tool_use_is_kept_in_the_tool_calls():
    """A tool Bedrock runs itself (Nova's code interpreter: a ``toolUse`` of type
    ``server_tool_use``, answered by a ``toolResult`` in the same message) is a tool call of the
    golden, marked with that type and carrying its result; the client tool after it is a plain call."""
    output = [{"json": {"stdOut": "7006652", "stdErr": "", "exitCode": 0, "isError": False}}]
    response = {"output": {"message": {"role": "assistant", "content": [
        {"toolUse": {"toolUseId": "t1", "name": "nova_code_interpreter", "type": "server_tool_use",
                     "input": {"snippet": "1234 * 5678"}}},
        {"toolResult": {"toolUseId": "t1", "type": "nova_code_interpreter_result", "status": "success",
                        "content": output}},
        {"toolUse": {"toolUseId": "t2", "name": "final_result", "type": "tool_use", "input": {"result": 7006652.0}}}]}},
        "stopReason": "tool_use", "usage": {"inputTokens": 1002, "outputTokens": 59, "totalTokens": 1061}}
    read = traffic.answer(Exchange("POST", "/model/us.amazon.nova-2-lite-v1%3A0/converse", {"messages": []}, 200,
                                     response))
    assert read.tool_calls == [
        {"name": "nova_code_interpreter", "arguments": {"snippet": "1234 * 5678"}, "type": "server_tool_use",
         "result": {"type": "nova_code_interpreter_result", "status": "success", "content": output}},
        {"name": "final_result", "arguments": {"result": 7006652.0}}]
