"""Replies of Cohere's v2 API: ``/v2/embed``, ``/v2/rerank`` and ``/v2/chat`` (non-streaming)."""

from __future__ import annotations

import json
from typing import Any

from rag_core.evals.emulator.script import DeterministicIds, ScriptedTurn, estimate_tokens
from rag_core.evals.emulator.vectors import embed, relevance

DIMENSIONS = {"embed-v4.0": 1536, "embed-english-v3.0": 1024, "embed-multilingual-v3.0": 1024}


def _uuid(ids: DeterministicIds) -> str:
    raw = ids.next("x", 32)[2:]
    return f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:32]}"


def embed_json(request: dict[str, Any], ids: DeterministicIds) -> dict[str, Any]:
    texts = list(request.get("texts") or [])
    model = request.get("model", "embed-v4.0")
    dimensions = int(request.get("output_dimension") or DIMENSIONS.get(model, 1024))
    vectors = [embed(t, dimensions) for t in texts]
    types = request.get("embedding_types") or ["float"]
    return {
        "id": _uuid(ids),
        "embeddings": {kind: vectors for kind in types if kind == "float"},
        "texts": texts,
        "meta": {"api_version": {"version": "2"},
                 "billed_units": {"image_tokens": 0, "input_tokens": sum(estimate_tokens(t) for t in texts)}},
        "response_type": "embeddings_by_type",
    }


def rerank_json(request: dict[str, Any], ids: DeterministicIds) -> dict[str, Any]:
    query = request.get("query", "")
    documents = [d if isinstance(d, str) else json.dumps(d) for d in request.get("documents") or []]
    scored = sorted(((relevance(query, d), i) for i, d in enumerate(documents)), key=lambda s: (-s[0], s[1]))
    top_n = request.get("top_n") or len(scored)
    return {
        "id": _uuid(ids),
        "results": [{"index": i, "relevance_score": score} for score, i in scored[:top_n]],
        "meta": {"api_version": {"version": "2"}, "billed_units": {"search_units": 1}},
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
    prompt = estimate_tokens(json.dumps(request, sort_keys=True))
    completion = estimate_tokens((turn.text or "") + "".join(c.arguments_text() for c in turn.tool_calls))
    return {
        "id": _uuid(ids),
        "message": message,
        "finish_reason": "TOOL_CALL" if turn.tool_calls else "COMPLETE",
        "usage": {"billed_units": {"input_tokens": prompt, "output_tokens": completion},
                  "tokens": {"input_tokens": prompt, "output_tokens": completion}},
    }
