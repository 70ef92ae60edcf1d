"""Replies of the OpenAI Responses API, in its real wire format (JSON and SSE events).

Shaped on recordings of the live API: the same keys, item types and event sequence
(response.created, in_progress, output_item.added/done, content_part.*, output_text.*,
function_call_arguments.*, completed), so the openai SDK parses both alike.
"""

from __future__ import annotations

import json
from typing import Any

from rag_core.evals.emulator.script import DeterministicIds, ScriptedTurn, estimate_tokens, text_pieces
from rag_core.evals.emulator.tokens import RESPONSES_INPUT, input_tokens

CREATED_AT = 1767225600  # fixed (2026-01-01T00:00:00Z): replies must not depend on the clock


def _usage(request: dict[str, Any], output_text: str) -> dict[str, Any]:
    inputs = input_tokens(request, RESPONSES_INPUT)
    output_tokens = estimate_tokens(output_text)
    return {
        "input_tokens": inputs,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": inputs + output_tokens,
    }


def _envelope(response_id: str, request: dict[str, Any], status: str) -> dict[str, Any]:
    return {
        "id": response_id,
        "object": "response",
        "created_at": CREATED_AT,
        "status": status,
        "background": False,
        "billing": {"payer": "developer"},
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": request.get("max_output_tokens"),
        "max_tool_calls": None,
        "model": request.get("model", "gpt-5.2"),
        "output": [],
        "parallel_tool_calls": request.get("parallel_tool_calls", True),
        "previous_response_id": request.get("previous_response_id"),
        "prompt_cache_key": None,
        "prompt_cache_retention": None,
        "reasoning": {"effort": (request.get("reasoning") or {}).get("effort"), "summary": None},
        "safety_identifier": None,
        "service_tier": "default",
        "store": request.get("store", True),
        "temperature": request.get("temperature", 1.0),
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": request.get("tools", []),
        "top_logprobs": 0,
        "top_p": request.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": None,
        "user": None,
        "metadata": {},
    }


def _items(turn: ScriptedTurn, ids: DeterministicIds) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for call in turn.tool_calls:
        items.append(
            {
                "id": ids.next("fc"),
                "type": "function_call",
                "status": "completed",
                "arguments": call.arguments_text(),
                "call_id": ids.next("call", 24),
                "name": call.name,
            }
        )
    if turn.text is not None:
        items.append(
            {
                "id": ids.next("msg"),
                "type": "message",
                "status": "completed",
                "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": turn.text}],
                "role": "assistant",
            }
        )
    return items


def _output_text(items: list[dict[str, Any]]) -> str:
    parts = []
    for item in items:
        if item["type"] == "message":
            parts.extend(c["text"] for c in item["content"])
        else:
            parts.append(item["name"] + item["arguments"])
    return "".join(parts)


def response_json(turn: ScriptedTurn, request: dict[str, Any], ids: DeterministicIds) -> dict[str, Any]:
    """The body of a non-streaming ``POST /v1/responses`` reply."""
    response = _envelope(ids.next("resp"), request, "completed")
    response["output"] = _items(turn, ids)
    response["usage"] = _usage(request, _output_text(response["output"]))
    return response


def response_events(turn: ScriptedTurn, request: dict[str, Any], ids: DeterministicIds) -> list[dict[str, Any]]:
    """The event sequence of a streaming reply, each event with its ``sequence_number``."""
    final = response_json(turn, request, ids)
    pending = {**final, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": pending},
        {"type": "response.in_progress", "response": pending},
    ]
    for index, item in enumerate(final["output"]):
        if item["type"] == "function_call":
            events.append(
                {"type": "response.output_item.added", "output_index": index,
                 "item": {**item, "status": "in_progress", "arguments": ""}}
            )
            for piece in text_pieces(item["arguments"]):
                events.append(
                    {"type": "response.function_call_arguments.delta", "item_id": item["id"],
                     "output_index": index, "delta": piece}
                )
            events.append(
                {"type": "response.function_call_arguments.done", "item_id": item["id"],
                 "output_index": index, "arguments": item["arguments"]}
            )
        else:
            text = item["content"][0]["text"]
            events.append(
                {"type": "response.output_item.added", "output_index": index,
                 "item": {**item, "status": "in_progress", "content": []}}
            )
            empty_part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
            events.append(
                {"type": "response.content_part.added", "item_id": item["id"], "output_index": index,
                 "content_index": 0, "part": empty_part}
            )
            for piece in text_pieces(text):
                events.append(
                    {"type": "response.output_text.delta", "item_id": item["id"], "output_index": index,
                     "content_index": 0, "delta": piece, "logprobs": []}
                )
            events.append(
                {"type": "response.output_text.done", "item_id": item["id"], "output_index": index,
                 "content_index": 0, "text": text, "logprobs": []}
            )
            events.append(
                {"type": "response.content_part.done", "item_id": item["id"], "output_index": index,
                 "content_index": 0, "part": item["content"][0]}
            )
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": final})
    return [{**e, "sequence_number": n} for n, e in enumerate(events)]


def input_tokens_json(request: dict[str, Any]) -> dict[str, Any]:
    """The body of a ``POST /v1/responses/input_tokens`` reply: the input tokens a ``POST
    /v1/responses`` with the same input reports in its usage."""
    return {"object": "response.input_tokens", "input_tokens": input_tokens(request, RESPONSES_INPUT)}


def sse(events: list[dict[str, Any]]) -> str:
    """Responses SSE framing: an ``event:`` line and a ``data:`` line per event, no [DONE]."""
    return "".join(
        f"event: {e['type']}\ndata: {json.dumps(e, ensure_ascii=False, separators=(',', ':'))}\n\n"
        for e in events
    )
