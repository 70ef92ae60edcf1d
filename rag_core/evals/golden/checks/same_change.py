"""One change, reported once. A one-sentence prompt edit shows up in the golden's ``system_prompt``,
in its ``requests`` (every request carries the prompt) and in each recorded request of the cassette
it makes stale: each is a failure of its own check, and each diff shows the same two lines. The
report leads with the first failure that shows a change, in report order (the golden's own fields
first: the first field it changed), and names there the other places it shows up in; each of
those is kept, marked as the same change, for a report that lets one open it; what one of them
says of the change beyond its diff (``Failure.hint``) is said where the change is shown.

What a failure changed is read from its values, not its diff (the same text is indented
differently in each): the lines of every string in the value, and every other scalar, counted;
the lines the expected value has more of were removed, the ones the observed value has more of
were added. A failure whose every removed and added line is shown by the failures before it that
share any of them is the same change; one that changes something more leads a report of its own.
A failure that compares no values, or whose values hold the same lines in another order, always
leads.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterator

from rag_core.evals.common.failure import Failure


@dataclass(frozen=True)
class Change:
    """The lines a failure's expected value has and its observed value has not (removed), and
    the reverse (added)."""

    removed: frozenset[str]
    added: frozenset[str]

    def __bool__(self) -> bool:
        return bool(self.removed or self.added)

    def shares(self, other: Change) -> bool:
        return bool(self.removed & other.removed or self.added & other.added)


def _lines(value: Any) -> Iterator[str]:
    """Each line of each string in ``value`` (stripped, blank ones left out), and each other scalar."""
    if isinstance(value, str):
        for line in value.splitlines():
            if line.strip():
                yield line.strip()
    elif isinstance(value, dict):
        for item in value.values():
            yield from _lines(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _lines(item)
    elif value is not None:
        yield json.dumps(value)


def change_of(failure: Failure) -> Change:
    """What ``failure`` changed (empty for a failure that compares no values)."""
    if not failure.compares_values:
        return Change(frozenset(), frozenset())
    golden, observed = Counter(_lines(failure.golden)), Counter(_lines(failure.observed))
    return Change(frozenset(golden - observed), frozenset(observed - golden))


def grouped(failures: list[Failure]) -> list[Failure]:
    """``failures`` in their order, each that repeats the change of failures before it marked
    ``same_as`` the first of them, and those naming it in ``also``."""
    leads: list[tuple[int, Change]] = []  # (index in out, what that lead changed)
    out = list(failures)
    for index, failure in enumerate(failures):
        change = change_of(failure)
        sharing = [(at, shown) for at, shown in leads if change and shown.shares(change)]
        removed = frozenset().union(*(shown.removed for _, shown in sharing))
        added = frozenset().union(*(shown.added for _, shown in sharing))
        if not sharing or not (change.removed <= removed and change.added <= added):
            leads.append((index, change))
            continue
        out[index] = dataclasses.replace(failure, same_as=out[sharing[0][0]].place)
        for at, _ in sharing:
            out[at] = dataclasses.replace(out[at], also=(*out[at].also, failure.place))
        first = out[sharing[0][0]]
        if failure.hint and failure.hint not in first.message:  # said where the change is shown
            said = f"{failure.place} differs {failure.hint}"
            out[sharing[0][0]] = dataclasses.replace(first, message=f"{first.message}\n{said}" if first.message else said)
    return out


def leading(failures: list[Failure]) -> list[Failure]:
    """The failures a report shows: each change once."""
    return [failure for failure in failures if failure.same_as is None]
