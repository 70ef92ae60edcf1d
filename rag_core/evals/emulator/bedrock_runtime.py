"""Replies of AWS Bedrock Runtime's operations besides Converse (botocore's ``bedrock-runtime``
service model):

* ``POST /model/{modelId}/invoke`` (``InvokeModel``) to an embedding model: Amazon Titan Text
  Embeddings (v1, v2) and Cohere Embed (v3, v4), each model's own JSON body, with the
  ``X-Amzn-Bedrock-Input-Token-Count`` header the service sends;
* ``POST /model/{modelId}/count-tokens`` (``CountTokens``): ``{"inputTokens": n}``, the input
  tokens Converse reports in its usage for the same ``converse`` input.

An InvokeModel call to any other model (a chat model's own body) is not answered here.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from rag_core.evals.emulator import bedrock
from rag_core.evals.emulator.bedrock import LATENCY_MS, Answer, model_id
from rag_core.evals.emulator.script import DeterministicIds, ScriptedError, estimate_tokens
from rag_core.evals.emulator.tokens import CONVERSE_INPUT, MESSAGES_INPUT, input_tokens
from rag_core.evals.emulator.vectors import embed


def is_count_tokens(path: str) -> bool:
    return "/model/" in path and path.endswith("/count-tokens")


def _request_id(ids: DeterministicIds) -> str:
    """A deterministic id in the UUID form Bedrock's ``x-amzn-RequestId`` has."""
    digits = ids.next("req", 32).removeprefix("req_")
    return "-".join((digits[:8], digits[8:12], digits[12:16], digits[16:20], digits[20:]))


def _invalid(path: str, request: dict[str, Any], message: str, ids: DeterministicIds) -> Answer:
    """A ValidationException, in the shape Converse's errors have."""
    return bedrock.answer(ScriptedError(status=400, message=message, type="ValidationException"), path, request, ids)


def _ok(payload: dict[str, Any], headers: dict[str, str]) -> Answer:
    return 200, "application/json", json.dumps(payload, ensure_ascii=False).encode(), headers


# --- InvokeModel for embedding models -------------------------------------------------------------

def _titan_dimensions(model: str, request: dict[str, Any]) -> int:
    if "embed-text-v1" in model or "embed-g1-text" in model:
        return 1536  # v1 has one size
    return int(request.get("dimensions") or 1024)


def _titan(path: str, model: str, request: dict[str, Any], ids: DeterministicIds) -> Answer:
    text = request.get("inputText")
    if not isinstance(text, str):
        return _invalid(path, request, "Malformed input request: #: required key [inputText] not found", ids)
    vector = embed(text, _titan_dimensions(model, request))
    tokens = estimate_tokens(text)
    payload: dict[str, Any] = {"embedding": vector, "inputTextTokenCount": tokens}
    if "embed-text-v2" in model:
        payload["embeddingsByType"] = {"float": vector}
    return _ok(payload, _invoke_headers(tokens, ids))


def _cohere(path: str, model: str, request: dict[str, Any], ids: DeterministicIds) -> Answer:
    texts = request.get("texts")
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        return _invalid(path, request, "Malformed input request: #: required key [texts] not found", ids)
    dimensions = int(request.get("output_dimension") or (1536 if "embed-v4" in model else 1024))
    vectors = [embed(text, dimensions) for text in texts]
    types = request.get("embedding_types")
    payload: dict[str, Any] = {"id": _request_id(ids), "texts": texts}
    if types:
        payload.update(embeddings={kind: vectors for kind in types if kind == "float"},
                       response_type="embeddings_by_type")
    else:
        payload.update(embeddings=vectors, response_type="embeddings_floats")
    return _ok(payload, _invoke_headers(sum(estimate_tokens(t) for t in texts), ids))


def _invoke_headers(tokens: int, ids: DeterministicIds) -> dict[str, str]:
    return {"x-amzn-RequestId": _request_id(ids), "X-Amzn-Bedrock-Input-Token-Count": str(tokens),
            "X-Amzn-Bedrock-Invocation-Latency": str(LATENCY_MS)}


def _family(path: str) -> str | None:
    """The embedding models' family an InvokeModel path names, or None for any other model."""
    model = model_id(path)
    if "titan-embed-text" in model or "titan-embed-g1-text" in model:
        return "titan"
    if "cohere.embed" in model:
        return "cohere"
    return None


def is_embedding_invoke(path: str) -> bool:
    """Whether ``path`` is an InvokeModel call to an embedding model answered here."""
    return "/model/" in path and path.endswith("/invoke") and _family(path) is not None


def invoke(path: str, request: dict[str, Any], ids: DeterministicIds) -> Answer:
    """The reply to an InvokeModel call to an embedding model (``is_embedding_invoke``)."""
    reply = _titan if _family(path) == "titan" else _cohere
    return reply(path, model_id(path), request, ids)


# --- CountTokens ---------------------------------------------------------------------------------

def count_tokens(path: str, request: dict[str, Any], ids: DeterministicIds) -> Answer:
    """The reply to CountTokens: a ``converse`` input is counted as Converse counts its usage, an
    ``invokeModel`` one (a base64 model body) as the Messages API counts the body it holds."""
    given = request.get("input") if isinstance(request.get("input"), dict) else {}
    if isinstance(given.get("converse"), dict):
        tokens = input_tokens(given["converse"], CONVERSE_INPUT)
    elif isinstance(given.get("invokeModel"), dict):
        try:
            text = base64.b64decode(str(given["invokeModel"].get("body", "")), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return _invalid(path, request, "input.invokeModel.body is not a base64 UTF-8 text", ids)
        try:
            body = json.loads(text)
        except ValueError:
            body = None
        tokens = input_tokens(body, MESSAGES_INPUT) if isinstance(body, dict) else estimate_tokens(text)
    else:
        return _invalid(path, request, "input must hold converse or invokeModel", ids)
    return _ok({"inputTokens": tokens}, {"x-amzn-RequestId": _request_id(ids)})
