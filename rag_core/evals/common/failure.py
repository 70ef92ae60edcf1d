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

    @property
    def compares_values(self) -> bool:
        return self.golden is not _NO_VALUE

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
        """The failure as the terminal shows it: the message, its fix, then the diff."""
        head = f"{self.message}; {self.fix}" if self.fix else self.message
        diff = self.diff()
        return f"{head}\n{diff}" if head and diff else head or diff

    def __str__(self) -> str:
        return self.text()
