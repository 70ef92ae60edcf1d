"""The adapters parse real OpenAI traffic (replayed through the SDK), and the emulator speaks the same format."""

from __future__ import annotations

import json

import pytest

from rag_core.evals.emulator import openai_chat as emulated_chat
from rag_core.evals.emulator import openai_responses as emulated_responses
from rag_core.evals.emulator.script import DeterministicIds, ScriptedTurn
from rag_core import Agent
from rag_core.errors import ModelProviderError
from rag_core.messages import Message
from rag_core.models import OpenAIChat, OpenAIResponses
from rag_core.models.base import StreamDone, TextDelta
from rag_core.models.openai_chat import ChatStreamAccumulator
from rag_core.models.openai_responses import ResponsesStreamAccumulator, parse_response

from tests.recordings import interactions, replay, response_json, sse_events

USER = [Message(role="user", content="question")]


def get_capital(country: str) -> str:
    """Get the capital of a country."""
    return {"PotatoLand": "Potato City", "UK": "London"}[country]


def _stream(model, request):
    parts = list(model.invoke_stream(request))
    assert isinstance(parts[-1], StreamDone)
    return "".join(p.text for p in parts if isinstance(p, TextDelta)), parts[-1].response


def test_responses_plain_text():
    name = "openai/responses_text_nonstream_gpt-4o.yaml"
    model = OpenAIResponses(id="gpt-4o", api_key="sk-test", max_retries=0)
    with replay(name):
        response = model.invoke(model.build_request(USER, []))
    raw = response_json(name)
    assert response.content == "The capital of France is Paris."
    assert response.response_id == raw["id"]
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.total_tokens) == (14, 8, 22)


def test_responses_tool_call_round_trip_through_the_agent():
    name = "openai/responses_tool_call_roundtrip_nonstream_gpt-4o.yaml"
    agent = Agent(model=OpenAIResponses(id="gpt-4o", api_key="sk-test", max_retries=0), tools=[get_capital])
    with replay(name):
        out = agent.run("What is the capital of PotatoLand?")
    [call] = out.tool_calls
    assert (call.name, call.arguments, call.result) == ("get_capital", {"country": "PotatoLand"}, "Potato City")
    assert call.id == "call_YfwRsW8sUxDKipwyhWTzOXCA"
    assert out.content == "The capital of PotatoLand is Potato City."
    assert (out.metrics.input_tokens, out.metrics.output_tokens) == (40 + 67, 18 + 11)
    assert out.requests[1]["input"][-1] == {"type": "function_call_output", "call_id": call.id, "output": "Potato City"}


def test_responses_streamed_text():
    name = "openai/responses_stream_text_gpt-4.1-nano.yaml"
    model = OpenAIResponses(id="gpt-4.1-nano", api_key="sk-test", max_retries=0)
    with replay(name):
        text, response = _stream(model, model.build_request(USER, [], stream=True))
    assert text == response.content == "2 + 2 equals 4."
    assert (response.usage.input_tokens, response.usage.output_tokens) == (14, 9)


def test_responses_streamed_reasoning_and_tool_call():
    name = "openai/responses_stream_reasoning_tool_call_gpt-5.yaml"
    model = OpenAIResponses(id="gpt-5", api_key="sk-test", max_retries=0)
    with replay(name):
        text, response = _stream(model, model.build_request(USER, [], stream=True))
    assert text == "" and response.content is None
    [call] = response.tool_calls
    assert (call.name, json.loads(call.arguments), call.id) == ("final_result", {"result": 6666}, "call_CWXgs68YprAjp6t0371hiPOI")
    assert (response.usage.output_tokens, response.usage.reasoning_tokens, response.usage.total_tokens) == (469, 448, 522)


