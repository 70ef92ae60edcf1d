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
"""

from __future__ import annotations

import gc

import pytest

# below this many tracked objects, the one collection before freezing costs more than it saves
FREEZE_ABOVE = 50_000


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    result = yield
    # after a file's last test its module- and class-scoped fixtures are gone (after the
    # session's last, everything is): what survives a collection now is meant to stay
    if (nextitem is None or nextitem.path != item.path) and len(gc.get_objects()) > FREEZE_ABOVE:
        gc.collect()
        gc.freeze()
    return result
