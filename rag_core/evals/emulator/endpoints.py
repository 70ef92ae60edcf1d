"""The requests the emulator answers that are not model calls: embeddings and reranking, and what
SDKs and frameworks call around a model call. Each answer is a pure function of the request (and
the case's deterministic ids) and uses up no scripted turn:

* embeddings: OpenAI ``/v1/embeddings``, Cohere ``/v1|v2/embed``, Gemini ``:embedContent`` and
  ``:batchEmbedContents``, Bedrock ``InvokeModel`` to an embedding model; Cohere ``/v1|v2/rerank``;
* token counting: OpenAI ``POST /v1/responses/input_tokens``, Anthropic
  ``POST /v1/messages/count_tokens``, Gemini ``:countTokens``, Bedrock ``CountTokens``: the count
  the model call's usage reports for the same input (``tokens.py``);
* model listing and retrieval: ``GET /v1/models[/{id}]`` (OpenAI, Anthropic) and
  ``GET /v1beta/models[/{name}]`` (Gemini).

OpenAI and Anthropic list models at the same path: a request is Anthropic's when it carries the
``anthropic-version`` header, which that API requires of every request, and Gemini's when it
carries Google's API-key or client header (Gemini's ``v1`` paths are OpenAI's too).
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Mapping

from rag_core.evals.emulator import (anthropic, bedrock_runtime, cohere, gemini, model_listing, openai_embeddings,
                                     openai_responses)
from rag_core.evals.emulator.bedrock import Answer
from rag_core.evals.emulator.script import DeterministicIds
from rag_core.providers import api_of

# what answers one endpoint: (path, request, request headers, ids) -> the reply
Handler = Callable[[str, dict[str, Any], Mapping[str, str], DeterministicIds], Answer]

_GEMINI_VERSIONS = re.compile(r"/v1(beta|alpha)\d*/")
_GOOGLE_HEADERS = {"x-goog-api-key", "x-goog-api-client"}


def _reply(payload: dict[str, Any], headers: dict[str, str]) -> Answer:
    return 200, "application/json", json.dumps(payload, ensure_ascii=False).encode(), headers


def _openai_style(payload: Callable[[dict[str, Any], DeterministicIds], dict[str, Any]]) -> Handler:
    """A JSON answer with an ``x-request-id`` (what the emulator gives every provider that has none of its own)."""
    return lambda path, request, headers, ids: _reply(payload(request, ids), {"x-request-id": ids.next("req", 32)})


def _vendor(path: str, headers: Mapping[str, str]) -> str:
    names = {name.lower() for name in headers}
    if "anthropic-version" in names:
        return "anthropic"
    if names & _GOOGLE_HEADERS or _GEMINI_VERSIONS.search(path + "/"):
        return "gemini"
    return "openai"


def _models(path: str, request: dict[str, Any], headers: Mapping[str, str], ids: DeterministicIds) -> Answer:
    """``GET …/models`` or ``GET …/models/{id}``, in the shape of the API that was asked."""
    model = path.partition("/models/")[2]
    vendor = _vendor(path, headers)
    if vendor == "anthropic":
        payload = model_listing.anthropic_model(model) if model else model_listing.anthropic_models()
        return _reply(payload, {"request-id": ids.next("req", 32)})
    if vendor == "gemini":
        return _reply(model_listing.gemini_model(model) if model else model_listing.gemini_models(), {})
    return _reply(model_listing.openai_model(model) if model else model_listing.openai_models(),
                  {"x-request-id": ids.next("req", 32)})


def _cohere(version: str, payload: Callable[..., dict[str, Any]]) -> Handler:
    return _openai_style(lambda request, ids: payload(request, ids, version))


def _cohere_version(path: str) -> str:
    return "1" if "/v1/" in path else "2"


def _gemini_embeddings(path: str) -> Handler:
    embed = gemini.batch_embed_json if path.endswith(":batchEmbedContents") else gemini.embed_json
    return _openai_style(lambda request, ids: embed(request))


# the answer to each API's non-model requests, by API name
_BY_API: dict[str, Callable[[str], Handler]] = {
    "openai-embeddings": lambda path: _openai_style(lambda request, ids: openai_embeddings.embeddings_json(request)),
    "cohere-embed": lambda path: _cohere(_cohere_version(path), cohere.embed_json),
    "cohere-rerank": lambda path: _cohere(_cohere_version(path), cohere.rerank_json),
    "gemini-embeddings": _gemini_embeddings,
}


def _route(method: str, path: str) -> Handler | None:
    if method == "GET":
        return _models if path.endswith("/models") or "/models/" in path else None
    if method != "POST":
        return None
    api = api_of(method, path)
    if api in _BY_API:  # the APIs a provider routes (rag_core.providers.api_of)
        return _BY_API[api](path)
    if path.endswith(":countTokens"):
        return _openai_style(lambda request, ids: gemini.count_tokens_json(request))
    if path.endswith("/responses/input_tokens"):
        return _openai_style(lambda request, ids: openai_responses.input_tokens_json(request))
    if path.endswith("/messages/count_tokens"):
        return lambda path, request, headers, ids: _reply(anthropic.count_tokens_json(request),
                                                          {"request-id": ids.next("req", 32)})
    if bedrock_runtime.is_count_tokens(path):
        return lambda path, request, headers, ids: bedrock_runtime.count_tokens(path, request, ids)
    if bedrock_runtime.is_embedding_invoke(path):
        return lambda path, request, headers, ids: bedrock_runtime.invoke(path, request, ids)
    return None


def serves(method: str, path: str) -> bool:
    """Whether ``method`` and ``path`` are one of these endpoints."""
    return _route(method.upper(), path) is not None


def answer(method: str, path: str, request: dict[str, Any], headers: Mapping[str, str],
           ids: DeterministicIds) -> Answer | None:
    """The reply to one of these endpoints, or None when ``method`` and ``path`` are none of them."""
    handler = _route(method.upper(), path)
    return handler(path, request, headers, ids) if handler is not None else None
