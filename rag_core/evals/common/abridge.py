"""Two values too large to write out whole for a diff, cut to what a diff of them shows.

A golden field can hold megabytes: a document pasted into a prompt is in every request the case
sends. Writing such a value out as YAML (a second per megabyte) several times per failure, then
diffing it line by line, made a one-line prompt edit in a 50 MB case take longer than a CI job.
So before a diff, two large values are walked side by side and what no diff would show is replaced
by a mark that says how much it stands for:

* a text's stretches that are equal on both sides, away from its changes (``KEEP`` lines of
  context stay, as in the diff);
* in a list or mapping, the runs of equal items away from the changes, and the items past the
  first ``ITEMS`` that differ;
* a value that is equal on both sides and large;
* whatever comes after ``BUDGET`` characters have been kept.

Everything here reads each value once (equal parts are compared by ``==``, in C); what it keeps
is bounded by ``BUDGET`` whatever the sizes. Values of ``WHOLE`` characters or less in all are
left as they are: an everyday diff is exactly what it was.
"""

from __future__ import annotations

from typing import Any

WHOLE = 256 * 1024  # characters (text, keys, one per scalar) of both values below which nothing is cut
BUDGET = 256 * 1024  # characters kept in all from two values that are cut
TEXT = 16 * 1024  # characters kept of one text's changed stretch
LINE = 400  # characters kept of one line (a diff shows lines whole up to ``compare.LINE``, above this and its mark)
WINDOW = 100  # characters kept before a change that lies deep inside a long line
EQUAL_WHOLE = 4 * 1024  # characters of a value equal on both sides kept whole (beyond: a mark)
KEEP = 2  # lines, or items, kept next to a change: with the mark that counts the rest, the diff's 3 of context
ITEMS = 200  # items of a list or mapping that differ, compared one by one; then the rest is cut
_CHUNK = 64 * 1024  # characters compared at a time in finding where two texts part
_MISSING: Any = object()


def weight(value: Any, cap: int) -> int:
    """Characters of ``value``'s text, keys and scalars (one each), counted up to just past ``cap``."""
    total, stack = 0, [value]
    while stack and total <= cap:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            total += 1 + sum(len(str(key)) for key in item)
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            total += 1
            stack.extend(item)
        else:
            total += 1
    return total


def abridged(before: Any, after: Any) -> tuple[Any, Any]:
    """``before`` and ``after`` as a diff should write them out: whole when small, else cut."""
    if weight(before, WHOLE) + weight(after, WHOLE) <= WHOLE:
        return before, after
    return _Cutter().pair(before, after, 0)


def alone(value: Any) -> Any:
    """One value cut as ``abridged`` cuts a value that has nothing to be compared with."""
    if weight(value, WHOLE) <= WHOLE:
        return value
    return _Cutter().alone(value, 0)


