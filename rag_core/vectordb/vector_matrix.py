"""VectorMatrix: an in-memory store's vectors as float32 matrices of BLOCK_ROWS rows, searched exactly.

Why this shape: a float32 row is what every store keeps (4 bytes a value, against ~32 for a
list of Python floats), the matrices need no rebuild before a search, and the product that
picks candidates runs on one thread (with the numeric library's threads, a query on a busy
machine waited for a core it did not need: 16× slower with the other core busy).

Rows live in blocks of ``BLOCK_ROWS`` (the first one grows by doubling until it is full, the
others are made whole): one matrix doubled whole, and growing from 524,288 to 1,048,576 rows
held both copies at once (2.4 GB for a million 384-d rows); a full block is never copied.

Search is two-stage and exact: a float32 product picks the candidates (every row scoring
within ``CANDIDATE_SLACK`` of the cut-off, so ties and float32 rounding cannot push a true
top-k row out), then the shared float64 cosine (``similarity.py``) ranks them, so the result
is the one every other store returns.
"""

from __future__ import annotations

from typing import Any, Iterable

from rag_core._optional import require
from rag_core.vectordb.fusion import SAMPLE_STRIDE, kth_largest, top_ranked
from rag_core.vectordb.similarity import SIMILARITY_PRECISION, candidate_margin, normalized_rows, unit_vector

FEATURE = "vector search"  # what a missing numpy or threadpoolctl is named for

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
        ThreadpoolController = require("threadpoolctl", extra="agent", feature=FEATURE).ThreadpoolController
        require("numpy", extra="agent", feature=FEATURE)  # its BLAS must be loaded to be found
        _BLAS = [lib for lib in ThreadpoolController().lib_controllers if lib.user_api == "blas"]
    return _BLAS


_BLAS: list[Any] | None = None

# Vectors are converted into the matrix this many at a time. Converting a whole batch at once
# made a transient array as large as the batch (15 MB for 10k × 384), and the C allocator kept
# the memory of such blocks after they were freed (100k documents in batches of 10k: RSS 290 →
# 262 MB with this bound).
CONVERT_ROWS = 1024


# rows per block: what one block's growth may copy (96 MB at 384 dimensions). Smaller blocks
# cost the search (one matrix product per block); this size keeps the cost within noise of a single
# matrix (docs/performance.md), and a corpus the size of SciFact fits one block: a single product
BLOCK_ROWS = 65_536


