"""The emulator speaks Anthropic's Messages API: the ``anthropic`` SDK reads its JSON answers,
its streams (through the SDK's own accumulation) and its errors as it reads the live API's, and
its events have the shape of a real recording's."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import yaml

from rag_core.evals.emulator.anthropic import message_events
from rag_core.evals.emulator.provider import ScriptedProvider
from rag_core.evals.emulator.script import DeterministicIds, ScriptedTurn

anthropic = pytest.importorskip("anthropic")

SHARED = Path(__file__).resolve().parents[2] / "shared" / "provider-recordings" / "anthropic"
TOOLS = [{"name": "lookup_recipe", "description": "Look up how a Thai dish is made.",
          "input_schema": {"type": "object", "properties": {"dish": {"type": "string"}}, "required": ["dish"]}}]
SCRIPT = [{"tool_calls": [{"name": "lookup_recipe", "arguments": {"dish": "pad thai"}}]},
          {"text": "Soak rice noodles, then fry them with tamarind."},
          {"status": 429, "message": "Number of request tokens has exceeded your rate limit."}]


def _client(provider: ScriptedProvider):
    import httpx2

    def handle(request):
        reply = provider.reply(request.method, request.url.path, request.read())
        return httpx2.Response(reply.status, content=reply.body, headers={"content-type": reply.content_type,
                                                                          **reply.headers})

    return anthropic.Anthropic(api_key="k", max_retries=0, http_client=httpx2.Client(transport=httpx2.MockTransport(handle)))


def _conversation(client, stream: bool):
    messages = [{"role": "user", "content": "How do I make pad thai?"}]
    ask = dict(model="claude-sonnet-4-5", max_tokens=512, system="You are a Thai cook.", tools=TOOLS)
    if stream:
        with client.messages.stream(messages=messages, **ask) as events:
            first = events.get_final_message()
    else:
        first = client.messages.create(messages=messages, **ask)
    call = next(block for block in first.content if block.type == "tool_use")
    messages += [{"role": "assistant", "content": first.content},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "Soak."}]}]
    if stream:
        with client.messages.stream(messages=messages, **ask) as events:
            second = events.get_final_message()
    else:
        second = client.messages.create(messages=messages, **ask)
    return first, call, second


@pytest.mark.parametrize("stream", [False, True])
def test_the_sdk_reads_a_tool_round_trip(stream):
    provider = ScriptedProvider(SCRIPT, seed="claude")
    first, call, second = _conversation(_client(provider), stream)
    assert first.stop_reason == "tool_use" and call.name == "lookup_recipe" and call.input == {"dish": "pad thai"}
    assert call.id.startswith("toolu_")
    assert second.stop_reason == "end_turn" and second.content[0].text == "Soak rice noodles, then fry them with tamarind."
    assert second.usage.input_tokens > 0 and second.usage.output_tokens > 0
    assert provider.requests[1]["messages"][-1]["content"][0]["type"] == "tool_result"


def test_a_scripted_error_is_the_apis_error():
    provider = ScriptedProvider([SCRIPT[2]], seed="claude")
    with pytest.raises(anthropic.RateLimitError) as raised:
        _client(provider).messages.create(model="claude-sonnet-4-5", max_tokens=10,
                                          messages=[{"role": "user", "content": "hi"}])
    assert raised.value.body["error"] == {"type": "rate_limit_error",
                                          "message": "Number of request tokens has exceeded your rate limit."}
    assert raised.value.response.headers["request-id"].startswith("req_")


def test_emulated_events_have_the_shape_of_a_real_recording():
    recorded = yaml.safe_load((SHARED / "llm_anthropic_test_tools.yaml").read_text())["interactions"][0]
    text = gzip.decompress(recorded["response"]["body"]["string"]).decode()
    real = [json.loads(line[len("data: "):]) for line in text.splitlines() if line.startswith("data: ")]
    real = [event for event in real if event["type"] != "ping"]
    fake = message_events(ScriptedTurn(**SCRIPT[0]), {"model": "claude-haiku-4-5"}, DeterministicIds("x"))
    assert [e["type"] for e in fake] == ["message_start", "content_block_start", *["content_block_delta"] * (len(fake) - 5),
                                         "content_block_stop", "message_delta", "message_stop"]
    for kind in ("message_start", "content_block_start", "content_block_delta", "message_delta"):
        mine = next(e for e in fake if e["type"] == kind)
        theirs = next(e for e in real if e["type"] == kind)
        assert set(mine) == set(theirs), kind
    assert set(fake[0]["message"]) <= set(real[0]["message"])
    assert set(fake[-2]["usage"]) == {"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                                      "output_tokens"} <= set(real[-2]["usage"])
