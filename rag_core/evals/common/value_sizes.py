"""One value too large for a case, a cassette or a golden: worth a warning when it is recorded.

A golden case replays what it recorded whole on every run, and a document pasted into a prompt is
in every request the case sends: a 50 MB input made a 55 MB cassette and a 102 MB golden, without
a word. Nothing breaks at that size (a failing case's diff is bounded: ``compare.py``), but it is
seldom meant, so a recording says which value it is, where, and how large.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

LARGE = 1024 * 1024  # bytes (UTF-8) of one text value above which a recording warns; docs/cases.md says so
SHOWN = 5  # values named in one warning; the rest are counted


@dataclass(frozen=True)
class LargeValue:
    path: str  # where in the file, e.g. interactions[0].request.body.json.input[1].content
    size: int  # bytes

    def __str__(self) -> str:
        return f"{self.path} ({megabytes(self.size)})"


def megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):,.1f} MB"


def large_values(data: Any, limit: int = LARGE) -> list[LargeValue]:
    """Every text (or bytes) value in ``data`` larger than ``limit`` bytes, with its path, in order."""
    found: list[LargeValue] = []
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            # a character is at most 4 bytes: only a text of more than limit / 4 characters can be over
            if len(value) * 4 > limit and len(value.encode("utf-8", "surrogatepass")) > limit:
                found.append(LargeValue(path or "(the whole file)", len(value.encode("utf-8", "surrogatepass"))))
        elif isinstance(value, bytes):
            if len(value) > limit:
                found.append(LargeValue(path or "(the whole file)", len(value)))
        elif isinstance(value, dict):
            stack.extend((f"{path}.{key}" if path else str(key), item) for key, item in reversed(value.items()))
        elif isinstance(value, (list, tuple)):
            stack.extend((f"{path}[{index}]", item) for index, item in reversed(list(enumerate(value))))
    return found


def warning(file: str, found: list[LargeValue], limit: int = LARGE) -> str:
    """The warning for ``file``'s large values, naming each field and its size."""
    named = "; ".join(map(str, found[:SHOWN])) + (f"; and {len(found) - SHOWN} more" if len(found) > SHOWN else "")
    return (f"{file}: {len(found)} value(s) over {megabytes(limit)}: {named}. Every replay reads them whole; "
            "if the case does not need them this large, make them smaller (docs/cases.md, large values)")
