"""Cohere (v2 chat, embed and rerank through the cohere SDK): where requests go, which API a
path is, the SDK client of the core's embedder and reranker, and error translation."""

from __future__ import annotations

import os
from typing import Any

from rag_core._optional import require
from rag_core.errors import ModelProviderError
from rag_core.providers.base import Provider, path_of


def route(path: str) -> str | None:
    path = path_of(path)
    if path.endswith("/v2/chat"):
        return "cohere-chat"
    for name in ("embed", "rerank"):
        if path.endswith((f"/v1/{name}", f"/v2/{name}")):
            return f"cohere-{name}"
    return None


COHERE = Provider(
    name="cohere", key_variables=("CO_API_KEY", "COHERE_API_KEY"), endpoint_variables=("CO_API_URL",),
    default_base_url="https://api.cohere.com", route=route, model_apis=("cohere-chat",),
    apis=("cohere-chat", "cohere-embed", "cohere-rerank"),
    sdk_packages=("cohere",), credential_headers=("authorization",),
)


def cohere_client(api_key: str | None, base_url: str | None, http_client: Any, feature: str) -> Any:
    cohere = require("cohere", extra="cohere", feature=feature)
    key = api_key or COHERE.key_from_environment()
    if not key:
        raise ModelProviderError(COHERE.missing_key(), provider="cohere")
    # the SDK reads CO_API_URL once, when it is imported (a default argument): read it now, so
    # the endpoint is the one the environment names when the client is built
    from cohere.environment import ClientEnvironment

    endpoint = base_url or os.environ.get("CO_API_URL") or ClientEnvironment.PRODUCTION.value
    kwargs: dict[str, Any] = {"api_key": key, "base_url": endpoint}
    if http_client is not None:
        kwargs["httpx_client"] = http_client
    return cohere.ClientV2(**kwargs)


def translate_cohere_error(exc: Exception) -> Exception:
    status = getattr(exc, "status_code", None)
    if status is None:
        httpx = require("httpx", extra="cohere", feature="the Cohere clients")  # the cohere SDK's transport

        if isinstance(exc, httpx.TransportError):  # no answer at all: name where it was sent
            return ModelProviderError(f"{type(exc).__name__}: {exc} ({exc.request.url})", provider="cohere")
        return exc
    body = getattr(exc, "body", None)
    message = body.get("message") if isinstance(body, dict) else str(body or exc)
    headers = getattr(exc, "headers", None) or {}
    return ModelProviderError(
        str(message), provider="cohere", status_code=status, request_id=headers.get("x-debug-trace-id"), body=body
    )
