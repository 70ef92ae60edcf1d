"""The Claude adapter: pure Messages API bodies, the anthropic SDK sending them unchanged (to the
in-process emulator, to real recordings, to hand-made replies), thinking blocks sent back where
they came from, structured output, usage, errors, and the bodies Agno's Claude sends for the
same conversation."""

from __future__ import annotations

import asyncio
import gzip
import importlib
import json
import subprocess
import sys
import typing
from typing import Any, Callable

import pytest
from pydantic import BaseModel

anthropic = pytest.importorskip("anthropic")

from rag_core import Agent  # noqa: E402
from rag_core.agent.events import ReasoningContent, RunContent  # noqa: E402
from rag_core.errors import MissingExtraError, ModelProviderError  # noqa: E402
from rag_core.evals.emulator.provider import ScriptedProvider  # noqa: E402
from rag_core.messages import Message, ToolCall, Usage  # noqa: E402
from rag_core.models import Claude, OpenAIChat  # noqa: E402
from rag_core.models.anthropic import TOOLS_SYSTEM_MESSAGE, ClaudeStreamAccumulator, parse_claude_response  # noqa: E402
from rag_core.tools.function import Function  # noqa: E402
from tests.recordings import interactions  # noqa: E402


def get_weather(city: str, unit: str = "celsius") -> str:
    """Get the current weather in a city.

    Args:
        city: The city to look up.
    """
    return f"Sunny, 21 degrees {unit} in {city}."


def get_time(city: str) -> str:
    """Get the local time in a city."""
    return f"It is 14:05 in {city}."


WEATHER, TIME = Function.from_callable(get_weather), Function.from_callable(get_time)
SIGNATURE = "EoQDCm0IDhgCKkCDzGs2kL2PgnDCZU"
ROUND_TRIP = [{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                              {"name": "get_time", "arguments": {"city": "Paris"}}]},
              {"text": "It is sunny and 21 degrees in Paris, and it is 14:05."}]


# ---------------------------------------------------------------------- an HTTP client for the SDK
def _http_module() -> Any:
    """httpx2 for the SDK from 1.0 on, httpx before: the one the installed SDK's client is made of."""
    base = next(c for c in anthropic.DefaultHttpxClient.__mro__[1:] if c.__name__ == "Client")
    return importlib.import_module(base.__module__.split(".")[0])


class Wire:
    """An in-process Anthropic API: answers with ``answer(path, body) -> (status, content_type,
    bytes, headers)`` and keeps what was sent (path, headers, JSON body) and the reply headers."""

    def __init__(self, answer: Callable[[str, dict[str, Any]], tuple[int, str, bytes, dict[str, str]]]) -> None:
        self.answer = answer
        self.sent: list[dict[str, Any]] = []
        self.replied: list[dict[str, str]] = []
        self.provider: ScriptedProvider | None = None

    @classmethod
    def scripted(cls, script: list[dict[str, Any]], seed: str = "claude") -> Wire:
        """The emulator, answering in the Messages API's wire format."""
        provider = ScriptedProvider(script, seed=seed)

        def answer(path: str, body: dict[str, Any]) -> tuple[int, str, bytes, dict[str, str]]:
            reply = provider.reply("POST", path, json.dumps(body).encode())
            return reply.status, reply.content_type, reply.body, reply.headers

        wire = cls(answer)
        wire.provider = provider
        return wire

    def _handle(self, request: Any) -> Any:
        body = json.loads(request.content or b"{}")
        self.sent.append({"path": request.url.path, "headers": dict(request.headers), "body": body})
        status, content_type, content, headers = self.answer(request.url.path, body)
        self.replied.append(headers)
        return _http_module().Response(status, content=content, headers={"content-type": content_type, **headers})

    def client(self) -> Any:
        http = _http_module()

        def handle(request: Any) -> Any:
            request.read()
            return self._handle(request)

        return http.Client(transport=http.MockTransport(handle))

    def async_client(self) -> Any:
        http = _http_module()
        wire = self

        class Transport(http.AsyncBaseTransport):
            async def handle_async_request(self, request: Any) -> Any:
                await request.aread()
                return wire._handle(request)

        return http.AsyncClient(transport=Transport())

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [s["body"] for s in self.sent]


def claude(wire: Wire, asynchronous: bool = False, **options: Any) -> Claude:
    client = wire.async_client() if asynchronous else wire.client()
    return Claude(api_key="sk-ant-test", max_retries=0, http_client=client, **options)


def _json(payload: dict[str, Any], status: int = 200, **headers: str) -> tuple[int, str, bytes, dict[str, str]]:
    return status, "application/json", json.dumps(payload).encode(), {"request-id": "req_test_1", **headers}