class VectorMatrix:
    def __init__(self) -> None:
        self._blocks: list[Any] = []  # float32 (capacity, dimensions) each; all full but the last
        self._inverse_norms: Any = None  # float32 per row, the capacity of all: 1/|row| (0 for a zero row)
        self._dimensions: int | None = None
        self.ids: list[str] = []
        self._row_of: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def dimensions(self) -> int | None:
        return self._dimensions

    def put(self, items: Iterable[tuple[str, Any]]) -> None:
        """Store each (id, vector), replacing a vector already stored under that id."""
        items = list(items)
        for start in range(0, len(items), CONVERT_ROWS):
            self._put(items[start:start + CONVERT_ROWS])

    def _put(self, items: list[tuple[str, Any]]) -> None:
        np = require("numpy", extra="agent", feature=FEATURE)

        if not items:
            return
        vectors = np.asarray([v for _, v in items], dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1)
        inverse = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        if self._dimensions is None:
            self._dimensions = vectors.shape[1]
            self._inverse_norms = np.empty(0, dtype=np.float32)
        for (doc_id, _), vector, scale in zip(items, vectors, inverse):
            row = self._row_of.get(doc_id)
            if row is None:
                row = len(self.ids)
                self._grow(row + 1)
                self.ids.append(doc_id)
                self._row_of[doc_id] = row
            self._blocks[row // BLOCK_ROWS][row % BLOCK_ROWS] = vector
            self._inverse_norms[row] = scale

    def _grow(self, needed: int) -> None:
        """Room for ``needed`` rows. The first block doubles up to BLOCK_ROWS (a small store stays
        small; each row is copied O(1) times); a store past it is a large one, and its next blocks
        are made whole: rows not yet written take no memory (the system commits a page of a large
        array when it is first written), and no block is ever copied."""
        np = require("numpy", extra="agent", feature=FEATURE)

        capacity = (len(self._blocks) - 1) * BLOCK_ROWS + len(self._blocks[-1]) if self._blocks else 0
        if needed <= capacity:
            return
        if len(self._blocks) == 1 and len(self._blocks[0]) < BLOCK_ROWS:
            first = self._blocks[0]
            grown = np.empty((min(BLOCK_ROWS, max(needed, 2 * len(first))), self._dimensions), dtype=np.float32)
            grown[: len(first)] = first
            self._blocks[0] = grown
        else:
            rows = BLOCK_ROWS if self._blocks else min(BLOCK_ROWS, max(needed, 64))
            self._blocks.append(np.empty((rows, self._dimensions), dtype=np.float32))
        capacity = (len(self._blocks) - 1) * BLOCK_ROWS + len(self._blocks[-1])
        if len(self._inverse_norms) < capacity:
            inverse_norms = np.empty(max(capacity, 2 * len(self._inverse_norms)), dtype=np.float32)
            inverse_norms[: len(self.ids)] = self._inverse_norms[: len(self.ids)]
            self._inverse_norms = inverse_norms

    def _take(self, rows: Any) -> Any:
        """These rows (a numpy array of row numbers) as one matrix."""
        np = require("numpy", extra="agent", feature=FEATURE)

        if len(self._blocks) == 1:
            return self._blocks[0][rows]
        out = np.empty((len(rows), self._dimensions), dtype=np.float32)
        block_of = rows // BLOCK_ROWS
        for block in np.unique(block_of).tolist():
            chosen = block_of == block
            out[chosen] = self._blocks[block][rows[chosen] - block * BLOCK_ROWS]
        return out

    def remove(self, ids: Iterable[str]) -> None:
        """Forget these ids: the last row moves into each freed slot."""
        for doc_id in ids:
            row = self._row_of.pop(doc_id, None)
            if row is None:
                continue
            last = len(self.ids) - 1
            if row != last:
                moved = self.ids[last]
                self._blocks[row // BLOCK_ROWS][row % BLOCK_ROWS] = self._blocks[last // BLOCK_ROWS][last % BLOCK_ROWS]
                self._inverse_norms[row] = self._inverse_norms[last]
                self.ids[row] = moved
                self._row_of[moved] = row
            self.ids.pop()
            if last % BLOCK_ROWS == 0 and len(self._blocks) > 1:
                self._blocks.pop()  # the last block's only row moved out
        if not self.ids:
            self._blocks, self._inverse_norms, self._dimensions = [], None, None

    def rank(self, query: Any, depth: int, allowed: set[str] | None = None) -> list[tuple[str, float]]:
        """The ``depth`` best rows by the shared cosine, ties by id (see the module docstring)."""
        np = require("numpy", extra="agent", feature=FEATURE)

        count = len(self.ids)
        if count == 0 or depth <= 0:
            return []
        # the query as the shared cosine takes it, made once: its float32 copy picks the
        # candidates, and the float64 one scores them
        unit_query = unit_vector(query)
        q = unit_query.astype(np.float32)
        with one_blas_thread():
            if len(self._blocks) == 1:
                approximate = self._blocks[0][:count] @ q
            else:
                approximate = np.empty(count, dtype=np.float32)
                for number, block in enumerate(self._blocks):
                    start = number * BLOCK_ROWS
                    used = min(len(block), count - start)
                    np.matmul(block[:used], q, out=approximate[start:start + used])
        approximate *= self._inverse_norms[:count]
        if allowed is not None:
            mask = np.fromiter((i in allowed for i in self.ids), dtype=bool, count=count)
            approximate = np.where(mask, approximate, -np.inf)
        candidates = _near_the_cut(approximate, min(count, depth + candidate_margin(depth)))
        if allowed is not None:
            candidates = candidates[np.isfinite(approximate[candidates])]
        scores = normalized_rows(self._take(candidates)) @ unit_query  # cosine_scores, the query made once
        ids = self.ids
        return top_ranked([ids[n] for n in candidates.tolist()], scores, depth, SIMILARITY_PRECISION)


def _near_the_cut(approximate: Any, wanted: int) -> Any:
    """The rows scoring within CANDIDATE_SLACK of the ``wanted``-th best (never below -2: a row
    a filter removed scores -inf), in row order.

    What ``kth_largest`` then a comparison of every score give, read in one pass: the sample's
    bound (``kth_largest``) is never above the cut-off, so the rows within the slack of the
    bound hold those within the slack of the cut-off, and the cut-off is found among them.
    """
    np = require("numpy", extra="agent", feature=FEATURE)

    if len(approximate) >= 4 * SAMPLE_STRIDE * wanted:
        sample = approximate[::SAMPLE_STRIDE]
        bound = np.partition(sample, len(sample) - wanted)[len(sample) - wanted]
        low = bound - CANDIDATE_SLACK
        near = np.flatnonzero(approximate >= low)
        scores = approximate[near]
        if len(scores) >= wanted:
            cut = np.partition(scores, len(scores) - wanted)[len(scores) - wanted]
            threshold = max(cut, -2.0) - CANDIDATE_SLACK
            # below the bound only when NaNs fill the sample's top; below ``low`` only through
            # float32 rounding, for a cut-off under -2: then the rows above ``low`` may not be all
            if cut >= bound and threshold >= low:
                return near[scores >= threshold]
    threshold = max(kth_largest(approximate, wanted), -2.0) - CANDIDATE_SLACK
    return np.flatnonzero(approximate >= threshold)