def test_chat_streamed_tool_call_round_trip_through_the_agent():
    name = "openai/chat_stream_tool_call_include_usage_roundtrip_gpt-4o-mini.yaml"
    agent = Agent(model=OpenAIChat(id="gpt-4o-mini", api_key="sk-test", max_retries=0), tools=[get_capital])
    with replay(name):
        events = list(agent.run("What is the capital of the UK? Use the tool, then answer.", stream=True))
    out = events[-1].output
    [call] = out.tool_calls
    assert (call.id, call.arguments, call.result) == ("call_ZR5UUuTt3pf61kjwAJIYdVMj", {"country": "UK"}, "London")
    assert out.content == "The capital of the UK is London."
    assert (out.metrics.input_tokens, out.metrics.output_tokens, out.metrics.total_tokens) == (53 + 78, 15 + 9, 68 + 87)
    assert out.requests[0]["stream_options"] == {"include_usage": True}


def test_a_real_404_becomes_a_model_provider_error():
    import openai

    from rag_core.providers.openai import translate_error

    client = openai.OpenAI(api_key="sk-test", max_retries=0)
    with replay("openai/embeddings_error_404_model_not_found.yaml"):
        with pytest.raises(openai.NotFoundError) as info:
            client.embeddings.create(model="nonexistent", input=["Hello, world!"])
    error = translate_error(info.value)
    assert isinstance(error, ModelProviderError)
    assert error.status_code == 404
    assert error.provider_message == "The model `nonexistent` does not exist or you do not have access to it."


# ------------------------------------------------------------ emulator speaks the real format
def _collapse(types: list[str]) -> list[str]:
    """Event types with runs of the same delta event collapsed to one."""
    out: list[str] = []
    for t in types:
        if not (out and out[-1] == t and t.endswith(".delta")):
            out.append(t)
    return out


def test_emulated_responses_text_stream_has_the_real_event_sequence():
    real = sse_events("openai/responses_stream_text_gpt-4.1-nano.yaml")
    request = {"model": "gpt-4.1-nano", "input": "What is 2+2?", "stream": True}
    emulated = emulated_responses.response_events(ScriptedTurn(text="2 + 2 equals 4."), request, DeterministicIds("t"))
    assert _collapse([e["type"] for e in emulated]) == _collapse([e["type"] for e in real])
    assert [e["sequence_number"] for e in emulated] == list(range(len(emulated)))
    for real_event, fake_event in zip(real[:3], emulated[:3]):
        assert set(real_event) <= set(fake_event)
    real_final, fake_final = real[-1]["response"], emulated[-1]["response"]
    assert set(real_final) <= set(fake_final)
    assert set(real_final["output"][0]) == set(fake_final["output"][0])


def test_emulated_responses_tool_call_stream_matches_the_real_function_call_events():
    real = [e for e in sse_events("openai/responses_stream_reasoning_tool_call_gpt-5.yaml") if "reasoning" not in json.dumps(e.get("item", {}).get("type", ""))]
    turn = ScriptedTurn(tool_calls=[{"name": "final_result", "arguments": {"result": 6666}}])
    emulated = emulated_responses.response_events(turn, {"model": "gpt-5", "stream": True}, DeterministicIds("t"))
    real_types = [t for t in _collapse([e["type"] for e in real]) if t not in ("response.output_item.added", "response.output_item.done")]
    fake_types = [t for t in _collapse([e["type"] for e in emulated]) if t not in ("response.output_item.added", "response.output_item.done")]
    assert fake_types == real_types
    real_call = real[-1]["response"]["output"][-1]
    fake_call = emulated[-1]["response"]["output"][-1]
    assert set(real_call) == set(fake_call)


def test_real_and_emulated_responses_parse_alike():
    real = response_json("openai/responses_tool_call_roundtrip_nonstream_gpt-4o.yaml")
    turn = ScriptedTurn(tool_calls=[{"name": "get_capital", "arguments": {"country": "PotatoLand"}}])
    fake = emulated_responses.response_json(turn, {"model": "gpt-4o"}, DeterministicIds("t"))
    from openai.types.responses import Response

    # real recordings predate fields the current SDK requires: parse them leniently, as the SDK
    # does; the emulator's reply must pass strict validation against today's types
    parsed_real = parse_response(Response.model_construct(**real))
    parsed_fake = parse_response(Response.model_validate(fake))
    assert [(c.name, json.loads(c.arguments)) for c in parsed_real.tool_calls] == [
        (c.name, json.loads(c.arguments)) for c in parsed_fake.tool_calls
    ]
    assert set(real["output"][0]) == set(fake["output"][0])
    assert set(real) <= set(fake)


