"""Replies of Cohere's API: ``/v2/embed``, ``/v2/rerank`` and ``/v2/chat`` (non-streaming), and the
v1 ``/v1/embed`` and ``/v1/rerank`` that the SDK's v1 client (``cohere.Client``, which Agno uses)
still calls."""

from __future__ import annotations

import json
from typing import Any

from rag_core.evals.emulator.script import DeterministicIds, ScriptedError, ScriptedTurn, estimate_tokens
from rag_core.evals.emulator.tokens import COHERE_CHAT_INPUT, input_tokens
from rag_core.evals.emulator.vectors import embed, relevance
from rag_core.evals.emulator.dialects import Answer, error_answer, json_answer, request_id

DIMENSIONS = {"embed-v4.0": 1536, "embed-english-v3.0": 1024, "embed-multilingual-v3.0": 1024}


def _uuid(ids: DeterministicIds) -> str:
    raw = ids.next("x", 32)[2:]
    return f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:32]}"


def embed_json(request: dict[str, Any], ids: DeterministicIds, version: str = "2") -> dict[str, Any]:
    """An embed reply. v1 without ``embedding_types`` answers a plain list of float vectors
    (``embeddings_floats``); otherwise, and always in v2, the vectors come by type."""
    texts = list(request.get("texts") or [])
    model = request.get("model", "embed-v4.0")
    dimensions = int(request.get("output_dimension") or DIMENSIONS.get(model, 1024))
    vectors = [embed(t, dimensions) for t in texts]
    types = request.get("embedding_types")
    by_type = version == "2" or types is not None
    return {
        "id": _uuid(ids),
        "embeddings": {kind: vectors for kind in types or ["float"] if kind == "float"} if by_type else vectors,
        "texts": texts,
        "meta": {"api_version": {"version": version},
                 "billed_units": {"image_tokens": 0, "input_tokens": sum(estimate_tokens(t) for t in texts)}},
        "response_type": "embeddings_by_type" if by_type else "embeddings_floats",
    }


def rerank_json(request: dict[str, Any], ids: DeterministicIds, version: str = "2") -> dict[str, Any]:
    """A rerank reply (the same shape in v1 and v2)."""
    query = request.get("query", "")
    documents = [d if isinstance(d, str) else json.dumps(d) for d in request.get("documents") or []]
    scored = sorted(((relevance(query, d), i) for i, d in enumerate(documents)), key=lambda s: (-s[0], s[1]))
    top_n = request.get("top_n") or len(scored)
    return {
        "id": _uuid(ids),
        "results": [{"index": i, "relevance_score": score} for score, i in scored[:top_n]],
        "meta": {"api_version": {"version": version}, "billed_units": {"search_units": 1}},
    }


def chat_json(turn: ScriptedTurn, request: dict[str, Any], ids: DeterministicIds) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant"}
    if turn.tool_calls:
        message["tool_plan"] = "I will call the tools to answer."
        message["tool_calls"] = [
            {"id": f"{c.name}_{ids.next('c', 12)[2:]}", "type": "function",
             "function": {"name": c.name, "arguments": c.arguments_text()}}
            for c in turn.tool_calls
        ]
    if turn.text is not None:
        message["content"] = [{"type": "text", "text": turn.text}]
    prompt = input_tokens(request, COHERE_CHAT_INPUT)
    completion = estimate_tokens((turn.text or "") + "".join(c.arguments_text() for c in turn.tool_calls))
    return {
        "id": _uuid(ids),
        "message": message,
        "finish_reason": "TOOL_CALL" if turn.tool_calls else "COMPLETE",
        "usage": {"billed_units": {"input_tokens": prompt, "output_tokens": completion},
                  "tokens": {"input_tokens": prompt, "output_tokens": completion}},
    }


def chat(turn: ScriptedTurn | ScriptedError, path: str, request: dict[str, Any], ids: DeterministicIds) -> Answer:
    """The answer to one scripted ``/v2/chat`` call (JSON: the emulator writes no Cohere stream)."""
    headers = request_id(ids)
    if isinstance(turn, ScriptedError):
        return error_answer(turn, headers)
    return json_answer(chat_json(turn, request, ids), headers)


DIALECTS = {"cohere-chat": chat}
