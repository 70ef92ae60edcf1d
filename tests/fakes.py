"""Deterministic test doubles."""

from __future__ import annotations

import hashlib
import re

from rag_core.embedder.base import Embedder, InputType


class HashEmbedder(Embedder):
    """Bag-of-words vectors from hashed words: similar texts get similar vectors, offline."""

    def __init__(self, dimensions: int = 32) -> None:
        self.id = f"hash-{dimensions}"
        self.dimensions = dimensions
        self.calls: list[tuple[int, InputType]] = []

    def _embed_batch(self, texts: list[str], input_type: InputType) -> list[list[float]]:
        self.calls.append((len(texts), input_type))
        out = []
        for text in texts:
            vector = [0.0] * self.dimensions
            for word in re.findall(r"\w+", text.lower()):
                digest = int(hashlib.sha256(word.encode()).hexdigest(), 16)
                vector[digest % self.dimensions] += 1.0 + (digest >> 64) % 7 / 10
            out.append(vector)
        return out
