"""The embedding cache's files: a manifest naming chunks, each chunk a keys file and a vectors file.

    meta.json            the manifest: format, embedder identity, dimensions, dtype, count, and
                         the chunks in row order, each {"keys", "vectors", "count"}
    keys-<id>.txt        one hex key per line; line i names row i of the chunk's vectors
    vectors-<id>.npy     float32 (or float16) matrix, one row per key

Why chunks: a cache grows by appending. Rewriting one file per save made recording a corpus
quadratic (every save wrote everything before it), needed all its vectors in memory, and lost
everything to a kill. A save writes only new chunks (and rewrites at most the last one, while it
is short of ``CHUNK_ROWS``), each file under a name derived from its keys, then the manifest,
atomically, last. A kill at any point leaves a manifest naming complete files; the data files no
manifest names are removed by the next save, temporary files by the next ``rag-core cache
record`` (``tidy``).

Caches of format 1 are read as they are: one chunk, named by the manifest's ``files`` or, older,
``keys.txt`` and ``vectors.npy``.

Vectors are read through read-only memory maps (``MappedVectors``): a replay copies the rows it
is asked for, and a cache of a million vectors does not also sit in the process's memory.
"""

from __future__ import annotations

import hashlib
import io
import json
import mmap
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from rag_core._optional import require

FEATURE = "the embedding cache"  # what a missing numpy is named for
from rag_core._files import write_atomic
from rag_core.errors import RagCoreError

FORMAT_VERSION = 2
READABLE_FORMATS = (1, 2)

# rows per chunk: what a kill can lose, what a save may rewrite, and what recording holds at once
# (4,096 × 384 float32 is 6 MB)
CHUNK_ROWS = 4096

MANIFEST = "meta.json"
# what may refuse a manifest before it is written: called with its path and its data
Screen = Callable[[Path, Any], None]
KEY_LENGTH = 32  # hex digits (EmbeddingCache.key)

# the files a cache writes (a temporary file of write_atomic is ".<name>.<random>.tmp")
_OWN_FILE = re.compile(r"^(?:keys(?:-[0-9a-f]+)?\.txt|vectors(?:-[0-9a-f]+)?\.npy)$")
_OWN_TEMPORARY = re.compile(r"^\.(?:keys-[0-9a-f]+\.txt|vectors-[0-9a-f]+\.npy|meta\.json)\..+\.tmp$")


@dataclass(frozen=True)
class Chunk:
    keys: str  # file names, relative to the cache folder
    vectors: str
    count: int

    def as_json(self) -> dict[str, Any]:
        return {"keys": self.keys, "vectors": self.vectors, "count": self.count}


def unreadable(folder: Path, why: object) -> RagCoreError:
    return RagCoreError(f"embedding cache at {folder} is unreadable ({why}); delete it and record again")


def read_manifest(folder: Path) -> tuple[dict[str, Any], list[Chunk]] | None:
    """The manifest and its chunks, or None when the folder holds no cache."""
    path = folder / MANIFEST
    if not path.exists():
        return None
    try:
        meta = json.loads(path.read_text())
        if meta.get("format") not in READABLE_FORMATS:
            raise RagCoreError(f"embedding cache at {folder} has format {meta.get('format')}; this version reads "
                               f"formats {' and '.join(map(str, READABLE_FORMATS))}")
        if meta["format"] == 1:
            files = meta.get("files", {"keys": "keys.txt", "vectors": "vectors.npy"})
            chunks = [Chunk(files["keys"], files["vectors"], int(meta.get("count", -1)))]
        else:
            chunks = [Chunk(c["keys"], c["vectors"], int(c["count"])) for c in meta["chunks"]]
    except RagCoreError:
        raise
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise unreadable(folder, exc) from exc
    return meta, chunks


