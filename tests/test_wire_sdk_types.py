"""Every shared provider recording read twice: by the harness's wire readings (wire/traffic.py) and by the
provider's own SDK (openai, google-genai, cohere, anthropic), field by field.

Each recorded answer is served to the SDK's client through an in-memory transport, so the SDK
parses it as it parses a live answer: with its own response types, leniently as it always does
(the openai SDK does not validate strictly by default, which older Responses recordings need:
see the recordings' INDEX.md), and streams through its own accumulation helpers
(``responses.stream().get_final_response()``, ``chat.completions.stream().get_final_completion()``,
``messages.stream().get_final_message()`` / ``get_final_text()``). What the SDK makes of the
answer text, the tool calls (name and arguments) and the token usage must be what the wire readings read.
Usage is compared in the harness's neutral terms, computed from the SDK's own fields: input
counts every token given to the model (Gemini's tool-use prompt, Anthropic's cache writes and
reads), output every token produced (Gemini's thoughts), total the provider's total or, where it
gives none (Cohere, Anthropic), input + output.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from rag_core.evals.wire import traffic
from rag_core.evals.wire.exchange import Exchange

from tests.recordings import RECORDINGS, interactions
from tests.test_wire import COHERE_TEXT_STREAM, COHERE_TOOL_STREAM, _body_text, _exchanges, _sse

PROVIDERS = ("openai", "gemini", "cohere", "anthropic")


def _recordings() -> list[Any]:
    found = sorted(f"{provider}/{path.name}" for provider in PROVIDERS
                   for path in (RECORDINGS / provider).glob("*.yaml"))
    return found or [pytest.param(None, marks=pytest.mark.skip(reason=f"no provider recordings at {RECORDINGS}"))]


@dataclass
class Read:
    """What one answer delivered, in the terms both readers are compared on."""

    text: str | None
    tool_calls: list[dict[str, Any]]
    usage: dict[str, int]


def _usage(inputs: int | None, outputs: int | None, total: int | None = None) -> dict[str, int]:
    if total is None and inputs is not None and outputs is not None:
        total = inputs + outputs
    named = {"input_tokens": inputs, "output_tokens": outputs, "total_tokens": total}
    return {k: int(v) for k, v in named.items() if v is not None}


def _plus(*counts: Any) -> int | None:
    present = [c for c in counts if c is not None]
    return int(sum(present)) if present else None


# --- each SDK, answering from the recorded body ---------------------------------------------------

def _httpx2_client(status: int, body: str, content_type: str) -> Any:
    """The http client the openai and anthropic SDKs take (httpx2), answering with the recorded body."""
    import httpx2

    return httpx2.Client(transport=httpx2.MockTransport(
        lambda _: httpx2.Response(status, content=body.encode(), headers={"content-type": content_type})))


def _httpx_client(status: int, body: str, content_type: str) -> Any:
    """The same for the SDKs on httpx (google-genai, cohere)."""
    import httpx

    return httpx.Client(transport=httpx.MockTransport(
        lambda _: httpx.Response(status, content=body.encode(), headers={"content-type": content_type})))


def _openai(path: str, request: dict[str, Any], status: int, body: str, content_type: str) -> Read | None:
    import openai

    client = openai.OpenAI(api_key="k", max_retries=0, http_client=_httpx2_client(status, body, content_type))
    if path.endswith("/embeddings"):
        if status >= 400:
            with pytest.raises(openai.APIStatusError) as refused:
                client.embeddings.create(model=request["model"], input=request["input"])
            assert refused.value.status_code == status and refused.value.code == json.loads(body)["error"]["code"]
        else:
            parsed = client.embeddings.create(model=request["model"], input=request["input"])
            assert len(parsed.data) == len(request["input"])
        return None
    if path.endswith("/responses"):
        if request.get("stream"):
            with client.responses.stream(model=request["model"], input="x") as stream:
                response = stream.get_final_response()
        else:
            response = client.responses.create(model=request["model"], input="x")
        has_text = any(part.type == "output_text" for item in response.output if item.type == "message"
                       for part in item.content)
        calls = [{"name": item.name, "arguments": json.loads(item.arguments)}
                 for item in response.output if item.type == "function_call"]
        usage = response.usage
        return Read(response.output_text if has_text else None, calls,
                    _usage(usage.input_tokens, usage.output_tokens, usage.total_tokens))
    assert path.endswith("/chat/completions") and request.get("stream")  # the only Chat recordings are streamed
    with client.chat.completions.stream(model=request["model"], messages=[{"role": "user", "content": "x"}]) as stream:
        completion = stream.get_final_completion()
    message = completion.choices[0].message
    calls = [{"name": c.function.name, "arguments": json.loads(c.function.arguments)} for c in message.tool_calls or []]
    usage = completion.usage
    return Read(message.content, calls, _usage(usage.prompt_tokens, usage.completion_tokens, usage.total_tokens))


def _gemini_read(chunks: list[Any]) -> Read:
    """google-genai's GenerateContentResponse objects (one, or a stream's chunks) in the compared terms."""
    texts = [chunk.text for chunk in chunks if chunk.text is not None]
    calls = [{"name": c.name, "arguments": c.args or {}} for chunk in chunks for c in chunk.function_calls or []]
    usage = next((chunk.usage_metadata for chunk in reversed(chunks) if chunk.usage_metadata is not None), None)
    counts = _usage(_plus(usage.prompt_token_count, usage.tool_use_prompt_token_count),
                    _plus(usage.candidates_token_count, usage.thoughts_token_count),
                    usage.total_token_count) if usage is not None else {}
    return Read("".join(texts) if texts else None, calls, counts)


def _gemini(path: str, request: dict[str, Any], status: int, body: str, content_type: str) -> Read | None:
    from google import genai
    from google.genai import types

    client = genai.Client(api_key="k", http_options=types.HttpOptions(
        httpx_client=_httpx_client(status, body, content_type)))
    model = path.rsplit("/", 1)[-1].split(":")[0]
    if ":streamGenerateContent" in path:
        return _gemini_read(list(client.models.generate_content_stream(model=model, contents="x")))
    return _gemini_read([client.models.generate_content(model=model, contents="x")])


def _cohere_read(response: Any) -> Read:
    """A cohere V2ChatResponse in the compared terms."""
    message = response.message
    texts = [part.text for part in message.content or [] if part.type == "text"]
    calls = [{"name": c.function.name, "arguments": json.loads(c.function.arguments)} for c in message.tool_calls or []]
    tokens = response.usage.tokens
    return Read("".join(texts) if texts else None, calls, _usage(tokens.input_tokens, tokens.output_tokens))


def _cohere_stream_read(events: list[Any]) -> Read:
    """A cohere v2 chat stream, accumulated from the SDK's own event types (the SDK has no
    accumulation helper): text of ``text`` content parts, tool calls by index, usage at the end."""
    from cohere.v2.types import (
        ContentDeltaV2ChatStreamResponse, ContentStartV2ChatStreamResponse, MessageEndV2ChatStreamResponse,
        ToolCallDeltaV2ChatStreamResponse, ToolCallStartV2ChatStreamResponse)

    kinds: dict[int, str] = {}
    texts: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    tokens = None
    for event in events:
        if isinstance(event, ContentStartV2ChatStreamResponse):
            kinds[event.index] = event.delta.message.content.type
        elif isinstance(event, ContentDeltaV2ChatStreamResponse) and kinds.get(event.index) == "text":
            texts.append(event.delta.message.content.text or "")
        elif isinstance(event, ToolCallStartV2ChatStreamResponse):
            function = event.delta.message.tool_calls.function
            calls[event.index] = {"name": function.name, "arguments": function.arguments or ""}
        elif isinstance(event, ToolCallDeltaV2ChatStreamResponse):
            calls[event.index]["arguments"] += event.delta.message.tool_calls.function.arguments or ""
        elif isinstance(event, MessageEndV2ChatStreamResponse):
            tokens = event.delta.usage.tokens
    return Read("".join(texts) if texts else None,
                [{"name": c["name"], "arguments": json.loads(c["arguments"])} for _, c in sorted(calls.items())],
                _usage(tokens.input_tokens, tokens.output_tokens) if tokens is not None else {})


def _cohere(path: str, request: dict[str, Any], status: int, body: str, content_type: str) -> Read | None:
    import cohere

    client = cohere.ClientV2(api_key="k", httpx_client=_httpx_client(status, body, content_type))
    if path.endswith("/embed"):
        parsed = client.embed(model=request["model"], input_type=request["input_type"],
                              embedding_types=request["embedding_types"], texts=request.get("texts", ["x"]))
        assert isinstance(parsed, cohere.EmbedByTypeResponse) and parsed.embeddings.float_
        return None
    if path.endswith("/rerank"):
        parsed = client.rerank(model=request["model"], query=request["query"], documents=request["documents"])
        assert isinstance(parsed, cohere.V2RerankResponse) and parsed.results
        return None
    messages = [{"role": "user", "content": "x"}]
    if request.get("stream"):
        return _cohere_stream_read(list(client.chat_stream(model=request["model"], messages=messages)))
    return _cohere_read(client.chat(model=request["model"], messages=messages))


def _anthropic(path: str, request: dict[str, Any], status: int, body: str, content_type: str) -> Read | None:
    import anthropic

    client = anthropic.Anthropic(api_key="k", max_retries=0, http_client=_httpx2_client(status, body, content_type))
    arguments = {"model": request["model"], "max_tokens": 16, "messages": [{"role": "user", "content": "x"}]}
    if request.get("stream"):
        with client.messages.stream(**arguments) as stream:
            message = stream.get_final_message()
            has_text = any(block.type == "text" for block in message.content)
            text = stream.get_final_text() if has_text else None
    else:
        message = client.messages.create(**arguments)
        texts = [block.text for block in message.content if block.type == "text"]
        text = "".join(texts) if texts else None
    calls = [{"name": block.name, "arguments": block.input} for block in message.content if block.type == "tool_use"]
    usage = message.usage
    return Read(text, calls, _usage(_plus(usage.input_tokens, usage.cache_creation_input_tokens,
                                          usage.cache_read_input_tokens), usage.output_tokens))


SDK_READERS = {"openai": _openai, "gemini": _gemini, "cohere": _cohere, "anthropic": _anthropic}


# --- the comparison -------------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the SDKs warn about the recordings' older models
@pytest.mark.parametrize("name", _recordings())
def test_the_sdk_reads_every_recording_as_the_wire_readers_do(name):
    provider = name.split("/", 1)[0]
    recorded = interactions(name)
    exchanges = _exchanges(name)
    assert len(exchanges) == len(recorded)
    for number, (interaction, exchange) in enumerate(zip(recorded, exchanges), start=1):
        response = interaction["response"]
        headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
        content_type = (headers.get("content-type") or ["application/json"])[0]
        request = json.loads(interaction["request"]["body"])
        path = urlparse(interaction["request"]["uri"]).path
        sdk = SDK_READERS[provider](path, request, response["status"]["code"], _body_text(response), content_type)
        got = traffic.answer(exchange)
        where = f"{name}, interaction {number}"
        if sdk is None:
            assert got is None, f"{where}: not a chat answer, yet the wire reading read one"
            continue
        assert got is not None, f"{where}: the SDK read an answer, the wire reading none"
        assert got.text == sdk.text, where
        assert got.tool_calls == sdk.tool_calls, where
        assert got.usage == sdk.usage, where
        assert got.usage, f"{where}: no usage read"


def test_every_provider_has_recordings_compared():
    if not RECORDINGS.exists():
        pytest.skip(f"real provider recordings not found at {RECORDINGS}")
    names = _recordings()
    assert {Path(n).parent.name for n in names} == set(PROVIDERS)


@pytest.mark.parametrize("events", [COHERE_TOOL_STREAM, COHERE_TEXT_STREAM], ids=["tool_call", "text_after_thinking"])
def test_the_cohere_sdk_reads_a_chat_stream_as_the_wire_readers_do(events):
    """No shared recording is a Cohere stream: the events of tests/test_wire.py (built from the v2
    chat API reference) go through the cohere SDK's stream parser and are accumulated from its
    event types, and compared as the recordings are."""
    stream = _sse(events, named=True, done=True)
    sdk = _cohere("/v2/chat", {"model": "command-a-03-2025", "stream": True}, 200, stream, "text/event-stream")
    got = traffic.answer(Exchange("POST", "/v2/chat", {"messages": []}, 200, stream))
    assert (got.text, got.tool_calls, got.usage) == (sdk.text, sdk.tool_calls, sdk.usage)
