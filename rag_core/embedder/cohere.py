"""CohereEmbedder: v2 ``/embed`` through the cohere SDK, with search_document / search_query input types."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from rag_core._optional import require
from rag_core.embedder.base import Embedder, InputType
from rag_core.errors import ModelProviderError

INPUT_TYPES = {"document": "search_document", "query": "search_query"}


def cohere_client(api_key: str | None, base_url: str | None, http_client: Any, feature: str) -> Any:
    cohere = require("cohere", extra="cohere", feature=feature)
    key = api_key or os.environ.get("CO_API_KEY") or os.environ.get("COHERE_API_KEY")
    if not key:
        raise ModelProviderError("no API key: pass api_key=... or set CO_API_KEY", provider="cohere")
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
        import httpx  # the cohere SDK's transport

        if isinstance(exc, httpx.TransportError):  # no answer at all: name where it was sent
            return ModelProviderError(f"{type(exc).__name__}: {exc} ({exc.request.url})", provider="cohere")
        return exc
    body = getattr(exc, "body", None)
    message = body.get("message") if isinstance(body, dict) else str(body or exc)
    headers = getattr(exc, "headers", None) or {}
    return ModelProviderError(
        str(message), provider="cohere", status_code=status, request_id=headers.get("x-debug-trace-id"), body=body
    )


@dataclass(kw_only=True)
class CohereEmbedder(Embedder):
    id: str = "embed-v4.0"
    dimensions: int | None = None
    batch_size: int = 96  # the API's limit of texts per call
    api_key: str | None = None
    base_url: str | None = None
    http_client: Any = None
    _client: Any = field(default=None, init=False, repr=False)

    def _embed_batch(self, texts: list[str], input_type: InputType) -> list[list[float]]:
        if self._client is None:
            self._client = cohere_client(self.api_key, self.base_url, self.http_client, "CohereEmbedder")
        kwargs: dict[str, Any] = {
            "model": self.id,
            "texts": texts,
            "input_type": INPUT_TYPES[input_type],
            "embedding_types": ["float"],
        }
        if self.dimensions is not None:
            kwargs["output_dimension"] = self.dimensions
        try:
            response = self._client.embed(**kwargs)
        except Exception as exc:
            raise translate_cohere_error(exc) from exc
        return [list(v) for v in response.embeddings.float_]