def read_keys(folder: Path, chunk: Chunk) -> Any:
    """The chunk's keys as a numpy array of 32-byte strings (no Python object per key)."""
    np = require("numpy", extra="agent", feature=FEATURE)

    try:
        raw = (folder / chunk.keys).read_bytes()
    except OSError as exc:
        raise unreadable(folder, exc) from exc
    line = KEY_LENGTH + 1
    if len(raw) % line == 0 and raw[line - 1::line] == b"\n" * (len(raw) // line):
        # every line a key of the usual width: read as fixed-width records, the newlines dropped
        return np.frombuffer(raw, dtype=np.uint8).reshape(-1, line)[:, :KEY_LENGTH].copy().view(f"S{KEY_LENGTH}")[:, 0]
    return np.array(raw.decode("ascii", "replace").split(), dtype=f"S{KEY_LENGTH}")


class MappedVectors:
    """A chunk's vectors, read-only, straight from its ``.npy`` file through a memory map.

    Pages the process touched stay mapped in it (and counted in its RSS) until ``release``, which
    drops them from the process and leaves them in the system's page cache, from where the next
    read takes them again."""

    def __init__(self, path: Path) -> None:
        np = require("numpy", extra="agent", feature=FEATURE)

        with open(path, "rb") as handle:
            version = np.lib.format.read_magic(handle)
            read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                           (2, 0): np.lib.format.read_array_header_2_0}.get(version)
            shape, fortran_order, dtype = read_header(handle) if read_header else ((), True, None)
            offset = handle.tell()
            if fortran_order or dtype.hasobject or len(shape) != 2:
                self._map = None
                self.rows = np.load(path, allow_pickle=False)  # unusual layouts: read whole, as before
                return
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        needed = offset + shape[0] * shape[1] * dtype.itemsize
        if len(self._map) < needed:
            raise ValueError(f"{path.name} is {len(self._map)} bytes, its header describes {needed}")
        self.rows = np.frombuffer(self._map, dtype=dtype, count=shape[0] * shape[1], offset=offset).reshape(shape)

    def release(self) -> None:
        if self._map is not None and hasattr(mmap, "MADV_DONTNEED"):
            self._map.madvise(mmap.MADV_DONTNEED)


def map_vectors(folder: Path, chunk: Chunk) -> MappedVectors:
    try:
        return MappedVectors(folder / chunk.vectors)
    except (OSError, ValueError) as exc:
        raise unreadable(folder, exc) from exc


def write_chunk(folder: Path, keys: list[str], vectors: Any) -> Chunk:
    """Write one chunk's files (vectors first, then keys: a chunk is used only once a manifest names it)."""
    np = require("numpy", extra="agent", feature=FEATURE)

    version = hashlib.sha256("\n".join(keys).encode()).hexdigest()[:12]
    chunk = Chunk(f"keys-{version}.txt", f"vectors-{version}.npy", len(keys))
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(vectors))
    write_atomic(folder / chunk.vectors, buffer.getvalue())
    write_atomic(folder / chunk.keys, "\n".join(keys) + "\n")
    return chunk


def write_manifest(folder: Path, embedder: str, dtype: str, dimensions: int, chunks: list[Chunk],
                   screen: Screen | None = None) -> None:
    """The switch to the new version of the cache: one atomic rename. ``screen(path, data)`` may
    refuse the manifest's data by raising; nothing is written then. (The other files hold the
    cache's own digests and numbers: nothing a caller gives.)"""
    meta = {
        "format": FORMAT_VERSION,
        "embedder": embedder,
        "dimensions": dimensions,
        "dtype": dtype,
        "count": sum(c.count for c in chunks),
        "chunks": [c.as_json() for c in chunks],
    }
    if screen is not None:
        screen(folder / MANIFEST, meta)
    write_atomic(folder / MANIFEST, json.dumps(meta, indent=2) + "\n")


def tidy(folder: Path, chunks: list[Chunk], temporary: bool) -> None:
    """Remove the cache's data files that ``chunks`` do not name (those a later save replaced, or a
    killed save wrote before its manifest) and, with ``temporary``, the temporary files of
    ``write_atomic`` too. A save tidies without ``temporary``: a file another process is writing
    this moment is one of those; ``rag-core cache record`` tidies with it before it starts."""
    named = {name for c in chunks for name in (c.keys, c.vectors)}
    if not folder.is_dir():
        return
    for path in folder.iterdir():
        if (_OWN_FILE.match(path.name) and path.name not in named) or (temporary and _OWN_TEMPORARY.match(path.name)):
            try:
                path.unlink()
            except OSError:
                pass  # in use elsewhere (a platform that keeps mapped files): the next save tries again
