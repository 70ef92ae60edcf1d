"""OpenAIEmbedder: ``POST /v1/embeddings`` through the official SDK (so calls record into cassettes)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rag_core.embedder.base import Embedder, InputType
from rag_core.providers.openai import OpenAIConnection, translate_error


@dataclass(kw_only=True)
class OpenAIEmbedder(Embedder, OpenAIConnection):
    id: str = "text-embedding-3-small"
    dimensions: int | None = None
    batch_size: int = 100

    def _embed_batch(self, texts: list[str], input_type: InputType) -> list[list[float]]:
        kwargs: dict[str, Any] = {"model": self.id, "input": texts}
        if self.dimensions is not None:
            kwargs["dimensions"] = self.dimensions
        try:
            response = self.client().embeddings.create(**kwargs)
        except Exception as exc:
            raise translate_error(exc) from exc
        return [list(item.embedding) for item in sorted(response.data, key=lambda d: d.index)]
