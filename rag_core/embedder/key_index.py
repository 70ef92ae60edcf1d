"""KeyIndex: which row of an embedding cache holds each key.

Keys are one sorted numpy array of 32-byte strings with their rows (about 40 bytes a key; a
dict of Python strings and ints took about 150), searched a batch at a time. Keys added by this
process (recording) go to a dict first, merged into the arrays every ``MERGE_AT`` keys, so
recording a million texts holds 40 MB of keys, not 150.

One thread records (the cache's write lock) while others may look keys up: a lookup reads the
dict, then the two arrays as one pair, and a merge replaces the pair, then the dict. A lookup
that read the sorted keys before a merge and their rows after it took another key's row, or
missed the keys the merge moved.
"""

from __future__ import annotations

from typing import Any, Sequence

from rag_core._optional import require
from rag_core.embedder.cache_files import KEY_LENGTH

FEATURE = "the embedding cache"  # what a missing numpy is named for

# added keys are merged into the sorted arrays this many at a time
MERGE_AT = 65_536

# up to this many keys are looked up one by one (a query's lookup is one key)
FEW = 4


class KeyIndex:
    def __init__(self, keys: Sequence[Any] = ()) -> None:
        """``keys``: the key arrays of the chunks on disk, in row order."""
        np = require("numpy", extra="agent", feature=FEATURE)

        every = np.concatenate(list(keys)) if len(keys) else np.empty(0, dtype=f"S{KEY_LENGTH}")
        order = np.argsort(every, kind="stable")  # of equal keys (an old cache may repeat one), the first row
        # the keys, sorted, and the row of each: one pair, replaced whole by a merge
        self._arrays: tuple[Any, Any] = (every[order], order.astype(np.int64))
        self._added: dict[str, int] = {}

    def __len__(self) -> int:
        added = self._added  # before the arrays: what a merge moves is in one or the other
        return len(self._arrays[0]) + len(added)

    def rows(self, keys: list[str]) -> Any:
        """The row of each key, -1 where the cache has none (an int64 array)."""
        np = require("numpy", extra="agent", feature=FEATURE)

        added = self._added  # before the arrays (see the module docstring)
        sorted_keys, key_rows = self._arrays
        if len(keys) <= FEW:
            return np.array([self._row(key, added, sorted_keys, key_rows) for key in keys], dtype=np.int64)
        rows = np.full(len(keys), -1, dtype=np.int64)
        if len(sorted_keys) and keys:
            wanted = np.array(keys, dtype=f"S{KEY_LENGTH}")
            at = np.minimum(np.searchsorted(sorted_keys, wanted), len(sorted_keys) - 1)
            found = sorted_keys[at] == wanted
            rows[found] = key_rows[at[found]]
        if added:
            for n, key in enumerate(keys):
                row = added.get(key)
                if row is not None:
                    rows[n] = row
        return rows

    @staticmethod
    def _row(key: str, added: dict[str, int], sorted_keys: Any, key_rows: Any) -> int:
        """One key's row (-1: none), without the array operations a batch is worth (a query's
        lookup took 26 µs through them, 7 before keys were arrays)."""
        row = added.get(key)
        if row is not None:
            return row
        if not len(sorted_keys):
            return -1
        wanted = key.encode("ascii")
        at = int(sorted_keys.searchsorted(wanted))
        return int(key_rows[at]) if at < len(sorted_keys) and sorted_keys[at] == wanted else -1

    def add(self, keys: list[str], first_row: int) -> None:
        """Keys just stored at rows ``first_row``, ``first_row + 1``, ..."""
        self._added.update(zip(keys, range(first_row, first_row + len(keys))))
        if len(self._added) >= MERGE_AT:
            self._merge()

    def _merge(self) -> None:
        """The added keys into the sorted arrays (a key never is in both: only missing keys are added)."""
        np = require("numpy", extra="agent", feature=FEATURE)

        sorted_keys, key_rows = self._arrays
        keys = np.concatenate([sorted_keys, np.array(list(self._added), dtype=f"S{KEY_LENGTH}")])
        rows = np.concatenate([key_rows, np.fromiter(self._added.values(), dtype=np.int64, count=len(self._added))])
        order = np.argsort(keys, kind="stable")
        self._arrays = (keys[order], rows[order])
        self._added = {}  # after the arrays (see the module docstring)
