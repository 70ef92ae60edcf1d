"""What provider traffic says, read from the wire formats themselves (no agent needed).

Everything a golden pins (system prompt, user messages, tool definitions, tool calls, the final
text, token usage) is visible in the HTTP requests and responses a case exchanges, whatever code
sent them: a rag_core agent, another framework, or a hand-written SDK loop. Each request is read
as the API its method and path name (``rag_core.providers.api_of``), by that API's reading: one
module per API family (``openai.py``, ``gemini.py``, ``cohere.py``, ``anthropic.py``,
``bedrock.py``), named by the provider's ``family``. Streams are assembled into the message they
deliver. A field the wire does not carry is absent, never guessed.

Token usage is read the same way for every API: ``input_tokens`` counts every token the model
was given (cached or not, tool-use prompts included), ``output_tokens`` every token it produced
(reasoning and thinking included), ``total_tokens`` what the provider reports as the total, or
their sum where it reports none.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

from rag_core.evals.wire import parts
from rag_core.evals.wire.exchange import Answer, ApiReading, Body, Exchange, ModelCall
from rag_core.providers import CHAT_APIS, FAMILIES, api_of


@functools.cache
def readings() -> dict[str, ApiReading]:
    """Every API's reading, from each provider family's module (``rag_core.evals.wire.<family>``)."""
    found: dict[str, ApiReading] = {}
    for family in FAMILIES:
        found |= importlib.import_module(f"rag_core.evals.wire.{family}").READINGS
    return found


def binary_stream_apis() -> tuple[str, ...]:
    """The APIs whose successful answer is binary: kept as the bytes recorded (named by the path,
    since the content type is not always recorded)."""
    return tuple(api for api, reading in readings().items() if reading.call and reading.call.binary_stream)


def model_call(api: str | None) -> ModelCall | None:
    reading = readings().get(api) if api is not None else None
    return reading.call if reading is not None else None


def _call_of(path: str) -> ModelCall:
    call = model_call(api_of("POST", path))
    if call is None:
        raise ValueError(f"{path} is no model call the harness reads")
    return call


def prompt_prefix(path: str, body: Body) -> dict[str, Any]:
    """The system prompt and tool definitions of a model request to ``path``, exactly as sent
    (what stays the same from one round to the next, and what providers cache)."""
    return _call_of(path).prompt_prefix(body)


def system_prompt(path: str, body: Body) -> str | None:
    return _call_of(path).system_prompt(body)


def tools(path: str, body: Body) -> list[dict[str, Any]]:
    """The tools a model request offers, in one provider-neutral shape, in the order sent."""
    return _call_of(path).tools(body)


def tool_outputs(path: str, body: Body) -> list[str]:
    """The tool results a model request carries back, in order, as text: the context a model
    answered from, whatever searched it."""
    return _call_of(path).tool_outputs(body)


def answer(exchange: Exchange) -> Answer | None:
    """What a model response delivered (text, tool calls, usage); None for other traffic and for
    error answers."""
    call, body = model_call(exchange.api), exchange.response
    if call is None or exchange.status >= 400 or body is None:
        return None
    if call.binary_stream is not None:
        return call.binary_stream(body)
    if isinstance(body, str):  # a server-sent event stream
        return call.stream([e for e in parts.sse_events(body) if isinstance(e, dict)]) if call.stream else None
    if isinstance(body, dict) or (isinstance(body, list) and call.json_lists):
        return call.answer(body)
    return None


def validate_request(path: str, body: Body) -> None:
    """Check a body against the request types of the SDK of the API it goes to (raises)."""
    api = api_of("POST", path)
    reading = readings().get(api) if api is not None else None
    if reading is None or (reading.call is not None and reading.validate is None):
        raise ValueError(f"no SDK request type known for {path}")
    if reading.validate is not None:  # None: the SDK builds those bodies itself (embeddings, rerank)
        reading.validate(path, body)


def fields_of(exchanges: list[Exchange], turn_starts: list[int]) -> dict[str, Any]:
    """The golden fields a case's traffic determines. ``turn_starts`` is the index of the first
    exchange of each turn, so each turn's user message is read from its first model request."""
    chats = [(i, e, model_call(e.api)) for i, e in enumerate(exchanges)
             if e.api in CHAT_APIS and isinstance(e.request, dict)]
    chats = [(i, e, call) for i, e, call in chats if call is not None]
    first = chats[0] if chats else None
    user_messages = []
    for turn, start in enumerate(turn_starts):
        end = turn_starts[turn + 1] if turn + 1 < len(turn_starts) else len(exchanges)
        found = next(((e, call) for i, e, call in chats if start <= i < end), None)
        if found is not None:
            user_messages.append(found[1].last_user_message(found[0].request))
    parsed = [answer(e) for _, e, _ in chats]
    answers = [a for a in parsed if a is not None]
    usage: dict[str, int] = {}
    for a in answers:
        for key, value in a.usage.items():
            usage[key] = usage.get(key, 0) + value
    last = parsed[-1] if parsed else None
    return {
        "apis": [e.api or f"{e.method} {e.path}" for e in exchanges],
        "system_prompt": first[2].system_prompt(first[1].request) if first else None,
        "user_messages": user_messages,
        "tools": first[2].tools(first[1].request) if first else [],
        "requests": [e.request for e in exchanges],
        "chat_requests": [e.request for _, e, _ in chats],
        # each model request's system prompt and tools as sent, for the stable-prefix check
        "prompt_prefixes": [call.prompt_prefix(e.request) for _, e, call in chats],
        "tool_calls": {"calls": [c for a in answers for c in a.tool_calls]},
        "final_text": last.text if last is not None else None,
        "usage": usage,
        # what the last model request carried back from tools: a target's retrieved context
        "tool_outputs": chats[-1][2].tool_outputs(chats[-1][1].request) if chats else [],
    }
