"""Replies of ``POST /v1/embeddings``: float lists, or base64 little-endian float32 (the SDK's default)."""

from __future__ import annotations

import base64
import struct
from typing import Any

from rag_core.evals.emulator.script import estimate_tokens
from rag_core.evals.emulator.vectors import embed

DIMENSIONS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}


def embeddings_json(request: dict[str, Any]) -> dict[str, Any]:
    texts = request.get("input")
    texts = [texts] if isinstance(texts, str) else list(texts or [])
    model = request.get("model", "text-embedding-3-small")
    dimensions = int(request.get("dimensions") or DIMENSIONS.get(model, 1536))
    as_base64 = request.get("encoding_format") == "base64"
    data = []
    for index, text in enumerate(texts):
        vector = embed(str(text), dimensions)
        value: Any = base64.b64encode(struct.pack(f"<{dimensions}f", *vector)).decode() if as_base64 else vector
        data.append({"object": "embedding", "index": index, "embedding": value})
    tokens = sum(estimate_tokens(str(t)) for t in texts)
    return {"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}
