"""OpenAIEmbedder: ``POST /v1/embeddings`` through the official SDK's client (so calls record into
cassettes), with a body it builds itself, as the adapters do: the same bytes on every SDK release."""

from __future__ import annotations

import array
import base64
from dataclasses import dataclass
from typing import Any

from rag_core.embedder.base import Embedder, InputType
from rag_core.providers.openai import OpenAIConnection, translate_error


@dataclass(kw_only=True)
class OpenAIEmbedder(Embedder, OpenAIConnection):
    id: str = "text-embedding-3-small"
    dimensions: int | None = None
    batch_size: int = 100

    def embedding_request(self, texts: list[str]) -> dict[str, Any]:
        """The JSON body: what ``embeddings.create`` sends, in openai 3.x's key order (1.x and 2.x
        write ``input`` first), vectors asked for as base64 as every SDK release asks for them."""
        body: dict[str, Any] = {"model": self.id, "input": texts}
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        body["encoding_format"] = "base64"
        return body

    def _embed_batch(self, texts: list[str], input_type: InputType) -> list[list[float]]:
        try:
            reply = self._send(self.client(), "/embeddings", self.embedding_request(texts))
        except Exception as exc:
            raise translate_error(exc) from exc
        return [vector(item["embedding"]) for item in sorted(reply["data"], key=lambda d: d["index"])]


def vector(embedding: str | list[float]) -> list[float]:
    """One embedding of a reply: base64 of little-endian float32 as asked (decoded as the SDK
    decodes it), or a list of floats from a server that ignores ``encoding_format``."""
    if isinstance(embedding, str):
        return array.array("f", base64.b64decode(embedding)).tolist()
    return [float(x) for x in embedding]
