"""What a failed check found, as data: the report viewer, the golden report and the pytest
plugin read the same ``Failure``; only they turn it into text (``Failure.text``)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Literal

# where the expectation that failed is written: the machine-written golden (``--update-goldens``
# rewrites it), the hand-written case file (it does not), or the recording (re-record it)
Source = Literal["golden", "case", "cassette"]

_NO_VALUE: Any = object()  # a failure that compares no values (a limit, a missing file)


@dataclass(frozen=True)
class Failure:
    check: str  # the check that found it: "snapshot", "tool_calls", "output", "error", "judge", "stale", ...
    source: Source
    where: str  # the file, as shown to the user
    field: str  # the field in that file, e.g. "system_prompt", "expect.usage", "request[2]"
    message: str = ""  # what is wrong, in one line ("" when the diff says it all)
    golden: Any = _NO_VALUE  # the expected value, when the check compares values
    observed: Any = _NO_VALUE  # what the run produced
    # the diff's label, when not "<where>:<field>"; two labels for a diff of two subjects
    label: str | tuple[str, str] | None = None
    fix: str | None = None  # the command that fixes it, when one does
    # one change shows up in several checks (a prompt edit: the system prompt, every request that
    # carries it, each recorded request it makes stale); the first failure that shows it names the
    # places of the others (``also``), each of which names it (``same_as``): see
    # ``golden/checks/same_change.py``
    also: tuple[str, ...] = ()
    same_as: str | None = None
    # what its message says of the change beyond the diff (the values in it made anew each run, and
    # how to make them the same): the failure that shows the change says it too, if not this one
    hint: str = ""

    @property
    def compares_values(self) -> bool:
        return self.golden is not _NO_VALUE

    @property
    def place(self) -> str:
        """Where it is, as ``also`` and ``same_as`` name it: ``<file>:<field>``."""
        return f"{self.where}:{self.field}" if self.where else self.field

    def diff(self) -> str:
        """The unified diff of the expected and the observed value ("" for a failure without values),
        bounded whatever their size (``compare.py``); made once, as the terminal and the run record
        both show it."""
        return self._diff

    @functools.cached_property
    def _diff(self) -> str:
        from rag_core.evals.common.diff import unified, unified_between

        if not self.compares_values:
            return ""
        if isinstance(self.label, tuple):
            return unified_between(*self.label, self.golden, self.observed)
        return unified(self.label or f"{self.where}:{self.field}", self.golden, self.observed)

    def text(self) -> str:
        """The failure as the terminal shows it: the message, its fix, the diff, then the other
        places the same change shows up in."""
        head = f"{self.message}; {self.fix}" if self.fix else self.message
        parts = [part for part in (head, self.diff().rstrip("\n")) if part]
        if self.also:
            parts.append(f"the same change shows up in {places(self.also)}")
        return "\n".join(parts)

    def __str__(self) -> str:
        return self.text()


def places(named: tuple[str, ...] | list[str]) -> str:
    """Places (``<file>:<field>``) in a few words: each file once, with its fields."""
    by_file: dict[str, list[str]] = {}
    for place in named:
        where, _, field = place.rpartition(":")
        by_file.setdefault(where, []).append(field)
    return "; ".join(f"{where}: {', '.join(fields)}" if where else ", ".join(fields) for where, fields in by_file.items())
