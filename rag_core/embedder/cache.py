"""EmbeddingCache: recorded embeddings, replayed without the provider or the model.

Bulk embeddings (a whole corpus) do not belong in YAML cassettes. The cache is
content-addressed: each vector is stored under a hash of (embedder identity, input type,
text), so it holds vectors and hashes only, never the text. On disk a cache is a folder:

    meta.json            the manifest: format version, embedder identity, dimensions, dtype,
                         count, and the names of the two data files below
    keys-<id>.txt        one hex key per line; line i names row i of the vectors
    vectors-<id>.npy     float32 (or float16) matrix, one row per key

A save writes new data files under new names, then the manifest (atomically, last), then
removes the data files no manifest names. A crash at any point leaves a manifest that names
complete files: the old version or the new one. (Caches written before manifests named their
files use ``keys.txt`` and ``vectors.npy``; they are read as they are.)

Modes: ``record`` embeds what is missing and saves it; ``replay`` never calls the
embedder and fails on a miss; ``auto`` is replay under CI (``CI`` set) and record elsewhere.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any, Literal, Sequence

from rag_core._files import write_atomic
from rag_core.embedder.base import Embedder, InputType
from rag_core.errors import RagCoreError

FORMAT_VERSION = 1
Mode = Literal["auto", "record", "replay"]


class EmbeddingCacheMiss(RagCoreError, LookupError):
    """Replay mode met a text whose embedding was never recorded."""

    def __init__(self, message: str, *, path: Path, missing: int, total: int, input_type: str, sample: str) -> None:
        super().__init__(message)
        self.path, self.missing, self.total, self.input_type, self.sample = path, missing, total, input_type, sample


class EmbeddingCache(Embedder):
    def __init__(self, embedder: Embedder, path: str | os.PathLike[str], mode: Mode = "auto", dtype: str = "float32") -> None:
        if mode not in ("auto", "record", "replay"):
            raise ValueError(f"EmbeddingCache mode must be auto, record or replay, got {mode!r}")
        self.embedder = embedder
        self.path = Path(path)
        self.mode: Mode = ("replay" if os.environ.get("CI") else "record") if mode == "auto" else mode
        self.dtype = dtype
        self.id = embedder.id
        self.dimensions = embedder.dimensions
        self.batch_size = embedder.batch_size
        self._rows: dict[str, int] = {}
        self._vectors: Any = None
        self._pending: dict[str, list[float]] = {}
        self._load()

    @property
    def cache_key(self) -> str:
        return self.embedder.cache_key

    def key(self, text: str, input_type: InputType) -> str:
        material = f"{self.embedder.cache_key}\x00{input_type}\x00{text}".encode("utf-8")
        return hashlib.sha256(material).hexdigest()[:32]

    def __len__(self) -> int:
        return len(self._rows) + len(self._pending)

    # --------------------------------------------------------------- storage
    def _load(self) -> None:
        meta_path = self.path / "meta.json"
        if not meta_path.exists():
            return
        import numpy as np

        try:
            meta = json.loads(meta_path.read_text())
            files = meta.get("files", {"keys": "keys.txt", "vectors": "vectors.npy"})
            keys = (self.path / files["keys"]).read_text().split()
            vectors = np.load(self.path / files["vectors"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise RagCoreError(f"embedding cache at {self.path} is unreadable ({exc}); delete it and record again") from exc
        if meta.get("format") != FORMAT_VERSION:
            raise RagCoreError(f"embedding cache at {self.path} has format {meta.get('format')}, expected {FORMAT_VERSION}")
        if len(keys) != len(vectors) or meta.get("count") != len(keys):
            raise RagCoreError(
                f"embedding cache at {self.path} is inconsistent: {len(keys)} keys, {len(vectors)} vectors, "
                f"meta says {meta.get('count')}; delete it and record again"
            )
        self._rows = {k: i for i, k in enumerate(keys)}
        self._vectors = vectors
        self.dtype = str(vectors.dtype)

    def save(self) -> None:
        """Write pending vectors to disk atomically (a crash never leaves a half-written cache)."""
        if not self._pending:
            return
        import numpy as np

        keys = sorted(self._rows, key=self._rows.__getitem__) + list(self._pending)
        new = np.asarray(list(self._pending.values()), dtype=self.dtype)
        vectors = new if self._vectors is None else np.concatenate([self._vectors, new.astype(self._vectors.dtype)])
        version = hashlib.sha256("\n".join(keys).encode()).hexdigest()[:12]
        files = {"keys": f"keys-{version}.txt", "vectors": f"vectors-{version}.npy"}
        meta = {
            "format": FORMAT_VERSION,
            "embedder": self.embedder.cache_key,
            "dimensions": int(vectors.shape[1]),
            "dtype": str(vectors.dtype),
            "count": len(keys),
            "files": files,
        }
        buffer = io.BytesIO()
        np.save(buffer, vectors)
        write_atomic(self.path / files["vectors"], buffer.getvalue())
        write_atomic(self.path / files["keys"], "\n".join(keys) + "\n")
        write_atomic(self.path / "meta.json", json.dumps(meta, indent=2) + "\n")  # the switch to the new version
        for stale in [*self.path.glob("keys*.txt"), *self.path.glob("vectors*.npy")]:
            if stale.name not in files.values():
                stale.unlink(missing_ok=True)
        self._rows = {k: i for i, k in enumerate(keys)}
        self._vectors = vectors
        self._pending = {}

    # --------------------------------------------------------------- embedding
    def _lookup(self, key: str) -> list[float] | None:
        if key in self._pending:
            return self._pending[key]
        row = self._rows.get(key)
        return None if row is None else self._vectors[row].astype("float32").tolist()

    def embed(self, texts: Sequence[str], input_type: InputType = "document", progress: bool = False) -> list[list[float]]:
        keys = [self.key(t, input_type) for t in texts]
        found = [self._lookup(k) for k in keys]
        missing = [i for i, v in enumerate(found) if v is None]
        if missing:
            if self.mode == "replay":
                sample = texts[missing[0]]
                raise EmbeddingCacheMiss(
                    f"embedding cache {self.path}: {len(missing)} of {len(texts)} {input_type} text(s) were never "
                    f"recorded for {self.embedder.cache_key} (first: {sample[:80]!r}). Record them where the "
                    f"embedder is available (EmbeddingCache mode='record'; for a retrieval suite: rag-core cache "
                    f"record SUITE) and commit the cache.",
                    path=self.path, missing=len(missing), total=len(texts), input_type=input_type, sample=sample,
                )
            unique = list(dict.fromkeys(keys[i] for i in missing))
            text_of = {keys[i]: texts[i] for i in missing}
            vectors = self.embedder.embed([text_of[k] for k in unique], input_type, progress=progress)
            for key, vector in zip(unique, vectors):
                self._pending[key] = list(vector)
            self.save()
            found = [self._lookup(k) for k in keys]
        return found  # type: ignore[return-value]

    def _embed_batch(self, texts: list[str], input_type: InputType) -> list[list[float]]:
        return self.embed(texts, input_type)
