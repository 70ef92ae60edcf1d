"""Embedder: turns texts into vectors, in batches, for documents or for queries.

Some providers embed a query differently from a document (Cohere ``input_type``, Gemini
task types), so every call says which one it is.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Iterable, Literal, Sequence

InputType = Literal["document", "query"]


class Embedder(ABC):
    id: str
    dimensions: int | None = None
    batch_size: int = 100

    @abstractmethod
    def _embed_batch(self, texts: list[str], input_type: InputType) -> list[list[float]]:
        """Embed one batch (at most ``batch_size`` texts)."""

    def batch_starts(self, count: int, progress: bool = False) -> Iterable[int]:
        """Where each batch of ``count`` texts starts, behind a progress bar counting batches when asked."""
        batches: Iterable[int] = range(0, count, self.batch_size)
        if progress and count > self.batch_size:
            from rag_core.progress import progress_bar

            batches = progress_bar(batches, desc=f"embedding with {self.id}", unit="batch")
        return batches

    def embed(self, texts: Sequence[str], input_type: InputType = "document", progress: bool = False) -> list[list[float]]:
        texts = list(texts)
        out: list[list[float]] = []
        for start in self.batch_starts(len(texts), progress):
            out.extend(self._embed_batch(texts[start : start + self.batch_size], input_type))
        if len(out) != len(texts):
            raise RuntimeError(f"{self.id}: asked for {len(texts)} embeddings, got {len(out)}")
        return out

    def get_embeddings(self, texts: Sequence[str], input_type: InputType = "document") -> list[list[float]]:
        return self.embed(texts, input_type)

    def get_embedding(self, text: str, input_type: InputType = "query") -> list[float]:
        return self.embed([text], input_type)[0]

    @property
    def cache_key(self) -> str:
        """Identity of the vectors this embedder produces (model and dimensions)."""
        return f"{type(self).__name__}:{self.id}:{self.dimensions or 'default'}"
