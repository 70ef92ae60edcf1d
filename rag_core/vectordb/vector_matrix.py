"""VectorMatrix: an in-memory store's vectors as one contiguous float32 matrix, searched exactly.

Why this shape: a float32 row is what every store keeps (4 bytes a value, against ~32 for a
list of Python floats), one matrix needs no rebuild before a search, and the product that
picks candidates runs on one thread (with the numeric library's threads, a query on a busy
machine waited for a core it did not need: 16× slower with the other core busy).

Search is two-stage and exact: a float32 product picks the candidates (every row scoring
within ``CANDIDATE_SLACK`` of the cut-off, so ties and float32 rounding cannot push a true
top-k row out), then the shared float64 cosine (``similarity.py``) ranks them, so the result
is the one every other store returns.
"""

from __future__ import annotations

from typing import Any, Iterable

from rag_core.vectordb.fusion import kth_largest, top_ranked
from rag_core.vectordb.similarity import SIMILARITY_PRECISION, candidate_margin, normalized_rows, unit_vector

# float32 cosine of unit vectors is within ~1e-5 of float64 for any realistic dimension
# (n·2⁻²⁴ for n ≤ 4096 is 2.4e-4 at worst, ~1e-6 in practice): rows this close to the
# cut-off are rescored too
CANDIDATE_SLACK = 3e-4


class one_blas_thread:  # lower case, as contextlib.nullcontext: used as ``with one_blas_thread():``
    """A context in which BLAS calls use one thread, restoring each library's count on exit.

    What ``threadpoolctl.ThreadpoolController.limit`` does, through the controllers of the
    loaded BLAS libraries, found once (the costly part). Entering and leaving an empty one took
    7.5 µs against 2.5; around a 5,183 × 384 product, 175 µs against 155.
    """

    __slots__ = ("_before",)

    def __enter__(self) -> None:
        libraries = _blas_libraries()
        self._before = [lib.get_num_threads() for lib in libraries]
        for lib in libraries:
            lib.set_num_threads(1)

    def __exit__(self, *exc: object) -> None:
        for lib, threads in zip(_blas_libraries(), self._before):
            lib.set_num_threads(threads)


def _blas_libraries() -> list[Any]:
    """threadpoolctl's controllers of the BLAS libraries loaded (numpy's, once numpy is imported)."""
    global _BLAS
    if _BLAS is None:
        import importlib

        from threadpoolctl import ThreadpoolController

        importlib.import_module("numpy")  # its BLAS must be loaded to be found
        _BLAS = [lib for lib in ThreadpoolController().lib_controllers if lib.user_api == "blas"]
    return _BLAS


_BLAS: list[Any] | None = None

# Vectors are converted into the matrix this many at a time. Converting a whole batch at once
# made a transient array as large as the batch (15 MB for 10k × 384), and the C allocator kept
# the memory of such blocks after they were freed (100k documents in batches of 10k: RSS 290 →
# 262 MB with this bound).
CONVERT_ROWS = 1024


class VectorMatrix:
    def __init__(self) -> None:
        self._rows: Any = None  # float32 (capacity, dimensions); the first len(ids) rows are used
        self._inverse_norms: Any = None  # float32 per row, same capacity: 1/|row| (0 for a zero row)
        self.ids: list[str] = []
        self._row_of: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def dimensions(self) -> int | None:
        return None if self._rows is None else self._rows.shape[1]

    def put(self, items: Iterable[tuple[str, Any]]) -> None:
        """Store each (id, vector), replacing a vector already stored under that id."""
        items = list(items)
        for start in range(0, len(items), CONVERT_ROWS):
            self._put(items[start:start + CONVERT_ROWS])

    def _put(self, items: list[tuple[str, Any]]) -> None:
        import numpy as np

        if not items:
            return
        vectors = np.asarray([v for _, v in items], dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1)
        inverse = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        if self._rows is None:
            self._rows = np.empty((0, vectors.shape[1]), dtype=np.float32)
            self._inverse_norms = np.empty(0, dtype=np.float32)
        for (doc_id, _), vector, scale in zip(items, vectors, inverse):
            row = self._row_of.get(doc_id)
            if row is None:
                row = len(self.ids)
                self._grow(row + 1)
                self.ids.append(doc_id)
                self._row_of[doc_id] = row
            self._rows[row] = vector
            self._inverse_norms[row] = scale

    def _grow(self, needed: int) -> None:
        import numpy as np

        if needed <= self._rows.shape[0]:
            return
        capacity = max(needed, 2 * self._rows.shape[0], 64)  # amortised: each row is copied O(1) times
        rows = np.empty((capacity, self._rows.shape[1]), dtype=np.float32)
        rows[: len(self.ids)] = self._rows[: len(self.ids)]
        inverse_norms = np.empty(capacity, dtype=np.float32)
        inverse_norms[: len(self.ids)] = self._inverse_norms[: len(self.ids)]
        self._rows, self._inverse_norms = rows, inverse_norms

    def remove(self, ids: Iterable[str]) -> None:
        """Forget these ids: the last row moves into each freed slot."""
        for doc_id in ids:
            row = self._row_of.pop(doc_id, None)
            if row is None:
                continue
            last = len(self.ids) - 1
            if row != last:
                moved = self.ids[last]
                self._rows[row] = self._rows[last]
                self._inverse_norms[row] = self._inverse_norms[last]
                self.ids[row] = moved
                self._row_of[moved] = row
            self.ids.pop()
        if not self.ids:
            self._rows = self._inverse_norms = None

    def rank(self, query: Any, depth: int, allowed: set[str] | None = None) -> list[tuple[str, float]]:
        """The ``depth`` best rows by the shared cosine, ties by id (see the module docstring)."""
        import numpy as np

        count = len(self.ids)
        if count == 0 or depth <= 0:
            return []
        # the query as the shared cosine takes it, made once: its float32 copy picks the
        # candidates, and the float64 one scores them
        unit_query = unit_vector(query)
        q = unit_query.astype(np.float32)
        with one_blas_thread():
            approximate = (self._rows[:count] @ q) * self._inverse_norms[:count]
        if allowed is not None:
            mask = np.fromiter((i in allowed for i in self.ids), dtype=bool, count=count)
            approximate = np.where(mask, approximate, -np.inf)
        wanted = min(count, depth + candidate_margin(depth))
        cut = kth_largest(approximate, wanted)
        candidates = np.flatnonzero(approximate >= max(cut, -2.0) - CANDIDATE_SLACK)
        if allowed is not None:
            candidates = candidates[np.isfinite(approximate[candidates])]
        scores = normalized_rows(self._rows[candidates]) @ unit_query  # cosine_scores, the query made once
        ids = self.ids
        return top_ranked([ids[n] for n in candidates.tolist()], scores, depth, SIMILARITY_PRECISION)
