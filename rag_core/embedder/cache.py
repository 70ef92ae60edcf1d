"""EmbeddingCache: recorded embeddings, replayed without the provider or the model.

Bulk embeddings (a whole corpus) do not belong in YAML cassettes. The cache is
content-addressed: each vector is stored under a hash of (embedder identity, input type,
text), so it holds vectors and hashes only, never the text. On disk a cache is a folder of
chunks and a manifest (``cache_files.py``): a save appends chunks and then switches the
manifest atomically, so a crash leaves the old version or the new one, and a recording killed
part-way keeps every chunk it finished.

Vectors stay float32 arrays from the files to the caller that wants them so
(``embed_float32``, which the stores use): a store ingesting a corpus from the cache makes no
Python float per value. ``embed`` returns lists of floats, as every embedder does.

Modes: ``record`` embeds what is missing and saves it; ``replay`` never calls the
embedder and fails on a miss; ``auto`` is replay under CI (``CI`` set) and record elsewhere.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Literal, Sequence

from rag_core._optional import require
from rag_core.embedder import cache_files
from rag_core.embedder.base import Embedder, InputType
from rag_core.embedder.cache_files import Chunk
from rag_core.embedder.key_index import KeyIndex
from rag_core.errors import RagCoreError

FEATURE = "the embedding cache"  # what a missing numpy is named for

FORMAT_VERSION = cache_files.FORMAT_VERSION
Mode = Literal["auto", "record", "replay"]

# a lookup reading at least this many rows gives the pages it mapped back afterwards
# (MappedVectors.release); a query's single row stays mapped, ready for the next
RELEASE_AFTER_ROWS = 64

# up to this many rows are read one by one: a query's lookup is one row, and the array
# operations of a batch cost it 15 µs
FEW_ROWS = 4


class EmbeddingCacheMiss(RagCoreError, LookupError):
    """Replay mode met a text whose embedding was never recorded."""

    def __init__(self, message: str, *, path: Path, missing: int, total: int, input_type: str, sample: str) -> None:
        super().__init__(message)
        self.path, self.missing, self.total, self.input_type, self.sample = path, missing, total, input_type, sample


@dataclass(frozen=True, eq=False)
class _Stored:
    """What the cache holds on disk, replaced whole by each save: a reader in another thread sees
    the version before a save or the one after it, never a mix."""

    chunks: tuple[Chunk, ...] = ()
    mapped: tuple[cache_files.MappedVectors, ...] = ()
    starts: Any = ()  # each chunk's first row (an int64 array)
    count: int = 0
    first_rows: tuple[int, ...] = ()  # the same, as Python ints, for one row's bisection

    @classmethod
    def of(cls, chunks: Sequence[Chunk], mapped: Sequence[cache_files.MappedVectors]) -> _Stored:
        np = require("numpy", extra="agent", feature=FEATURE)

        counts = np.array([c.count for c in chunks], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64) if len(counts) else counts
        return cls(tuple(chunks), tuple(mapped), starts, int(counts.sum()), tuple(starts.tolist()))

    @property
    def dimensions(self) -> int | None:
        return int(self.mapped[0].rows.shape[1]) if self.mapped else None


class EmbeddingCache(Embedder):
    def __init__(self, embedder: Embedder, path: str | os.PathLike[str], mode: Mode = "auto", dtype: str = "float32",
                 screen: cache_files.Screen | None = None) -> None:
        """``screen(path, data)``: called with the manifest's data before it is written, to refuse it
        by raising (the evaluation harness passes its credential detector here)."""
        if mode not in ("auto", "record", "replay"):
            raise ValueError(f"EmbeddingCache mode must be auto, record or replay, got {mode!r}")
        self.embedder = embedder
        self.path = Path(path)
        self.mode: Mode = ("replay" if os.environ.get("CI") else "record") if mode == "auto" else mode
        self.dtype = dtype
        self.screen = screen
        self.id = embedder.id
        self.dimensions = embedder.dimensions
        self.batch_size = embedder.batch_size
        self._stored = _Stored()
        self._keys = KeyIndex()
        self._writing = threading.Lock()  # one recording at a time per cache object (threads share one)
        self._load()

    @property
    def cache_key(self) -> str:
        return self.embedder.cache_key

    def key(self, text: str, input_type: InputType) -> str:
        material = f"{self.embedder.cache_key}\x00{input_type}\x00{text}".encode("utf-8")
        return hashlib.sha256(material).hexdigest()[:32]

    def __len__(self) -> int:
        return len(self._keys)

    # --------------------------------------------------------------- storage
    def _load(self) -> None:
        found = cache_files.read_manifest(self.path)
        if found is None:
            return
        meta, chunks = found
        keys, mapped = [], []
        for chunk in chunks:
            chunk_keys = cache_files.read_keys(self.path, chunk)
            vectors = cache_files.map_vectors(self.path, chunk)
            if len(chunk_keys) != len(vectors.rows) or chunk.count != len(chunk_keys):
                raise RagCoreError(
                    f"embedding cache at {self.path} is inconsistent: {len(chunk_keys)} keys, {len(vectors.rows)} "
                    f"vectors, meta says {chunk.count}; delete it and record again"
                )
            keys.append(chunk_keys)
            mapped.append(vectors)
        self._stored = _Stored.of(chunks, mapped)
        self._keys = KeyIndex(keys)
        if mapped:
            self.dtype = str(mapped[-1].rows.dtype)
        elif meta.get("dtype"):
            self.dtype = str(meta["dtype"])

    def _append(self, keys: list[str], vectors: Any) -> None:
        """Store new rows: the last chunk, while short of CHUNK_ROWS, is rewritten with the first of
        them, the rest go to new chunks; then the manifest, then the files it no longer names go."""
        np = require("numpy", extra="agent", feature=FEATURE)

        size = cache_files.CHUNK_ROWS  # read here, not imported: a test may make chunks small
        stored = self._stored
        chunks = list(stored.chunks)
        if chunks and chunks[-1].count < size:
            last = chunks.pop()
            keys = [k.decode("ascii") for k in cache_files.read_keys(self.path, last).tolist()] + keys
            vectors = np.concatenate([stored.mapped[len(chunks)].rows, vectors])
        kept = len(chunks)
        for start in range(0, len(keys), size):
            chunks.append(cache_files.write_chunk(self.path, keys[start:start + size], vectors[start:start + size]))
        cache_files.write_manifest(self.path, self.embedder.cache_key, self.dtype, int(vectors.shape[1]), chunks,
                                   self.screen)
        mapped = [*stored.mapped[:kept], *(cache_files.map_vectors(self.path, c) for c in chunks[kept:])]
        self._stored = _Stored.of(chunks, mapped)
        cache_files.tidy(self.path, chunks, temporary=False)

    def tidy(self) -> None:
        """Remove what a killed recording left: files of the cache that the manifest does not name,
        temporary files included (so no other process may be recording into the folder)."""
        cache_files.tidy(self.path, list(self._stored.chunks), temporary=True)

    # --------------------------------------------------------------- embedding
    def _record(self, texts: list[str], keys: list[str], input_type: InputType, progress: bool) -> None:
        """Embed the texts whose keys the cache lacks, and save them as new rows."""
        np = require("numpy", extra="agent", feature=FEATURE)

        with self._writing:
            rows = self._keys.rows(keys)
            text_of = {k: t for k, t, row in zip(keys, texts, rows.tolist()) if row < 0}  # each missing key once
            if not text_of:
                return  # another thread recorded them meanwhile
            new = list(text_of)
            # an embedder that makes a float32 matrix (LocalEmbedder.embed_array) hands it over as
            # it is, rather than as lists of Python floats converted back here
            as_array = getattr(self.embedder, "embed_array", None)
            embedded = (as_array or self.embedder.embed)(list(text_of.values()), input_type, progress=progress)
            vectors = np.asarray(embedded, dtype=self.dtype)
            expected = self._stored.dimensions
            if vectors.ndim != 2 or len(vectors) != len(new) or (expected is not None and vectors.shape[1] != expected):
                raise RagCoreError(f"embedding cache {self.path}: {self.embedder.cache_key} returned vectors of shape "
                                   f"{vectors.shape} for {len(new)} texts; the cache holds {expected}-dimensional ones")
            first = self._stored.count
            self._append(new, vectors)
            self._keys.add(new, first)  # only once saved: a failed save leaves the index as it was

    def _rows_of(self, texts: Sequence[str], input_type: InputType, progress: bool) -> Any:
        """The row of each text's vector, recording those the cache lacks."""
        keys = [self.key(t, input_type) for t in texts]
        rows = self._keys.rows(keys)
        if _any_missing(rows):
            self._record_missing(texts, keys, rows, input_type, progress)
            rows = self._keys.rows(keys)
        return rows

    def _record_missing(self, texts: Sequence[str], keys: list[str], rows: Any, input_type: InputType,
                        progress: bool) -> None:
        """Record the texts whose row is -1; in replay mode, fail naming the first of them."""
        missing = (rows < 0).nonzero()[0].tolist()
        if self.mode == "replay":
            sample = texts[missing[0]]
            raise EmbeddingCacheMiss(
                f"embedding cache {self.path}: {len(missing)} of {len(texts)} {input_type} text(s) were never "
                f"recorded for {self.embedder.cache_key} (first: {sample[:80]!r}). Record them where the "
                f"embedder is available (EmbeddingCache mode='record'; for a retrieval suite: rag-core cache "
                f"record SUITE) and commit the cache.",
                path=self.path, missing=len(missing), total=len(texts), input_type=input_type, sample=sample,
            )
        self._record([texts[i] for i in missing], [keys[i] for i in missing], input_type, progress)

    def _gather(self, rows: Any) -> Any:
        """The vectors of these rows as one new float32 matrix, read chunk by chunk."""
        np = require("numpy", extra="agent", feature=FEATURE)

        stored = self._stored
        out = np.empty((len(rows), stored.dimensions or 0), dtype=np.float32)
        if len(rows) <= FEW_ROWS:  # a query's row: found by bisection, no array operations
            for n, row in enumerate(rows.tolist()):
                number = bisect.bisect_right(stored.first_rows, row) - 1
                out[n] = stored.mapped[number].rows[row - stored.first_rows[number]]
            return out
        order = np.argsort(rows, kind="stable")  # rows in file order: each chunk's reads go forward
        ordered = rows[order]
        chunk_of = np.searchsorted(stored.starts, ordered, side="right") - 1
        edges = (np.flatnonzero(np.diff(chunk_of)) + 1).tolist()
        for begin, end in zip([0, *edges], [*edges, len(ordered)]):
            number = int(chunk_of[begin])
            mapped = stored.mapped[number]
            out[order[begin:end]] = mapped.rows[ordered[begin:end] - stored.starts[number]]
            if end - begin >= RELEASE_AFTER_ROWS:
                mapped.release()
        return out

    def embed_float32(self, texts: Sequence[str], input_type: InputType = "document", progress: bool = False) -> Any:
        """The texts' embeddings as one float32 matrix, a row per text (recording what is missing)."""
        texts = list(texts)
        return self._gather(self._rows_of(texts, input_type, progress))

    def fill(self, texts: Iterable[str], input_type: InputType = "document", progress: bool = False) -> int:
        """Record what is missing of ``texts`` and read nothing back; returns how many were embedded."""
        texts = list(texts)
        before = len(self._keys)
        keys = [self.key(t, input_type) for t in texts]
        rows = self._keys.rows(keys)
        if _any_missing(rows):
            self._record_missing(texts, keys, rows, input_type, progress)
        return len(self._keys) - before

    def embed(self, texts: Sequence[str], input_type: InputType = "document", progress: bool = False) -> list[list[float]]:
        return self.embed_float32(texts, input_type, progress).tolist()

    def _embed_batch(self, texts: list[str], input_type: InputType) -> list[list[float]]:
        return self.embed(texts, input_type)


def _any_missing(rows: Any) -> bool:
    """Whether a row is -1: a query's one row is checked in Python (numpy's reduction costs more)."""
    if len(rows) <= FEW_ROWS:
        return -1 in rows.tolist()
    return bool((rows < 0).any())