def _sse(events: list[dict[str, Any]]) -> tuple[int, str, bytes, dict[str, str]]:
    text = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    return 200, "text/event-stream; charset=utf-8", text.encode(), {"request-id": "req_test_2"}


# ---------------------------------------------------------------------- request bodies (pure)
def _conversation() -> list[Message]:
    """A tool round trip whose first reply thought before its text and again before its second call."""
    return [
        Message(role="system", content="You are a concise travel assistant."),
        Message(role="user", content="Weather and time in Paris?"),
        Message(role="assistant", content="Let me check both.", provider_data={"thinking_blocks": [
            {"type": "thinking", "thinking": "Two lookups are needed.", "signature": SIGNATURE},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}]},
            tool_calls=[
                ToolCall("toolu_01", "get_weather", '{"city":"Paris"}'),
                ToolCall("toolu_02", "get_time", '{"city":"Paris"}', provider_data={"thinking_blocks": [
                    {"type": "thinking", "thinking": "And the time.", "signature": "c2ln"}]}),
            ]),
        Message(role="tool", content="Sunny, 21 degrees celsius in Paris.", tool_call_id="toolu_01", tool_name="get_weather"),
        Message(role="tool", content="It is 14:05 in Paris.", tool_call_id="toolu_02", tool_name="get_time"),
    ]


WEATHER_TOOL = {"name": "get_weather", "description": "Get the current weather in a city.", "input_schema": {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "The city to look up."},
                   "unit": {"type": "string", "description": ""}},
    "required": ["city"], "additionalProperties": False}}
TIME_TOOL = {"name": "get_time", "description": "Get the local time in a city.", "input_schema": {
    "type": "object", "properties": {"city": {"type": "string", "description": ""}}, "required": ["city"],
    "additionalProperties": False}}


def test_the_body_of_a_tool_round_trip_with_thinking_is_pinned_exactly():
    model = Claude(id="claude-sonnet-4-6", max_tokens=4096, temperature=1.0, top_k=40, stop_sequences=["###"],
                   thinking={"type": "enabled", "budget_tokens": 2048})
    body = model.build_request(_conversation(), [WEATHER, TIME])
    assert body == {
        "max_tokens": 4096,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Weather and time in Paris?"}]},
            {"role": "assistant", "content": [
                # thinking goes back as Claude sent it, signed, where it was: before the text, and
                # right before the call it preceded
                {"type": "thinking", "thinking": "Two lookups are needed.", "signature": SIGNATURE},
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
                {"type": "text", "text": "Let me check both."},
                {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "thinking", "thinking": "And the time.", "signature": "c2ln"},
                {"type": "tool_use", "id": "toolu_02", "name": "get_time", "input": {"city": "Paris"}},
            ]},
            # both results in one user turn
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": "Sunny, 21 degrees celsius in Paris."},
                {"type": "tool_result", "tool_use_id": "toolu_02", "content": "It is 14:05 in Paris."},
            ]},
        ],
        "model": "claude-sonnet-4-6",
        "stop_sequences": ["###"],
        "system": [{"text": "You are a concise travel assistant.", "type": "text"}],
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "tools": [WEATHER_TOOL, TIME_TOOL],
        "temperature": 1.0,
        "top_k": 40,
    }
    # the order the SDK's messages.create writes, the sampling parameters (extra body since SDK 1.0) last
    assert list(body) == ["max_tokens", "messages", "model", "stop_sequences", "system", "thinking", "tools",
                          "temperature", "top_k"]
    streamed = model.build_request(_conversation(), [WEATHER, TIME], stream=True)
    assert streamed == {**body, "stream": True} and list(streamed).index("stream") == 4
    _validate_with_the_sdk_types(body)
    _validate_with_the_sdk_types(streamed)


def test_a_user_message_after_tool_results_shares_their_turn_and_empty_turns_are_left_out():
    conversation = _conversation()[1:] + [Message(role="assistant", content="   "),
                                          Message(role="user", content="And tomorrow?")]
    body = Claude(max_tokens=None).build_request(conversation, [])
    assert "max_tokens" not in body and "system" not in body and "tools" not in body
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert [b["type"] for b in body["messages"][2]["content"]] == ["tool_result", "tool_result", "text"]
    assert body["messages"][2]["content"][2] == {"type": "text", "text": "And tomorrow?"}


