"""Replies of the Gemini API (v1beta): ``generateContent``, ``streamGenerateContent?alt=sse``,
``countTokens``, ``embedContent`` and ``batchEmbedContents``, shaped on recordings of the live API.

Function-call parts carry a ``thoughtSignature`` (as Gemini 3 models send), so the round
trip of signatures is exercised.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from rag_core.evals.emulator.script import DeterministicIds, ScriptedError, ScriptedTurn, estimate_tokens, text_pieces
from rag_core.evals.emulator.tokens import GEMINI_INPUT, input_tokens
from rag_core.evals.emulator.vectors import embed
from rag_core.evals.emulator.dialects import Answer, error_answer, json_answer, request_id


def _signature(seed: str) -> str:
    return base64.b64encode(hashlib.sha256(seed.encode()).digest()).decode()


def _usage(request: dict[str, Any], output: str) -> dict[str, Any]:
    prompt = input_tokens(request, GEMINI_INPUT)
    candidates = estimate_tokens(output)
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": candidates,
        "totalTokenCount": prompt + candidates,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
        "candidatesTokensDetails": [{"modality": "TEXT", "tokenCount": candidates}],
    }


def _parts(turn: ScriptedTurn, ids: DeterministicIds) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for call in turn.tool_calls:
        arguments = json.loads(call.arguments_text()) if call.raw_arguments is None else {"_raw": call.raw_arguments}
        parts.append({"functionCall": {"name": call.name, "args": arguments}, "thoughtSignature": _signature(ids.next("sig"))})
    if turn.text is not None:
        parts.append({"text": turn.text})
    return parts


def _output_text(parts: list[dict[str, Any]]) -> str:
    return "".join(p.get("text", "") + json.dumps(p.get("functionCall", "")) for p in parts)


def generate_json(turn: ScriptedTurn, request: dict[str, Any], model: str, ids: DeterministicIds) -> dict[str, Any]:
    parts = _parts(turn, ids)
    return {
        "candidates": [{"content": {"parts": parts, "role": "model"}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": _usage(request, _output_text(parts)),
        "modelVersion": model,
        "responseId": ids.next("g", 22)[2:],
    }


def stream_chunks(turn: ScriptedTurn, request: dict[str, Any], model: str, ids: DeterministicIds) -> list[dict[str, Any]]:
    """Text arrives in pieces; function calls whole, each in its own chunk; usage and
    finishReason on the last chunk."""
    parts = _parts(turn, ids)
    response_id = ids.next("g", 22)[2:]
    chunks: list[dict[str, Any]] = []
    for part in parts:
        pieces = [{"text": p} for p in text_pieces(part["text"])] if "text" in part else [part]
        for piece in pieces:
            chunks.append({"candidates": [{"content": {"parts": [piece], "role": "model"}, "index": 0}],
                           "modelVersion": model, "responseId": response_id})
    if not chunks:
        chunks.append({"candidates": [{"content": {"parts": [{"text": ""}], "role": "model"}, "index": 0}],
                       "modelVersion": model, "responseId": response_id})
    chunks[-1]["candidates"][0]["finishReason"] = "STOP"
    chunks[-1]["usageMetadata"] = _usage(request, _output_text(parts))
    return chunks


def sse(chunks: list[dict[str, Any]]) -> str:
    return "".join(f"data: {json.dumps(c, ensure_ascii=False, separators=(',', ':'))}\r\n\r\n" for c in chunks)


def count_tokens_json(request: dict[str, Any]) -> dict[str, Any]:
    """The body of a ``POST /v1beta/models/{model}:countTokens`` reply: the prompt tokens a
    ``generateContent`` call with the same input reports in its usage. The input is the request's
    ``contents``, or the whole ``generateContentRequest`` it may carry instead."""
    counted = request.get("generateContentRequest")
    tokens = input_tokens(counted if isinstance(counted, dict) else request, GEMINI_INPUT)
    return {"totalTokens": tokens, "promptTokensDetails": [{"modality": "TEXT", "tokenCount": tokens}]}


# gemini-embedding-001's dimensions, when a request names none
EMBEDDING_DIMENSIONS = 3072


def _embedding(item: dict[str, Any]) -> dict[str, Any]:
    """One ``ContentEmbedding`` for one ``EmbedContentRequest``."""
    text = "".join(p.get("text", "") for p in (item.get("content") or {}).get("parts", []))
    return {"values": embed(text, int(item.get("outputDimensionality") or EMBEDDING_DIMENSIONS))}


def embed_json(request: dict[str, Any]) -> dict[str, Any]:
    """The body of a ``POST /v1beta/models/{model}:embedContent`` reply: one embedding."""
    return {"embedding": _embedding(request)}


def batch_embed_json(request: dict[str, Any]) -> dict[str, Any]:
    """The body of a ``POST /v1beta/models/{model}:batchEmbedContents`` reply, one embedding per request."""
    return {"embeddings": [_embedding(item) for item in request.get("requests") or []]}


def generate(turn: ScriptedTurn | ScriptedError, path: str, request: dict[str, Any], ids: DeterministicIds) -> Answer:
    """The answer to one scripted ``generateContent`` (JSON) or ``streamGenerateContent`` (events) call."""
    headers = request_id(ids)
    if isinstance(turn, ScriptedError):
        return error_answer(turn, headers)
    model = path.rsplit("/", 1)[-1].split(":")[0]
    if ":streamGenerateContent" in path:
        return 200, "text/event-stream", sse(stream_chunks(turn, request, model, ids)).encode(), headers
    return json_answer(generate_json(turn, request, model, ids), headers)


DIALECTS = {"gemini": generate, "gemini-stream": generate}
