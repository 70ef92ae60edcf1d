"""Replies of the OpenAI Chat Completions API, in its real wire format (JSON and SSE chunks).

Streaming follows the live API: a role chunk, content or tool-call argument fragments,
a finish chunk, then (with ``stream_options.include_usage``) a usage chunk with empty
``choices``, then ``data: [DONE]``.
"""

from __future__ import annotations

import json
from typing import Any

from rag_core.evals.emulator.openai_responses import CREATED_AT
from rag_core.evals.emulator.script import DeterministicIds, ScriptedTurn, estimate_tokens, text_pieces
from rag_core.evals.emulator.tokens import CHAT_INPUT, input_tokens


def _usage(request: dict[str, Any], output_text: str) -> dict[str, Any]:
    prompt = input_tokens(request, CHAT_INPUT)
    completion = estimate_tokens(output_text)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _tool_calls(turn: ScriptedTurn, ids: DeterministicIds) -> list[dict[str, Any]]:
    return [
        {"id": ids.next("call", 24), "type": "function", "function": {"name": c.name, "arguments": c.arguments_text()}}
        for c in turn.tool_calls
    ]


def _output_text(turn: ScriptedTurn, calls: list[dict[str, Any]]) -> str:
    return (turn.text or "") + "".join(c["function"]["name"] + c["function"]["arguments"] for c in calls)


def completion_json(turn: ScriptedTurn, request: dict[str, Any], ids: DeterministicIds) -> dict[str, Any]:
    """The body of a non-streaming ``POST /v1/chat/completions`` reply."""
    completion_id = ids.next("chatcmpl", 29)
    calls = _tool_calls(turn, ids)
    message: dict[str, Any] = {"role": "assistant", "content": turn.text, "refusal": None, "annotations": []}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": CREATED_AT,
        "model": request.get("model", "gpt-5.2"),
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": "tool_calls" if calls else "stop"}
        ],
        "usage": _usage(request, _output_text(turn, calls)),
        "service_tier": "default",
        "system_fingerprint": "fp_emulator",
    }


def completion_chunks(turn: ScriptedTurn, request: dict[str, Any], ids: DeterministicIds) -> list[dict[str, Any]]:
    """The chunk sequence of a streaming reply."""
    completion_id = ids.next("chatcmpl", 29)
    calls = _tool_calls(turn, ids)
    base = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": CREATED_AT,
        "model": request.get("model", "gpt-5.2"),
        "service_tier": "default",
        "system_fingerprint": "fp_emulator",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
                "usage": None}

    chunks = [chunk({"role": "assistant", "content": "" if turn.text is not None else None, "refusal": None})]
    for piece in text_pieces(turn.text) if turn.text else []:
        chunks.append(chunk({"content": piece}))
    for index, call in enumerate(calls):
        head = {"index": index, "id": call["id"], "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""}}
        chunks.append(chunk({"tool_calls": [head]}))
        for piece in text_pieces(call["function"]["arguments"]):
            chunks.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    chunks.append(chunk({}, "tool_calls" if calls else "stop"))
    if (request.get("stream_options") or {}).get("include_usage"):
        chunks.append({**base, "choices": [], "usage": _usage(request, _output_text(turn, calls))})
    return chunks


def chat_sse(chunks: list[dict[str, Any]]) -> str:
    """Chat Completions SSE framing: ``data:`` lines, closed by ``data: [DONE]``."""
    body = "".join(f"data: {json.dumps(c, ensure_ascii=False, separators=(',', ':'))}\n\n" for c in chunks)
    return body + "data: [DONE]\n\n"