def test_emulated_chat_stream_has_the_real_chunk_shapes():
    name = "openai/chat_stream_tool_call_include_usage_roundtrip_gpt-4o-mini.yaml"
    request = json.loads(interactions(name)[0]["request"]["body"])
    real = sse_events(name, 0)
    turn = ScriptedTurn(tool_calls=[{"name": "get_capital", "arguments": {"country": "UK"}}])
    fake = emulated_chat.completion_chunks(turn, request, DeterministicIds("t"))
    assert real[-1]["choices"] == [] and fake[-1]["choices"] == []  # the include_usage chunk
    assert set(real[-1]["usage"]) == set(fake[-1]["usage"])
    assert real[-2]["choices"][0]["finish_reason"] == fake[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert set(real[0]) - {"obfuscation"} <= set(fake[0])
    accumulated = {}
    for label, chunks in (("real", real), ("fake", fake)):
        accumulator = ChatStreamAccumulator()
        for chunk in chunks:
            list(accumulator.feed(chunk))
        result = accumulator.result()
        accumulated[label] = [(c.name, json.loads(c.arguments)) for c in result.tool_calls]
    assert accumulated["real"] == accumulated["fake"] == [("get_capital", {"country": "UK"})]
    assert emulated_chat.chat_sse(fake).endswith("data: [DONE]\n\n")


def test_real_and_emulated_responses_streams_accumulate_alike():
    real = sse_events("openai/responses_stream_text_gpt-4.1-nano.yaml")
    fake = emulated_responses.response_events(ScriptedTurn(text="2 + 2 equals 4."), {"model": "m", "stream": True}, DeterministicIds("t"))
    results = []
    for events in (real, fake):
        accumulator = ResponsesStreamAccumulator()
        text = "".join(p.text for e in events for p in accumulator.feed(e) if isinstance(p, TextDelta))
        results.append((text, accumulator.result().content))
    assert results[0] == results[1] == ("2 + 2 equals 4.", "2 + 2 equals 4.")


def test_reasoning_items_go_back_before_the_calls_they_preceded_with_item_ids():
    """The real gpt-5 stream (include=reasoning.encrypted_content): the next round's input carries
    the reasoning item (id and encrypted content) right before its function_call, whose item id is sent."""
    from rag_core.messages import Message
    from rag_core.models.openai_responses import REASONING_ITEMS
    from rag_core.evals.wire.openai import validate_responses_body

    name = "openai/responses_stream_reasoning_tool_call_gpt-5.yaml"
    model = OpenAIResponses(id="gpt-5", api_key="sk-test", max_retries=0, store=False,
                            include=["reasoning.encrypted_content"])
    first = model.build_request([Message(role="user", content=USER[0].content)], [], stream=True)
    assert first["store"] is False and first["include"] == ["reasoning.encrypted_content"]
    with replay(name):
        _, response = _stream(model, first)
    completed = sse_events(name)[-1]["response"]["output"]
    recorded_reasoning, recorded_call = completed[0], completed[1]
    assistant = response.to_message()
    [kept] = assistant.provider_data[REASONING_ITEMS]
    assert kept["before_call"] == recorded_call["call_id"]
    tool = Message(role="tool", content="6666", tool_call_id=recorded_call["call_id"])
    second = model.build_request([Message(role="user", content="Calculate 100 * 200 / 3"), assistant, tool], [])
    assert [item.get("type", item.get("role")) for item in second["input"]] == [
        "user", "reasoning", "function_call", "function_call_output"]
    reasoning, call = second["input"][1], second["input"][2]
    assert reasoning == {"type": "reasoning", "id": recorded_reasoning["id"], "summary": [],
                         "encrypted_content": recorded_reasoning["encrypted_content"]}
    assert call["id"] == recorded_call["id"] and call["call_id"] == recorded_call["call_id"]
    validate_responses_body(second)  # the SDK's own request types accept the items as sent
