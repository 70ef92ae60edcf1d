"""Golden | observed, line against line: the rows of a side-by-side view of one failure.

The page shows each failing field in two columns with the changed lines marked; long unchanged
stretches fold into one row, so a one-line edit in a long request body stays one screen. A fold
keeps the lines it hides (the same on both sides), so the page opens it in place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from rag_core.evals.common.diff import cut_line, cut_note, cut_pair, match_lines

CONTEXT = 3  # unchanged lines kept around each change

# "=" same line on both sides; "~" a line changed; "-" only in the golden; "+" only observed;
# "…" lines folded (left says what: unchanged ones, whose text ``folded`` keeps, or lines past
# the comparison's bound, which were not compared)
Tag = Literal["=", "~", "-", "+", "…"]


@dataclass(frozen=True)
class Row:
    tag: Tag
    left: str | None
    right: str | None
    folded: tuple[str, ...] = ()  # the unchanged lines a fold hides

    def to_json(self) -> list[Any]:
        return [self.tag, self.left, self.right, *([list(self.folded)] if self.folded else [])]


def shown_text(value: Any) -> str:
    """A value as the side-by-side shows it: text as it is (a value cut to its bound is the head
    of its YAML text already), anything else as the YAML the diff compares."""
    if isinstance(value, str):
        return value
    from rag_core.evals.common.yaml_dump import dump_for_diff

    return dump_for_diff(value)


def rows(golden: str, observed: str, context: int = CONTEXT) -> list[Row]:
    """The rows of two texts, matched as every diff is (``compare.match_lines``: bounded), each
    line cut to ``compare.LINE`` characters (a changed one around its change)."""
    left, right = golden.splitlines(), observed.splitlines()
    out: list[Row] = []
    opcodes = match_lines(left, right).opcodes
    for number, (op, i1, i2, j1, j2) in enumerate(opcodes):
        if op == "equal":
            out += _unchanged(left[i1:i2], right[j1:j2], first=number == 0, last=number == len(opcodes) - 1,
                              context=context)
        elif op == "cut":
            out.append(Row("…", cut_note((i2 - i1, j2 - j1)), None))
        elif op == "delete":
            out += [Row("-", cut_line(line), None) for line in left[i1:i2]]
        elif op == "insert":
            out += [Row("+", None, cut_line(line)) for line in right[j1:j2]]
        else:  # replace: paired line by line, the longer side's rest alone
            a, b = left[i1:i2], right[j1:j2]
            for k in range(max(len(a), len(b))):
                if k < len(a) and k < len(b):
                    out.append(Row("~", *cut_pair(a[k], b[k])))
                elif k < len(a):
                    out.append(Row("-", cut_line(a[k]), None))
                else:
                    out.append(Row("+", None, cut_line(b[k])))
    return out


def _unchanged(a: list[str], b: list[str], first: bool, last: bool, context: int) -> list[Row]:
    """An unchanged stretch: kept whole when short, else its ends next to changes and a fold."""
    head = 0 if first else context
    tail = 0 if last else context
    if len(a) <= head + tail + 1:
        return [Row("=", cut_line(x), cut_line(y)) for x, y in zip(a, b)]
    kept_head = [Row("=", cut_line(x), cut_line(y)) for x, y in zip(a[:head], b[:head])]
    kept_tail = [Row("=", cut_line(x), cut_line(y)) for x, y in zip(a[len(a) - tail:], b[len(b) - tail:])]
    hidden = tuple(cut_line(x) for x in a[head:len(a) - tail])
    label = f"{len(hidden)} unchanged line{'s' if len(hidden) != 1 else ''}"
    return [*kept_head, Row("…", label, None, hidden), *kept_tail]
