"""GeminiEmbedder: ``models/{id}:batchEmbedContents`` through the google-genai SDK.

Documents are embedded with task type RETRIEVAL_DOCUMENT and queries with
RETRIEVAL_QUERY; ``dimensions`` asks for a shorter (Matryoshka) vector.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rag_core.embedder.base import Embedder, InputType

TASK_TYPES = {"document": "RETRIEVAL_DOCUMENT", "query": "RETRIEVAL_QUERY"}


@dataclass(kw_only=True)
class GeminiEmbedder(Embedder):
    id: str = "gemini-embedding-001"
    dimensions: int | None = None
    batch_size: int = 100  # the API's limit of texts per batch call
    api_key: str | None = None
    base_url: str | None = None
    _client: Any = field(default=None, init=False, repr=False)

    def _embed_batch(self, texts: list[str], input_type: InputType) -> list[list[float]]:
        from rag_core.providers.gemini import gemini_client, translate_gemini_error

        if self._client is None:
            self._client = gemini_client(self.api_key, self.base_url, "GeminiEmbedder")
        config: dict[str, Any] = {"task_type": TASK_TYPES[input_type]}
        if self.dimensions is not None:
            config["output_dimensionality"] = self.dimensions
        try:
            response = self._client.models.embed_content(model=self.id, contents=texts, config=config)
        except Exception as exc:
            raise translate_gemini_error(exc) from exc
        return [list(e.values) for e in response.embeddings]
