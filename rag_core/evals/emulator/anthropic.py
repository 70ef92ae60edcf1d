"""Replies of Anthropic's Messages API (``POST /v1/messages``), in its wire format: a JSON
``Message``, or (``stream: true``) its server-sent events, shaped on recordings of the live API:
``message_start`` (usage so far), per content block ``content_block_start``, its deltas
(``text_delta``, ``input_json_delta``) and ``content_block_stop``, then ``message_delta`` (stop
reason, usage) and ``message_stop``.

Text comes before tool calls, as Claude writes them; errors have the API's own shape
(``{"type": "error", "error": {"type", "message"}}``).
"""

from __future__ import annotations

import json
from typing import Any

from rag_core.evals.emulator.script import DeterministicIds, ScriptedError, ScriptedTurn, estimate_tokens, text_pieces
from rag_core.evals.emulator.tokens import MESSAGES_INPUT, input_tokens
from rag_core.evals.emulator.dialects import SSE, Answer, json_answer

# the error type the API names for each status
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 500: "api_error",
               529: "overloaded_error"}


def _blocks(turn: ScriptedTurn, ids: DeterministicIds) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if turn.text is not None:
        blocks.append({"type": "text", "text": turn.text})
    for call in turn.tool_calls:
        # the API's input is always an object; malformed arguments can only be sent in a stream
        arguments = json.loads(call.arguments_text()) if call.raw_arguments is None else {"_raw": call.raw_arguments}
        blocks.append({"type": "tool_use", "id": ids.next("toolu", 24), "name": call.name, "input": arguments,
                       "_text": call.arguments_text()})
    return blocks


def _usage(request: dict[str, Any], output_tokens: int) -> dict[str, Any]:
    return {"input_tokens": input_tokens(request, MESSAGES_INPUT), "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0, "output_tokens": output_tokens}


def _output_tokens(blocks: list[dict[str, Any]]) -> int:
    return estimate_tokens("".join(b.get("text") or b["name"] + b["_text"] for b in blocks) or " ")


def _public(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if not k.startswith("_")}


def message_json(turn: ScriptedTurn, request: dict[str, Any], ids: DeterministicIds) -> dict[str, Any]:
    """The body of a non-streaming ``POST /v1/messages`` reply."""
    message_id = ids.next("msg", 24)
    blocks = _blocks(turn, ids)
    return {"id": message_id, "type": "message", "role": "assistant", "model": request.get("model", "claude"),
            "content": [_public(b) for b in blocks],
            "stop_reason": "tool_use" if turn.tool_calls else "end_turn", "stop_sequence": None,
            "usage": _usage(request, _output_tokens(blocks))}


def message_events(turn: ScriptedTurn, request: dict[str, Any], ids: DeterministicIds) -> list[dict[str, Any]]:
    """The event sequence of a streaming reply."""
    message_id = ids.next("msg", 24)
    blocks = _blocks(turn, ids)
    usage = _usage(request, _output_tokens(blocks))
    events: list[dict[str, Any]] = [{"type": "message_start", "message": {
        "id": message_id, "type": "message", "role": "assistant", "model": request.get("model", "claude"),
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}}]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            events.append({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
            events += [{"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}
                       for piece in text_pieces(block["text"]) if block["text"]]
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            events.append({"type": "content_block_start", "index": index, "content_block": start})
            events += [{"type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece}}
                       for piece in text_pieces(block["_text"])]
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": "tool_use" if turn.tool_calls else "end_turn",
                                                      "stop_sequence": None}, "usage": usage})
    events.append({"type": "message_stop"})
    return events


def sse(events: list[dict[str, Any]]) -> str:
    """Anthropic's SSE framing: an ``event:`` line naming each event's type, then its ``data:``."""
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e, ensure_ascii=False, separators=(',', ':'))}\n\n"
                   for e in events)


def count_tokens_json(request: dict[str, Any]) -> dict[str, Any]:
    """The body of a ``POST /v1/messages/count_tokens`` reply (the beta one's too): the input
    tokens a ``POST /v1/messages`` with the same input reports in its usage."""
    return {"input_tokens": input_tokens(request, MESSAGES_INPUT)}


def error_json(error: ScriptedError) -> dict[str, Any]:
    kind = error.type if error.type != "invalid_request_error" else ERROR_TYPES.get(error.status, error.type)
    return {"type": "error", "error": {"type": kind, "message": error.message}}


def messages(turn: ScriptedTurn | ScriptedError, path: str, request: dict[str, Any], ids: DeterministicIds) -> Answer:
    """The answer to one scripted Messages call: its error's own shape, a stream of events, or a Message."""
    headers = {"request-id": ids.next("req", 32)}
    if isinstance(turn, ScriptedError):
        return json_answer(error_json(turn), headers, turn.status)
    if request.get("stream"):
        return 200, SSE, sse(message_events(turn, request, ids)).encode(), headers
    return json_answer(message_json(turn, request, ids), headers)


DIALECTS = {"anthropic-messages": messages}
