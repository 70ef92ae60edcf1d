"""Deterministic stand-ins for embeddings and relevance scores.

Texts that share words get similar vectors (hashed bag of words, unit length), so
retrieval over emulated embeddings behaves plausibly and never changes between runs.
"""

from __future__ import annotations

import hashlib
import math
import re

_WORD = re.compile(r"\w+")


def embed(text: str, dimensions: int) -> list[float]:
    vector = [0.0] * dimensions
    for word in _WORD.findall(text.lower()):
        digest = hashlib.sha256(word.encode("utf-8")).digest()
        index = int.from_bytes(digest[:4], "little") % dimensions
        sign = 1.0 if digest[4] & 1 else -1.0
        vector[index] += sign * (1.0 + digest[5] / 255.0)
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [round(v / norm, 6) for v in vector]


def relevance(query: str, document: str) -> float:
    """Word overlap of query and document, in [0, 1]."""
    wanted = set(_WORD.findall(query.lower()))
    have = set(_WORD.findall(document.lower()))
    return round(len(wanted & have) / len(wanted), 6) if wanted else 0.0