def test_cache_control_on_the_system_prompt_and_the_last_tool():
    messages = [Message(role="system", content="Be brief."), Message(role="user", content="Hi")]
    body = Claude(cache_system_prompt=True, cache_tools=True).build_request(messages, [WEATHER, TIME])
    assert body["system"] == [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]
    assert body["tools"][-1] == {**TIME_TOOL, "cache_control": {"type": "ephemeral"}} and "cache_control" not in body["tools"][0]
    hour = Claude(cache_system_prompt=True, extended_cache_time=True).build_request(messages, [])
    assert hour["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    _validate_with_the_sdk_types(body)


class Stop(BaseModel):
    city: str
    nights: int


def test_tool_schemas_are_closed_objects_and_strict_tools_say_so():
    def plan_trip(stops: list[Stop], budget: float | None = None) -> str:
        """Plan a trip."""
        return "ok"

    tool = Claude().build_request([Message(role="user", content="Plan")],
                                  [Function.from_callable(plan_trip, strict=True)])["tools"][0]
    assert tool["strict"] is True and tool["input_schema"]["additionalProperties"] is False
    assert tool["input_schema"]["required"] == ["stops", "budget"]  # strict: every property required
    assert tool["input_schema"]["properties"] == {
        # nested objects are closed too; a property without a description gets an empty one (as Agno sends it)
        "stops": {"type": "array", "description": "", "items": {
            "type": "object", "properties": {"city": {"type": "string"}, "nights": {"type": "integer"}},
            "required": ["city", "nights"], "additionalProperties": False}},
        "budget": {"type": ["number", "null"], "description": ""}}
    assert Claude().build_request([Message(role="user", content="x")], [Function(
        name="ping", description=None, parameters={"type": "object", "properties": {}})])["tools"] == [
        {"name": "ping", "description": "", "input_schema": {"type": "object", "properties": {}, "required": [],
                                                             "additionalProperties": False}}]


def test_request_params_come_last_and_override():
    body = Claude(request_params={"tool_choice": {"type": "auto"}, "max_tokens": 10}).build_request(
        [Message(role="user", content="x")], [WEATHER])
    assert list(body)[-1] == "tool_choice" and body["max_tokens"] == 10


def _validate_with_the_sdk_types(body: dict[str, Any]) -> None:
    """The body against the SDK's own MessageCreateParams (less the sampling parameters, which the
    SDK stopped declaring in 1.0 and sends as extra body)."""
    from pydantic import TypeAdapter

    from anthropic.types import message_create_params as p

    params = p.MessageCreateParamsStreaming if body.get("stream") else p.MessageCreateParamsNonStreaming
    rest = {k: v for k, v in body.items() if k not in ("temperature", "top_p", "top_k")}
    unknown = set(rest) - set(typing.get_type_hints(params))
    assert not unknown, f"keys the SDK does not know: {sorted(unknown)}"
    TypeAdapter(params).validate_python(rest)


# ---------------------------------------------------------------------- an agent's tool loop
def _check_round_trip(out: Any, wire: Wire, stream: bool) -> None:
    assert out.content == ROUND_TRIP[1]["text"] and out.status == "completed"
    assert [(t.name, t.result) for t in out.tool_calls] == [("get_weather", "Sunny, 21 degrees celsius in Paris."),
                                                            ("get_time", "It is 14:05 in Paris.")]
    assert wire.bodies == out.requests  # the SDK sent exactly the built bodies
    assert [s["path"] for s in wire.sent] == ["/v1/messages"] * 2
    assert all(s["headers"]["anthropic-version"] for s in wire.sent)
    first, second = out.requests
    assert first.get("stream", False) is stream
    assert first["system"] == [{"text": "Answer in one sentence.\n\n" + TOOLS_SYSTEM_MESSAGE.strip(), "type": "text"}]
    calls = second["messages"][1]["content"]
    assert [b["type"] for b in calls] == ["tool_use", "tool_use"] and calls[0]["input"] == {"city": "Paris"}
    assert [b["tool_use_id"] for b in second["messages"][2]["content"]] == [calls[0]["id"], calls[1]["id"]]
    usage = out.metrics.usage
    assert usage.input_tokens > 0 and usage.output_tokens > 0
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens


def _agent(model: Claude, **options: Any) -> Agent:
    return Agent(model=model, tools=[get_weather, get_time], instructions="Answer in one sentence.", **options)


def test_an_agent_runs_a_tool_loop():
    wire = Wire.scripted(ROUND_TRIP)
    out = _agent(claude(wire)).run("Weather and time in Paris?")
    _check_round_trip(out, wire, stream=False)
    assert out.messages[2].tool_calls[0].arguments == '{"city":"Paris"}'


def test_an_agent_runs_a_tool_loop_async():
    wire = Wire.scripted(ROUND_TRIP)
    out = asyncio.run(_agent(claude(wire, asynchronous=True)).arun("Weather and time in Paris?"))
    _check_round_trip(out, wire, stream=False)


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_an_agent_streams_a_tool_loop(asynchronous):
    wire = Wire.scripted(ROUND_TRIP)
    agent = _agent(claude(wire, asynchronous=asynchronous))
    if asynchronous:
        async def collect() -> list[Any]:
            return [event async for event in await agent.arun("Weather and time in Paris?", stream=True)]

        events = asyncio.run(collect())
    else:
        events = list(agent.run("Weather and time in Paris?", stream=True))
    out = events[-1].output
    _check_round_trip(out, wire, stream=True)
    pieces = [e.content for e in events if isinstance(e, RunContent)]
    assert len(pieces) > 1 and "".join(pieces) == ROUND_TRIP[1]["text"]
    # a streamed and a plain run of the same script send the same conversation
    plain = Wire.scripted(ROUND_TRIP)
    _agent(claude(plain)).run("Weather and time in Paris?")
    assert [{k: v for k, v in b.items() if k != "stream"} for b in out.requests] == plain.bodies


def test_the_agents_system_message_ends_as_agnos_claude_ends_it():
    assert _agent(Claude()).get_system_message() == "Answer in one sentence.\n\n" + TOOLS_SYSTEM_MESSAGE.strip()
    assert Agent(model=Claude(), instructions="Hi.").get_system_message() == "Hi."  # no tools, nothing added
    assert _agent(OpenAIChat()).get_system_message() == "Answer in one sentence."  # other models add nothing


# ---------------------------------------------------------------------- thinking, on real recordings
THINKING_RECORDING = "anthropic/llm_anthropic_test_fixed_version_tool_chain_with_thinking_display_regression.yaml"


def _recorded(name: str) -> tuple[list[dict[str, Any]], Wire]:
    recorded = interactions(name)
    replies = []
    for interaction in recorded:
        text = interaction["response"]["body"]["string"]
        replies.append(gzip.decompress(text).decode() if isinstance(text, bytes) else text)
    answers = iter(replies)
    wire = Wire(lambda path, body: (200, "text/event-stream; charset=utf-8", next(answers).encode(),
                                    {"request-id": "req_recorded"}))
    return [json.loads(i["request"]["body"]) for i in recorded], wire


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_thinking_streams_as_reasoning_and_goes_back_signed_before_the_tool_use(asynchronous):
    """Claude thought, then called a tool: the next request sends that signed thinking block right
    before the tool_use, as the live API accepted it in the recording."""
    requests, wire = _recorded(THINKING_RECORDING)

    def fixed_version() -> str:
        """Return a fixed test version string"""
        return "0.32a0"

    model = claude(wire, asynchronous, id="claude-haiku-4-5-20251001", max_tokens=64000, temperature=1.0,
                   thinking={"type": "enabled", "budget_tokens": 1024, "display": "summarized"})
    agent = Agent(model=model, tools=[fixed_version])
    prompt = requests[0]["messages"][0]["content"][0]["text"]
    if asynchronous:
        async def collect() -> list[Any]:
            return [event async for event in await agent.arun(prompt, stream=True)]

        events = asyncio.run(collect())
    else:
        events = list(agent.run(prompt, stream=True))
    out = events[-1].output
    assert out.content.startswith("The version is **0.32a0**.")
    thought = "".join(e.content for e in events if isinstance(e, ReasoningContent))
    assert thought.startswith("The user wants me to:\n1. Use the fixed_version tool") and out.reasoning_content == thought
    [assistant] = [m for m in out.messages if m.tool_calls]
    [call] = assistant.tool_calls
    assert call.provider_data["thinking_blocks"][0]["signature"].startswith("EoQDCm0IDhgCKkCDzGs2kL2Pgn")
    assert assistant.provider_data == {}  # the thinking came right before the call, not before any text
    # the conversation goes back exactly as the recorded (accepted) second request sent it
    assert out.requests[1]["messages"] == requests[1]["messages"]
    for key in ("max_tokens", "model", "temperature", "thinking", "stream"):
        assert out.requests[0][key] == requests[0][key]
    assert out.metrics.usage == Usage(input_tokens=598 + 707, output_tokens=92 + 89, total_tokens=598 + 707 + 92 + 89,
                                      cached_tokens=0, reasoning_tokens=53)
    assert out.model == "claude-haiku-4-5-20251001"


def test_a_plain_reply_keeps_each_thinking_block_where_it_was():
    reply = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-4-6",
             "stop_reason": "tool_use", "stop_sequence": None,
             "usage": {"input_tokens": 10, "output_tokens": 20, "output_tokens_details": {"thinking_tokens": 12}},
             "content": [
                 {"type": "thinking", "thinking": "First.", "signature": "s1"},
                 {"type": "text", "text": "Checking.", "citations": None},
                 {"type": "redacted_thinking", "data": "r2"},
                 {"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {"city": "Rome"},
                  "caller": {"type": "direct"}},
                 {"type": "thinking", "thinking": "Second.", "signature": "s3"},
                 {"type": "tool_use", "id": "toolu_b", "name": "get_time", "input": {"city": "Rome"}},
             ]}
    parsed = parse_claude_response(reply)
    assert (parsed.content, parsed.reasoning, parsed.response_id) == ("Checking.", "First.\n\nSecond.", "msg_1")
    assert parsed.provider_data == {"thinking_blocks": [{"type": "thinking", "thinking": "First.", "signature": "s1"}]}
    assert [c.provider_data for c in parsed.tool_calls] == [
        {"thinking_blocks": [{"type": "redacted_thinking", "data": "r2"}]},
        {"thinking_blocks": [{"type": "thinking", "thinking": "Second.", "signature": "s3"}]}]
    assert parsed.usage == Usage(10, 20, 30, 0, 12)
    sent_back = Claude().build_request([Message(role="user", content="Weather?"), parsed.to_message()], [])
    assert sent_back["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "First.", "signature": "s1"},
        {"type": "text", "text": "Checking."},
        {"type": "redacted_thinking", "data": "r2"},
        {"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {"city": "Rome"}},
        {"type": "thinking", "thinking": "Second.", "signature": "s3"},
        {"type": "tool_use", "id": "toolu_b", "name": "get_time", "input": {"city": "Rome"}},
    ]
    # a reply cut off by max_tokens runs no call (its input may be incomplete); its thinking stays
    truncated = parse_claude_response({**reply, "stop_reason": "max_tokens"})
    assert truncated.tool_calls == [] and len(truncated.provider_data["thinking_blocks"]) == 3


@pytest.mark.parametrize("name", ["anthropic/llm_anthropic_test_tools.yaml",
                                  "anthropic/llm_anthropic_test_stream_events_thinking.yaml"])
def test_recorded_streams_parse_as_the_sdks_own_accumulation_reads_them(name):
    """Our accumulation of a real stream against the SDK's (``messages.stream``'s final message)."""
    for interaction in interactions(name):
        text = interaction["response"]["body"]["string"]
        text = gzip.decompress(text).decode() if isinstance(text, bytes) else text
        events = [json.loads(line[len("data: "):]) for line in text.splitlines() if line.startswith("data: ")]
        accumulator = ClaudeStreamAccumulator()
        deltas = [part for event in events for part in accumulator.feed(event)]
        mine = accumulator.result()
        wire = Wire(lambda path, body, text=text: (200, "text/event-stream", text.encode(), {}))
        request = json.loads(interaction["request"]["body"])
        with anthropic.Anthropic(api_key="k", http_client=wire.client()).messages.stream(
                **{k: v for k, v in request.items() if k not in ("stream", "temperature")}) as stream:
            final = stream.get_final_message()
        theirs = parse_claude_response(final.model_dump())
        assert (mine.content, mine.reasoning, mine.response_id, mine.model) == (
            theirs.content, theirs.reasoning, theirs.response_id, theirs.model)
        assert [(c.id, c.name, c.arguments, c.provider_data) for c in mine.tool_calls] == [
            (c.id, c.name, c.arguments, c.provider_data) for c in theirs.tool_calls]
        assert mine.provider_data == theirs.provider_data and mine.usage == theirs.usage
        assert "".join(d.text for d in deltas if type(d).__name__ == "TextDelta") == (mine.content or "")


# ---------------------------------------------------------------------- structured output
class Dish(BaseModel):
    name: str
    minutes: int


DISH_FORMAT = {"type": "json_schema", "schema": {
    "type": "object", "title": "Dish",
    "properties": {"name": {"type": "string", "title": "Name"}, "minutes": {"type": "integer", "title": "Minutes"}},
    "additionalProperties": False, "required": ["name", "minutes"]}}


@pytest.mark.parametrize("stream", [False, True])
def test_output_schema_asks_for_the_json_schema_format_and_parses_the_answer(stream):
    wire = Wire.scripted([{"text": '{"name": "Pad thai", "minutes": 25}'}])
    agent = Agent(model=claude(wire, output_config={"effort": "low"}), output_schema=Dish)
    result = agent.run("A quick Thai dish?", stream=stream)
    out = list(result)[-1].output if stream else result
    assert out.content == Dish(name="Pad thai", minutes=25)
    body = wire.bodies[0]
    assert body["output_config"] == {"effort": "low", "format": DISH_FORMAT}
    assert body["output_config"]["format"] == {"type": "json_schema", "schema": anthropic.transform_schema(Dish)}
    assert wire.sent[0]["path"] == "/v1/messages" and "anthropic-beta" not in wire.sent[0]["headers"]
    _validate_with_the_sdk_types(body)


# ---------------------------------------------------------------------- usage
CACHED_USAGE = {"input_tokens": 12, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 2000,
                "output_tokens": 40}


@pytest.mark.parametrize("stream", [False, True])
def test_usage_counts_the_cached_prompt_as_input(stream):
    message = {"id": "msg_c", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
               "content": [{"type": "text", "text": "Hello."}], "stop_reason": "end_turn", "stop_sequence": None,
               "usage": CACHED_USAGE}
    events = [{"type": "message_start", "message": {**message, "content": [], "stop_reason": None,
                                                    "usage": {**CACHED_USAGE, "output_tokens": 1}}},
              {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
              {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello."}},
              {"type": "content_block_stop", "index": 0},
              {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
               "usage": {"output_tokens": 40}},
              {"type": "message_stop"}]
    wire = Wire(lambda path, body: _sse(events) if body.get("stream") else _json(message))
    result = Agent(model=claude(wire)).run("Hi", stream=stream)
    out = list(result)[-1].output if stream else result
    assert out.content == "Hello."
    assert out.metrics.usage == Usage(input_tokens=2312, output_tokens=40, total_tokens=2352, cached_tokens=2000)


# ---------------------------------------------------------------------- errors
@pytest.mark.parametrize("stream", [False, True])
def test_an_error_status_is_a_model_provider_error_with_the_request_id(stream):
    wire = Wire.scripted([{"status": 429, "message": "Number of request tokens has exceeded your rate limit."}])
    with pytest.raises(ModelProviderError) as raised:
        result = Agent(model=claude(wire)).run("Hi", stream=stream)
        if stream:
            list(result)
    error = raised.value
    assert (error.provider, error.status_code) == ("anthropic", 429)
    assert error.provider_message == "Number of request tokens has exceeded your rate limit."
    assert error.request_id.startswith("req_") and error.request_id == wire.replied[0]["request-id"]
    assert error.body["error"]["type"] == "rate_limit_error"
    assert f"HTTP 429, request id {error.request_id}" in str(error)
    assert error.output is not None and error.output.status == "error"


def test_an_error_event_inside_a_stream_gets_the_status_of_its_type():
    events = [{"type": "message_start", "message": {"id": "msg_e", "type": "message", "role": "assistant",
                                                    "model": "m", "content": [], "stop_reason": None,
                                                    "usage": {"input_tokens": 1, "output_tokens": 1}}},
              {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}]
    wire = Wire(lambda path, body: _sse(events))
    model = claude(wire)
    with pytest.raises(ModelProviderError) as raised:
        list(model.invoke_stream(model.build_request([Message(role="user", content="Hi")], [], stream=True)))
    assert (raised.value.status_code, raised.value.provider_message, raised.value.request_id) == (
        529, "Overloaded", "req_test_2")


def test_an_unreachable_api_is_a_model_provider_error_naming_the_url():
    http = _http_module()

    def refuse(request: Any) -> Any:
        raise http.ConnectError("connection refused", request=request)

    model = Claude(api_key="k", max_retries=0, base_url="http://127.0.0.1:9",
                   http_client=http.Client(transport=http.MockTransport(refuse)))
    with pytest.raises(ModelProviderError) as raised:
        model.invoke(model.build_request([Message(role="user", content="Hi")], []))
    assert raised.value.status_code is None and "127.0.0.1:9/v1/messages" in str(raised.value)


# ---------------------------------------------------------------------- clients and the SDK
def test_client_settings_reach_the_wire():
    wire = Wire.scripted([{"text": "ok"}])
    model = Claude(api_key="sk-ant-mine", base_url="https://gateway.example/anthropic", max_retries=0,
                   http_client=wire.client(), default_headers={"x-team": "kitchen"}, betas=["context-1m-2025-08-07"],
                   timeout=12.5)
    model.invoke(model.build_request([Message(role="user", content="Hi")], []))
    sent = wire.sent[0]
    assert sent["path"] == "/anthropic/v1/messages"
    assert sent["headers"]["x-team"] == "kitchen" and sent["headers"]["anthropic-beta"] == "context-1m-2025-08-07"
    assert "sk-ant-mine" in (sent["headers"].get("x-api-key", "") + sent["headers"].get("authorization", ""))
    assert model.client().timeout == 12.5 and model.client() is model.client()  # built once, on first use


def test_the_key_comes_from_the_environment_or_the_error_says_where_to_put_it(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with pytest.raises(ModelProviderError, match="pass api_key=... to the model or set ANTHROPIC_API_KEY"):
        Claude().client()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
    assert Claude().client().api_key == "sk-ant-from-env"
    assert "sk-ant" not in repr(Claude(api_key="sk-ant-secret"))


def test_importing_the_models_does_not_import_the_sdk():
    code = "import sys, rag_core.models; from rag_core.models.anthropic import Claude; " \
           "Claude().build_request([], []); print('anthropic' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_a_missing_sdk_names_the_extra_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'rag-core\[anthropic\]'"):
        Claude(api_key="k").client()


def test_agnos_import_path_names_the_same_class():
    from rag_core.models.anthropic import Claude as aliased

    assert aliased is Claude


# ---------------------------------------------------------------------- Agno's Claude, differentially
def _agno() -> Any:
    try:
        from agno.agent import Agent as AgnoAgent
        from agno.models.anthropic import Claude as AgnoClaude
        from agno.models.message import Message as AgnoMessage
    except ImportError as exc:  # agno is a dev dependency; its Claude needs a recent anthropic SDK
        pytest.skip(f"Agno's Claude cannot be imported: {exc}")
    return AgnoAgent, AgnoClaude, AgnoMessage


THINKING_REPLY = {"id": "msg_t1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
                  "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 50, "output_tokens": 30},
                  "content": [{"type": "thinking", "thinking": "I need the weather.", "signature": SIGNATURE},
                              {"type": "text", "text": "Checking."},
                              {"type": "tool_use", "id": "toolu_w", "name": "get_weather", "input": {"city": "Oslo"}}]}
FINAL_REPLY = {"id": "msg_t2", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
               "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 90, "output_tokens": 8},
               "content": [{"type": "text", "text": "Sunny in Oslo."}]}


def _replies() -> Wire:
    answers = iter([THINKING_REPLY, FINAL_REPLY])
    return Wire(lambda path, body: _json(next(answers)))


@pytest.mark.parametrize("options", [
    {},
    {"id": "claude-sonnet-4-6", "temperature": 0.2, "top_p": 0.9, "top_k": 5, "stop_sequences": ["END"],
     "max_tokens": 2048, "thinking": {"type": "enabled", "budget_tokens": 1024}, "cache_system_prompt": True},
], ids=["defaults", "options"])
def test_agnos_agent_sends_the_same_conversation(options):
    """The same agent (instructions, two tools, a reply that thinks, writes and calls a tool) in Agno
    and here: every request body is equal, but for Agno's uncached system prompt as a block list."""
    AgnoAgent, AgnoClaude, _ = _agno()
    theirs, ours = _replies(), _replies()
    agno_model = AgnoClaude(api_key="k", http_client=theirs.client(), **options)
    AgnoAgent(model=agno_model, tools=[get_time, get_weather], instructions="Answer in one sentence.",
              telemetry=False).run("Weather in Oslo?")
    out = Agent(model=claude(ours, **options), tools=[get_time, get_weather],
                instructions="Answer in one sentence.").run("Weather in Oslo?")
    assert out.content == "Sunny in Oslo." and len(theirs.bodies) == len(ours.bodies) == 2
    assert [b for b in theirs.bodies] == ours.bodies
    assert [s["path"] for s in theirs.sent] == [s["path"] for s in ours.sent] == ["/v1/messages"] * 2


def test_agnos_claude_builds_the_same_body_for_the_same_messages():
    """Model level: Agno's Claude.invoke and invoke_stream on the equivalent Agno messages."""
    _, AgnoClaude, AgnoMessage = _agno()
    agno_messages = [
        AgnoMessage(role="system", content="You are a concise travel assistant."),
        AgnoMessage(role="user", content="Weather and time in Paris?"),
        AgnoMessage(role="assistant", content="Let me check both.", provider_data={"content_blocks": [
            {"type": "thinking", "thinking": "Two lookups are needed.", "signature": SIGNATURE},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
            {"type": "text", "text": "Let me check both."},
            {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}},
            {"type": "thinking", "thinking": "And the time.", "signature": "c2ln"},
            {"type": "tool_use", "id": "toolu_02", "name": "get_time", "input": {"city": "Paris"}}]},
            tool_calls=[{"id": "toolu_01", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}},
                        {"id": "toolu_02", "type": "function", "function": {"name": "get_time", "arguments": '{"city":"Paris"}'}}]),
        AgnoMessage(role="tool", content="Sunny, 21 degrees celsius in Paris.", tool_call_id="toolu_01"),
        AgnoMessage(role="tool", content="It is 14:05 in Paris.", tool_call_id="toolu_02"),
    ]
    for stream in (False, True):
        wire = Wire(lambda path, body: _sse([{"type": "message_start", "message": {**FINAL_REPLY, "content": []}},
                                             {"type": "message_stop"}]) if body.get("stream") else _json(FINAL_REPLY))
        model = AgnoClaude(id="claude-sonnet-4-6", api_key="k", http_client=wire.client(), max_tokens=4096,
                           temperature=1.0, top_k=40, stop_sequences=["###"],
                           thinking={"type": "enabled", "budget_tokens": 2048})
        tools = model._format_tools([_agno_function(get_weather), _agno_function(get_time)])
        if stream:
            list(model.invoke_stream(messages=agno_messages, assistant_message=AgnoMessage(role="assistant"), tools=tools))
        else:
            model.invoke(messages=agno_messages, assistant_message=AgnoMessage(role="assistant"), tools=tools)
        ours = Claude(id="claude-sonnet-4-6", max_tokens=4096, temperature=1.0, top_k=40, stop_sequences=["###"],
                      thinking={"type": "enabled", "budget_tokens": 2048}).build_request(
            _conversation(), [WEATHER, TIME], stream=stream)
        # Agno sorts the tools by name (its Model._format_tools, for every provider); rag_core's
        # adapters keep the agent's order (the user's tools as given, then knowledge search)
        assert [t["name"] for t in wire.bodies[0]["tools"]] == ["get_time", "get_weather"]
        assert wire.bodies[0] == {**ours, "tools": sorted(ours["tools"], key=lambda t: t["name"])}


def _agno_function(fn: Callable[..., Any]) -> Any:
    from agno.tools.function import Function as AgnoFunction

    function = AgnoFunction.from_callable(fn)
    function.process_entrypoint()
    return function


def test_agnos_structured_output_has_the_same_body_on_the_beta_endpoint():
    """Agno asks for output_config.format through the SDK's beta messages resource, which adds the
    structured-outputs beta header; the body is the same, and here it goes without the header (the
    SDK's stable MessageCreateParams have output_config.format)."""
    AgnoAgent, AgnoClaude, _ = _agno()
    script = [{"text": '{"name": "Pad thai", "minutes": 25}'}]
    theirs, ours = Wire.scripted(script), Wire.scripted(script)
    agno_out = AgnoAgent(model=AgnoClaude(api_key="k", http_client=theirs.client()), output_schema=Dish,
                         telemetry=False).run("A quick Thai dish?")
    out = Agent(model=claude(ours), output_schema=Dish).run("A quick Thai dish?")
    assert agno_out.content == out.content == Dish(name="Pad thai", minutes=25)
    assert theirs.bodies == ours.bodies and ours.bodies[0]["output_config"] == {"format": DISH_FORMAT}
    assert [s["path"] for s in theirs.sent] == [s["path"] for s in ours.sent] == ["/v1/messages"]
    assert theirs.sent[0]["headers"]["anthropic-beta"] == "structured-outputs-2025-11-13"
    assert "anthropic-beta" not in ours.sent[0]["headers"]


def test_agno_drops_or_rewrites_what_newer_models_refuse_and_rag_core_sends_what_was_set():
    """A deliberate difference: for a model id outside Agno's closed lists of families that take them
    (its default claude-sonnet-5-5 among them), Agno's Claude leaves temperature, top_p and top_k out
    and turns a thinking budget into adaptive thinking, with a logged warning. rag_core sends what the
    program set; a model that refuses it answers with a 400, raised as a ModelProviderError."""
    _, AgnoClaude, AgnoMessage = _agno()
    options = {"temperature": 0.2, "top_p": 0.9, "thinking": {"type": "enabled", "budget_tokens": 1024}}
    wire = Wire(lambda path, body: _json(FINAL_REPLY))
    AgnoClaude(api_key="k", http_client=wire.client(), **options).invoke(
        messages=[AgnoMessage(role="user", content="Hi")], assistant_message=AgnoMessage(role="assistant"))
    theirs = wire.bodies[0]
    ours = Claude(**options).build_request([Message(role="user", content="Hi")], [])
    assert theirs["thinking"] == {"type": "adaptive", "display": "summarized"} and "temperature" not in theirs
    assert (ours["thinking"], ours["temperature"], ours["top_p"]) == (options["thinking"], 0.2, 0.9)
    assert theirs == {**{k: v for k, v in ours.items() if k not in ("temperature", "top_p")},
                      "thinking": {"type": "adaptive", "display": "summarized"}}