def common_prefix(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` share from their start (compared a chunk at a time)."""
    limit, at = min(len(a), len(b)), 0
    while at < limit and a[at:at + _CHUNK] == b[at:at + _CHUNK]:
        at += _CHUNK
    if at >= limit:
        return limit
    end = min(at + _CHUNK, limit)
    while at < end and a[at] == b[at]:
        at += 1
    return at


def _common_suffix(a: str, b: str, limit: int) -> int:
    at = 0
    while at < limit:
        step = min(_CHUNK, limit - at)
        if a[len(a) - at - step:len(a) - at] != b[len(b) - at - step:len(b) - at]:
            break
        at += step
    while at < limit and a[len(a) - at - 1] == b[len(b) - at - 1]:
        at += 1
    return at


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}{'' if n == 1 else 's'}"


class _Cutter:
    """One walk of two values, spending one budget of kept characters."""

    def __init__(self) -> None:
        self.left = BUDGET

    def _spend(self, n: int) -> None:
        self.left -= n

    def pair(self, a: Any, b: Any, depth: int) -> tuple[Any, Any]:
        if type(a) is type(b) and a == b:
            same = self.same(a)
            return same, same
        if self.left <= 0:  # two marks that differ: a difference is never cut into an equality
            return "⋯ (not shown: the diff's budget is spent)", "⋯ (differs; not shown: the diff's budget is spent)"
        if isinstance(a, str) and isinstance(b, str):
            return self.texts(a, b)
        if isinstance(a, dict) and isinstance(b, dict) and depth < 64:
            return self.mappings(a, b, depth)
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and depth < 64:
            return self.lists(list(a), list(b), depth)
        return self.alone(a, depth), self.alone(b, depth)

    def same(self, value: Any) -> Any:
        """A value equal on both sides: whole when small (it is the diff's context), else a mark."""
        size = weight(value, EQUAL_WHOLE)
        if size <= EQUAL_WHOLE:
            self._spend(size)
            return value
        self._spend(100)
        if isinstance(value, str):
            first = value.split("\n", 1)[0][:80]
            return f"{first}⋯ (equal on both sides: {_count(len(value), 'character')})"
        if isinstance(value, dict):
            return f"⋯ (equal on both sides: a mapping of {_count(len(value), 'key')})"
        if isinstance(value, (list, tuple)):
            return f"⋯ (equal on both sides: a list of {_count(len(value), 'item')})"
        return value

    def alone(self, value: Any, depth: int) -> Any:
        """A value with nothing to be compared with: its first ``TEXT`` characters, ``ITEMS`` items."""
        if self.left <= 0:
            return "⋯ (not shown: the diff's budget is spent)"
        if isinstance(value, str):
            kept = value[:min(TEXT, max(self.left, 0))]
            self._spend(len(kept))
            cut = len(value) - len(kept)
            return kept + (f"⋯ ({_count(cut, 'more character')})" if cut else "")
        if isinstance(value, dict) and depth < 64:
            out = {key: self.alone(item, depth + 1) for key, item in list(value.items())[:ITEMS]}
            if len(value) > ITEMS:
                out[f"⋯ {_count(len(value) - ITEMS, 'more key')}"] = "⋯"
            return out
        if isinstance(value, (list, tuple)) and depth < 64:
            out_list = [self.alone(item, depth + 1) for item in list(value)[:ITEMS]]
            if len(value) > ITEMS:
                out_list.append(f"⋯ {_count(len(value) - ITEMS, 'more item')}")
            return out_list
        if isinstance(value, (dict, list, tuple)):
            return f"⋯ (nested too deeply to show: {type(value).__name__})"
        self._spend(1)
        return value

    def texts(self, a: str, b: str) -> tuple[str, str]:
        """Two texts that differ: the lines around their changes, each side's changed stretch up to
        ``TEXT`` characters, the equal stretches before and after as counted marks."""
        if len(a) + len(b) <= 2 * LINE:
            self._spend(len(a) + len(b))
            return a, b
        start = common_prefix(a, b)
        end = _common_suffix(a, b, min(len(a), len(b)) - start)  # characters shared at the end
        line_start = a.rfind("\n", 0, start) + 1  # the line holding the first change (a[:start] is b[:start])
        context_start = line_start
        for _ in range(KEEP):
            if context_start == 0:
                break
            context_start = a.rfind("\n", 0, context_start - 1) + 1
        # the line holding the last change ends at the first line break in the shared end
        shared_end = a[len(a) - end:]
        line_end = shared_end.find("\n")
        line_end = len(shared_end) if line_end < 0 else line_end
        context_end = line_end
        for _ in range(KEEP):
            if context_end >= len(shared_end):
                break
            found = shared_end.find("\n", context_end + 1)
            context_end = len(shared_end) if found < 0 else found
        head = ""
        if context_start:
            lines = a.count("\n", 0, context_start)
            head = f"⋯ {_count(lines, 'equal line')} ({_count(context_start, 'character')})\n"
        before = _kept_lines(a[context_start:line_start])
        after = _kept_lines(shared_end[line_end:context_end])
        tail = ""
        if context_end < len(shared_end):
            rest = shared_end[context_end:]
            tail = f"\n⋯ {_count(rest.count(chr(10)), 'equal line')} ({_count(len(rest), 'character')})"
        kept = []
        for text in (a, b):
            changed = text[line_start:len(text) - len(shared_end) + line_end]
            skipped = start - line_start - WINDOW
            mark = ""
            if skipped > 0:  # the change lies deep inside a long line: keep the characters just before it
                changed, mark = changed[skipped:], f"({_count(skipped, 'equal character')})⋯"
            kept.append(head + before + mark + _kept_lines(changed) + after + tail)
        self._spend(len(kept[0]) + len(kept[1]))
        return kept[0], kept[1]

    def lists(self, a: list[Any], b: list[Any], depth: int) -> tuple[list[Any], list[Any]]:
        head = 0
        while head < len(a) and head < len(b) and type(a[head]) is type(b[head]) and a[head] == b[head]:
            head += 1
        tail = 0
        while (tail < min(len(a), len(b)) - head and type(a[-1 - tail]) is type(b[-1 - tail])
               and a[-1 - tail] == b[-1 - tail]):
            tail += 1
        middle_a, middle_b = a[head:len(a) - tail], b[head:len(b) - tail]
        out_a: list[Any] = []
        out_b: list[Any] = []
        self._equal_run(a[:head], out_a, out_b, keep_end=True)
        for index in range(max(len(middle_a), len(middle_b))):
            if index == ITEMS:
                out_a.append(f"⋯ {_count(len(middle_a) - index, 'more item')} not compared")
                out_b.append(f"⋯ {_count(len(middle_b) - index, 'more item')} not compared")
                break
            left = middle_a[index] if index < len(middle_a) else _MISSING
            right = middle_b[index] if index < len(middle_b) else _MISSING
            if left is _MISSING:
                out_b.append(self.alone(right, depth + 1))
            elif right is _MISSING:
                out_a.append(self.alone(left, depth + 1))
            else:
                kept_a, kept_b = self.pair(left, right, depth + 1)
                out_a.append(kept_a)
                out_b.append(kept_b)
        self._equal_run(a[len(a) - tail:], out_a, out_b, keep_end=False)
        return out_a, out_b

    def _equal_run(self, items: list[Any], out_a: list[Any], out_b: list[Any], keep_end: bool) -> None:
        """Equal items before (``keep_end``: keep the last ones) or after the changes."""
        if len(items) > KEEP:
            mark = f"⋯ {_count(len(items) - KEEP, 'equal item')}"
            kept = [self.same(item) for item in (items[-KEEP:] if keep_end else items[:KEEP])]
            items_out = [mark, *kept] if keep_end else [*kept, mark]
        else:
            items_out = [self.same(item) for item in items]
        out_a.extend(items_out)
        out_b.extend(items_out)

    def mappings(self, a: dict[Any, Any], b: dict[Any, Any], depth: int) -> tuple[dict[Any, Any], dict[Any, Any]]:
        """Keys in each side's own order; a run of entries equal on both sides, away from the
        changes, becomes one marked entry; past ``ITEMS`` differing entries, the rest is cut."""
        keys = list(a) + [key for key in b if key not in a]
        equal = [key in a and key in b and type(a[key]) is type(b[key]) and a[key] == b[key] for key in keys]
        near = [False] * len(keys)  # within KEEP entries of one that differs
        for index, same in enumerate(equal):
            if not same:
                for other in range(max(0, index - KEEP), min(len(keys), index + KEEP + 1)):
                    near[other] = True
        out_a: dict[Any, Any] = {}
        out_b: dict[Any, Any] = {}
        differing, run = 0, []
        for index, key in enumerate(keys):
            if equal[index] and not near[index]:
                run.append(key)
                continue
            self._fold(run, a, out_a, out_b)
            run = []
            if not equal[index]:
                differing += 1
                if differing > ITEMS:
                    rest = len(keys) - index
                    out_a[f"⋯ {_count(rest, 'more key')} not compared"] = "⋯"
                    out_b[f"⋯ {_count(rest, 'more key')} not compared"] = "⋯"
                    break
            if key in a and key in b:
                out_a[key], out_b[key] = self.pair(a[key], b[key], depth + 1)
            elif key in a:
                out_a[key] = self.alone(a[key], depth + 1)
            else:
                out_b[key] = self.alone(b[key], depth + 1)
        else:
            self._fold(run, a, out_a, out_b)
        return out_a, out_b

    def _fold(self, run: list[Any], a: dict[Any, Any], out_a: dict[Any, Any], out_b: dict[Any, Any]) -> None:
        if len(run) > 1:
            mark = f"⋯ {_count(len(run), 'equal key')} ({str(run[0])[:40]} … {str(run[-1])[:40]})"
            out_a[mark] = out_b[mark] = "⋯"
        elif run:
            out_a[run[0]] = out_b[run[0]] = self.same(a[run[0]])


def _kept_lines(text: str) -> str:
    """``text`` line by line, each line cut to ``LINE`` characters, until ``TEXT`` characters are
    kept; marks count what was cut."""
    out: list[str] = []
    kept = at = 0
    while at <= len(text) and kept < TEXT:
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        if end - at > LINE:
            out.append(text[at:at + LINE] + f"⋯ ({_count(end - at - LINE, 'more character')})")
        else:
            out.append(text[at:end])
        kept += min(end - at, LINE)
        at = end + 1
    if at < len(text):
        out.append(f"⋯ ({_count(text.count(chr(10), at) + 1, 'more line')}, {_count(len(text) - at, 'character')})")
    return "\n".join(out)
