"""Every diff the harness shows goes through here, bounded in time and size whatever the values.

Two values are written out as YAML (large ones cut first to what a diff shows: ``abridge.py``) and
compared line by line (``match_lines``): the lines equal at both ends are set aside first, and of
what is left at most ``COMPARED`` lines per side go to difflib (on line numbers, autojunk off: its
heuristic that drops frequent lines gave whole-file replacements, and on repeated lines its
matching grows with the square of the length). A unified diff shows at most ``SHOWN`` lines, each
line at most ``LINE`` characters (a changed line is shown around its first change); what is cut is
counted. A failure's diff (``Failure.diff``) and the report's side-by-side rows read the same
matching.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from rag_core.evals.common.abridge import abridged, common_prefix
from rag_core.evals.common.yaml_dump import TRAILING_MARK, dump_for_diff

COMPARED = 1_000  # lines per side compared, between the lines equal at both ends
SHOWN = 400  # lines of one unified diff (its hunks' lines)
LINE = 1_000  # characters of one line shown (a line a large value's cut left is shorter, marks and indent included)
CONTEXT = 3  # unchanged lines around each change
BEFORE_CHANGE = 100  # characters shown before the first change of a line cut to ``LINE``

Opcode = tuple[str, int, int, int, int]  # difflib's, and "cut": lines of each side not compared


@dataclass(frozen=True)
class Matched:
    """How two sequences of lines match, as difflib's opcodes over them whole; a ``"cut"`` opcode
    covers the lines past ``COMPARED`` on each side, which were not compared."""

    opcodes: list[Opcode]

    @property
    def not_compared(self) -> tuple[int, int]:
        return next(((i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in self.opcodes if tag == "cut"), (0, 0))


def match_lines(before: Sequence[str], after: Sequence[str]) -> Matched:
    """The opcodes of ``before`` against ``after``, within ``COMPARED`` lines per side."""
    n, m = len(before), len(after)
    head = 0
    while head < n and head < m and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < n - head and tail < m - head and before[n - 1 - tail] == after[m - 1 - tail]:
        tail += 1
    a_end, b_end = n - tail, m - tail
    a_stop, b_stop = min(a_end, head + COMPARED), min(b_end, head + COMPARED)
    numbers: dict[str, int] = {}  # each distinct line as a number: difflib hashes ints, not megabytes
    a = [numbers.setdefault(line, len(numbers)) for line in before[head:a_stop]]
    b = [numbers.setdefault(line, len(numbers)) for line in after[head:b_stop]]
    opcodes: list[Opcode] = [("equal", 0, head, 0, head)] if head else []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        opcodes.append((tag, i1 + head, i2 + head, j1 + head, j2 + head))
    if a_stop < a_end or b_stop < b_end:
        opcodes.append(("cut", a_stop, a_end, b_stop, b_end))
    if tail:
        opcodes.append(("equal", a_end, n, b_end, m))
    return Matched(opcodes)


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}{'' if n == 1 else 's'}"


def cut_line(line: str, limit: int = LINE) -> str:
    """A line of at most ``limit`` characters, and how many more it had."""
    return line if len(line) <= limit else line[:limit] + f"⋯ ({_count(len(line) - limit, 'more character')})"


def cut_pair(before: str, after: str, limit: int = LINE) -> tuple[str, str]:
    """Two versions of one line, each cut to ``limit`` characters around where they first differ."""
    if len(before) <= limit and len(after) <= limit:
        return before, after
    start = max(0, common_prefix(before, after) - BEFORE_CHANGE)
    skipped = f"({_count(start, 'equal character')})⋯" if start else ""
    return skipped + cut_line(before[start:], limit), skipped + cut_line(after[start:], limit)


def cut_note(not_compared: tuple[int, int]) -> str:
    """What a ``"cut"`` opcode stands for."""
    return (f"⋯ {_count(not_compared[0], 'more line')} expected and {not_compared[1]:,} observed, past the first "
            f"{COMPARED:,} that differ, not compared")


def unified(label: str, expected: Any, observed: Any) -> str:
    return unified_between(f"{label} (expected)", f"{label} (observed)", expected, observed)


def unified_between(before_label: str, after_label: str, before: Any, after: Any) -> str:
    """A unified line diff of two values as YAML, trailing whitespace made visible, bounded."""
    before, after = abridged(before, after)
    a, b = dump_for_diff(before).splitlines(), dump_for_diff(after).splitlines()
    lines = list(_unified_lines(a, b, match_lines(a, b)))
    if not lines:
        return ""
    diff = f"--- {before_label}\n+++ {after_label}\n" + "".join(lines)
    marks = [f"{mark} a trailing {name}" for mark, name in ((TRAILING_MARK[" "], "space"), (TRAILING_MARK["\t"], "tab"))
             if mark in diff]
    return diff + (f"({', '.join(marks)})\n" if marks else "")


def _hunks(matched: Matched) -> list[list[Opcode]]:
    matcher = difflib.SequenceMatcher(None, (), ())
    matcher.opcodes = matched.opcodes  # grouped as difflib groups them; a "cut" counts as a change
    return list(matcher.get_grouped_opcodes(CONTEXT)) if any(tag != "equal" for tag, *_ in matched.opcodes) else []


def _range(start: int, stop: int) -> str:
    """A hunk's range, as difflib (and diff) write it."""
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start if not length else start + 1},{length}"


def _unified_lines(a: list[str], b: list[str], matched: Matched) -> Iterator[str]:
    hunks = _hunks(matched)
    shown = 0
    for number, hunk in enumerate(hunks):
        out = [f"@@ -{_range(hunk[0][1], hunk[-1][2])} +{_range(hunk[0][3], hunk[-1][4])} @@\n"]
        for tag, i1, i2, j1, j2 in hunk:
            if tag == "equal":
                out += [f" {cut_line(line)}\n" for line in a[i1:i2]]
            elif tag == "cut":
                out.append(cut_note((i2 - i1, j2 - j1)) + "\n")
            else:
                removed, added = [cut_line(line) for line in a[i1:i2]], [cut_line(line) for line in b[j1:j2]]
                for k in range(min(len(removed), len(added))):  # a changed line: shown around its change
                    removed[k], added[k] = cut_pair(a[i1 + k], b[j1 + k])
                out += [f"-{line}\n" for line in removed]
                out += [f"+{line}\n" for line in added]
        if shown + len(out) > SHOWN:
            rest = len(out) - (SHOWN - shown) + sum(_size(h) for h in hunks[number + 1:])
            yield from out[:SHOWN - shown]
            yield f"⋯ {_count(rest, 'more line')} of this diff not shown\n"
            return
        shown += len(out)
        yield from out


def _size(hunk: list[Opcode]) -> int:
    """Lines a hunk shows (its header too)."""
    return 1 + sum(1 if tag == "cut" else (i2 - i1) + (j2 - j1 if tag != "equal" else 0)
                   for tag, i1, i2, j1, j2 in hunk)
