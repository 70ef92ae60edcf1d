"""Replies of AWS Bedrock's Converse API, in its wire format (botocore's ``bedrock-runtime``
service model, protocol ``rest-json``):

* ``POST /model/{modelId}/converse``: a JSON ``ConverseResponse`` (``output.message.content``
  with ``text`` and ``toolUse`` blocks, ``stopReason``, ``usage``, ``metrics.latencyMs``);
* ``POST /model/{modelId}/converse-stream``: the same answer as AWS event-stream frames
  (``application/vnd.amazon.eventstream``): ``messageStart``, per content block its deltas and
  ``contentBlockStop`` (a ``toolUse`` block opens with ``contentBlockStart``), ``messageStop``
  (stop reason), ``metadata`` (usage, metrics);
* errors as Bedrock sends them: the HTTP status, a JSON ``{"message": ...}`` body and the
  exception's name in the ``x-amzn-ErrorType`` header, which is where botocore reads the code.

Text comes before tool uses, as Claude on Bedrock writes them.
"""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any
from urllib.parse import unquote

from rag_core.evals.emulator.script import DeterministicIds, ScriptedError, ScriptedTurn, estimate_tokens, text_pieces
from rag_core.evals.emulator.tokens import CONVERSE_INPUT, input_tokens

# (status, content type, body, headers): provider.py wraps it in its Reply
Answer = tuple[int, str, bytes, dict[str, str]]

# the exception the service model names for each status (Converse's error shapes)
ERROR_TYPES = {400: "ValidationException", 403: "AccessDeniedException", 404: "ResourceNotFoundException",
               408: "ModelTimeoutException", 424: "ModelErrorException", 429: "ThrottlingException",
               500: "InternalServerException", 503: "ServiceUnavailableException"}
# what Bedrock appends to the exception's name in x-amzn-ErrorType; botocore keeps the part before ':'
_ERROR_NAMESPACE = "http://internal.amazon.com/coral/com.amazon.bedrock/"
# the emulator answers at once; a fixed latency keeps goldens and cassettes the same run after run
LATENCY_MS = 250
EVENT_STREAM = "application/vnd.amazon.eventstream"


def is_converse(path: str) -> bool:
    """Whether ``path`` is a Converse or ConverseStream call (``/model/{modelId}/converse[-stream]``)."""
    return "/model/" in path and path.endswith(("/converse", "/converse-stream"))


def model_id(path: str) -> str:
    """The model id a Converse path names (botocore percent-encodes it: ``…-v1%3A0``)."""
    return unquote(path.rsplit("/model/", 1)[-1].rsplit("/", 1)[0])


def answer(turn: ScriptedTurn | ScriptedError, path: str, request: dict[str, Any], ids: DeterministicIds) -> Answer:
    """The reply to one scripted Converse or ConverseStream call."""
    headers = {"x-amzn-RequestId": _request_id(ids)}
    if isinstance(turn, ScriptedError):
        # a case that names no exception gets the one the service model gives the status
        named = turn.type != "invalid_request_error"
        kind = turn.type if named else ERROR_TYPES.get(turn.status, "ValidationException")
        headers["x-amzn-ErrorType"] = f"{kind}:{_ERROR_NAMESPACE}"
        return turn.status, "application/json", json.dumps({"message": turn.message}).encode(), headers
    blocks = _blocks(turn, ids)
    usage = _usage(request, blocks)
    stop = "tool_use" if turn.tool_calls else "end_turn"
    if path.endswith("/converse-stream"):
        return 200, EVENT_STREAM, b"".join(_frame(kind, event) for kind, event in _events(blocks, stop, usage)), headers
    body = {"output": {"message": {"role": "assistant", "content": [_public(b) for b in blocks]}},
            "stopReason": stop, "usage": usage, "metrics": {"latencyMs": LATENCY_MS}}
    return 200, "application/json", json.dumps(body, ensure_ascii=False).encode(), headers


def _request_id(ids: DeterministicIds) -> str:
    """A deterministic id in the UUID form Bedrock's ``x-amzn-RequestId`` has."""
    digits = ids.next("req", 32).removeprefix("req_")
    return "-".join((digits[:8], digits[8:12], digits[12:16], digits[16:20], digits[20:]))


def _blocks(turn: ScriptedTurn, ids: DeterministicIds) -> list[dict[str, Any]]:
    """The answer's content blocks; keys starting with ``_`` are the emulator's own bookkeeping."""
    blocks: list[dict[str, Any]] = []
    if turn.text is not None:
        blocks.append({"text": turn.text})
    for call in turn.tool_calls:
        # a JSON answer's input is always a document; malformed arguments can only be sent in a stream
        arguments = json.loads(call.arguments_text()) if call.raw_arguments is None else {"_raw": call.raw_arguments}
        blocks.append({"toolUse": {"toolUseId": ids.next("tooluse", 22), "name": call.name, "input": arguments},
                       "_text": call.arguments_text()})
    return blocks


def _public(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if not k.startswith("_")}


def _usage(request: dict[str, Any], blocks: list[dict[str, Any]]) -> dict[str, int]:
    inputs = input_tokens(request, CONVERSE_INPUT)
    outputs = estimate_tokens("".join(b.get("text") or b["toolUse"]["name"] + b["_text"] for b in blocks) or " ")
    return {"inputTokens": inputs, "outputTokens": outputs, "totalTokens": inputs + outputs}


def _events(blocks: list[dict[str, Any]], stop: str, usage: dict[str, int]) -> list[tuple[str, dict[str, Any]]]:
    """ConverseStream's events, by event type, as the service sends them."""
    events: list[tuple[str, dict[str, Any]]] = [("messageStart", {"role": "assistant"})]
    for index, block in enumerate(blocks):
        if "text" in block:
            events += [("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": piece}})
                       for piece in text_pieces(block["text"]) if block["text"]]
        else:
            use = block["toolUse"]
            events.append(("contentBlockStart", {"contentBlockIndex": index, "start": {
                "toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}}))
            events += [("contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}})
                       for piece in text_pieces(block["_text"])]
        events.append(("contentBlockStop", {"contentBlockIndex": index}))
    events.append(("messageStop", {"stopReason": stop}))
    events.append(("metadata", {"usage": usage, "metrics": {"latencyMs": LATENCY_MS}}))
    return events


# --- AWS event-stream framing -------------------------------------------------------------------
# A message is a prelude (total length, headers length: two big-endian uint32), the prelude's
# CRC32, the headers, the payload, and the CRC32 of everything before it.

_STRING_HEADER = 7  # the header value type of a UTF-8 string (two-byte length, then the bytes)


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return struct.pack(">B", len(raw_name)) + raw_name + struct.pack(">BH", _STRING_HEADER, len(raw_value)) + raw_value


def event_stream_message(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream message: string-valued ``headers`` (in order) and ``payload``."""
    encoded = b"".join(_header(name, value) for name, value in headers.items())
    prelude = struct.pack(">II", 12 + len(encoded) + len(payload) + 4, len(encoded))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + encoded + payload
    return message + struct.pack(">I", zlib.crc32(message))


def _frame(event_type: str, event: dict[str, Any]) -> bytes:
    """One event-stream message carrying ``event`` as its JSON payload."""
    headers = {":event-type": event_type, ":content-type": "application/json", ":message-type": "event"}
    return event_stream_message(headers, json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode())


# its errors and headers are its own: the whole reply is the dialect's
DIALECTS = {"bedrock-converse": answer, "bedrock-converse-stream": answer}
