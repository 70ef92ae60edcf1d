"""How often Python's cyclic garbage collector runs while golden cases replay.

Why: a replayed case makes tens of thousands of short-lived objects (the cassette's and the
golden's YAML, the SDK's request and response models, vcrpy's requests), almost all freed by
reference counting. At the interpreter's default pace (a young collection every 700 new objects)
that is a few young collections per case, and every tenth of those promotes the case's live
objects to be walked again by the older generations; over 1,000 replayed copies the collector took
1.7 s of a 17 s session, and pytest's five full collections at the end of the session walk the
whole heap once more each.

What:
* ``freeze_collected``: once the session's tests are collected (the libraries imported, the case
  files read), what is alive then is moved to the collector's permanent generation: no later
  collection walks it again. Garbage is collected first, so nothing that is garbage then is kept.
  The process freezes once more after its first replayed case, which imports the program's
  libraries (an SDK, the agent): collections after it walk what later cases leave alive. An xdist
  controller, which collects nothing, freezes as its run loop begins: the reports its workers
  send are then all its collections walk, and pytest's five at the end.
* ``fewer_collections``: while one case replays, a young collection comes every
  ``YOUNG_THRESHOLD`` new objects instead of 700. Garbage in reference cycles is freed as before,
  only later (within the case, or just after it); the previous pace is back once the case ends.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

# new objects between young collections while a case replays (the interpreter's default is 700):
# a replay makes many short-lived objects and few cycles, so collecting less often frees the same
# (measurements: docs/scale.md)
YOUNG_THRESHOLD = 10_000


def freeze_collected() -> None:
    """Collect once, then keep what survives out of every later collection (``gc.freeze``)."""
    gc.collect()
    gc.freeze()


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Young collections at most every ``YOUNG_THRESHOLD`` new objects inside the block; a pace
    already slower (or a collector turned off with a threshold of 0) is left as it is."""
    thresholds = gc.get_threshold()
    if 0 < thresholds[0] < YOUNG_THRESHOLD:
        gc.set_threshold(YOUNG_THRESHOLD, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
