"""This project's pytest processes (``tests/`` and ``evals/``): the cyclic garbage collector stops
re-walking the heap that outlives each test file.

Why: a full collection walks every tracked object, and most of them belong to the libraries the
tests import (openai, chromadb, lancedb, google-genai, torch: 0.5-1 million objects in one
process, about 0.3 s a walk). ``pytest evals/`` spent about 7 of its 31 s in the collector: 22
full collections during the run, pytest's five at the end of the session, and the interpreter's
at exit. An xdist worker of the whole suite spent about 9 s.

What: after the last test of a file, once more than ``FREEZE_ABOVE`` objects are tracked outside
the frozen heap, collect once (garbage is freed, its finalizers run) and move the survivors into
the collector's permanent generation (``gc.freeze``). Objects made later are collected as before.
Frozen objects are still freed by reference counting; only a reference cycle among them is never
collected, which costs what the imported modules they mostly are would cost anyway.

In a pytest-xdist worker, the tests that ``.test_durations`` records as slow (pytest-split's file of
each test's seconds, refreshed with ``--store-durations``; see docs/development.md) are handed out
first, the longest first, and every other test keeps its place. xdist gives each worker the next
test in collection order as it finishes one, so a long test collected last would run alone on one
core after the other worker has nothing left; started first, it overlaps the short ones.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Callable, Sequence, TypeVar

import pytest

# below this many tracked objects, the one collection before freezing costs more than it saves
FREEZE_ABOVE = 50_000

DURATIONS = Path(__file__).resolve().parent / ".test_durations"
# tests recorded as taking at least this many seconds go first; moving every test would split the
# tests of a module apart, and their module-scoped fixtures would be made again for each piece
SLOW = 5.0

T = TypeVar("T")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    result = yield
    # after a file's last test its module- and class-scoped fixtures are gone (after the
    # session's last, everything is): what survives a collection now is meant to stay
    if (nextitem is None or nextitem.path != item.path) and len(gc.get_objects()) > FREEZE_ABOVE:
        gc.collect()
        gc.freeze()
    return result


def slow_first(items: Sequence[T], seconds: Callable[[T], float], slow: float = SLOW) -> list[T]:
    """``items`` with those taking at least ``slow`` seconds first, the longest first; the others
    follow in their order."""
    first = sorted((k for k, item in enumerate(items) if seconds(item) >= slow), key=lambda k: -seconds(items[k]))
    moved = set(first)
    return [items[k] for k in first] + [item for k, item in enumerate(items) if k not in moved]


def recorded_durations(path: Path = DURATIONS) -> dict[str, float]:
    """pytest-split's durations file, or nothing when it is missing or unreadable (the order then
    stays as collected: a stale or broken file only costs time)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    try:
        return {str(nodeid): float(seconds) for nodeid, seconds in data.items()}
    except (AttributeError, TypeError, ValueError):
        return {}


@pytest.hookimpl(trylast=True)  # after every plugin has selected and deselected
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not hasattr(config, "workerinput"):  # only an xdist worker's order decides what runs when
        return
    durations = recorded_durations()
    if not durations:
        return
    items[:] = slow_first(items, lambda item: durations.get(item.nodeid, 0.0))
