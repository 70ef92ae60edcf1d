"""Google's Gemini Developer API (google-genai): where requests go, which API a path is, the
shared SDK client of the core's model and embedder, and error translation."""

from __future__ import annotations

import os
from typing import Any

from rag_core._optional import require
from rag_core.errors import ModelProviderError
from rag_core.providers.base import Provider, path_of


def route(path: str) -> str | None:
    path = path_of(path)
    if ":streamGenerateContent" in path:
        return "gemini-stream"
    if ":generateContent" in path:
        return "gemini"
    if path.endswith((":batchEmbedContents", ":embedContent")):
        return "gemini-embeddings"
    return None


GEMINI = Provider(
    # google-genai and pydantic-ai both prefer GOOGLE_API_KEY when both are set
    name="gemini", key_variables=("GOOGLE_API_KEY", "GEMINI_API_KEY"), endpoint_variables=("GOOGLE_GEMINI_BASE_URL",),
    default_base_url="https://generativelanguage.googleapis.com", route=route,
    model_apis=("gemini", "gemini-stream"),
    apis=("gemini", "gemini-stream", "gemini-embeddings"), sdk_packages=("google-genai",),
    credential_headers=("x-goog-api-key",),
    adapters={"gemini": "rag_core.models.gemini:Gemini"},
)


def gemini_client(api_key: str | None, base_url: str | None, feature: str, *, timeout: float | None = None) -> Any:
    """A google-genai client for the Gemini Developer API (v1beta), shared by model and embedder.

    Clients are cached per key, endpoint and timeout: building one costs ~60 ms (TLS and auth
    set-up), and models are cheap to create (tests build one per case)."""
    genai = require("google.genai", extra="gemini", feature=feature, package="google-genai")
    key = api_key or GEMINI.key_from_environment()
    if not key:
        raise ModelProviderError(GEMINI.missing_key(), provider="gemini")
    # the SDK reads its endpoint variable when a client is built, so it is part of the identity
    endpoint = base_url or os.environ.get("GOOGLE_GEMINI_BASE_URL")
    identity = (id(genai), key, endpoint, timeout)
    client = _CLIENTS.get(identity)
    if client is None:
        options: dict[str, Any] = {"api_version": "v1beta"}
        if base_url:
            options["base_url"] = base_url
        if timeout is not None:
            options["timeout"] = int(timeout * 1000)  # HttpOptions counts milliseconds
        client = _CLIENTS[identity] = genai.Client(api_key=key, http_options=genai.types.HttpOptions(**options))
    return client


_CLIENTS: dict[tuple[Any, ...], Any] = {}


def translate_gemini_error(exc: Exception) -> Exception:
    try:
        from google.genai import errors
    except ImportError:
        return exc
    if isinstance(exc, errors.APIError):
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None) or {}
        return ModelProviderError(
            str(exc.message or exc), provider="gemini", status_code=exc.code,
            request_id=headers.get("x-request-id") if hasattr(headers, "get") else None, body=exc.details,
        )
    return exc


