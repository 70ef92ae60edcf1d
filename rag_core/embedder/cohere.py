"""CohereEmbedder: v2 ``/embed`` through the cohere SDK, with search_document / search_query input types."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rag_core.embedder.base import Embedder, InputType
from rag_core.providers.cohere import cohere_client, translate_cohere_error

INPUT_TYPES = {"document": "search_document", "query": "search_query"}


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
