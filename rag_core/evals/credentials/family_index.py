"""Which families are worth running on a text: an index of the families by their hints."""

from __future__ import annotations

import functools
import re
from typing import Any

from rag_core.evals.credentials.families import FAMILIES, Family


class FamilyIndex:
    """The families worth running on a text: those with a hint in it. Texts are mostly short (a
    model name, a role, a tool's description), and testing each of the ~100 hints one by one
    was most of a scan; an RE2 set of all hints finds every one a text holds, overlapping ones
    included, in one pass of its DFA (a regex of all hints, searched again after each place one
    started, took most of a base64 blob's scan). A family with a one-character hint (the Discord
    token's ".") or none is always run, and tests its hint itself: those would be found at every
    other place."""

    def __init__(self, families: tuple[Family, ...]) -> None:
        self._always = frozenset(index for index, family in enumerate(families)
                                 if not family.hints or min(map(len, family.hints)) < 2)
        by_hint: dict[str, set[int]] = {}
        for index, family in enumerate(families):
            if index not in self._always:
                for hint in family.hints:
                    by_hint.setdefault(hint, set()).add(index)
        # lower-case hints are looked for in the lower-cased text, the others in the text (as found_in)
        self._groups = tuple([(hint, frozenset(by_hint[hint])) for hint in by_hint if (hint == hint.lower()) == lower]
                             for lower in (True, False))

    @functools.cached_property
    def _sets(self) -> tuple[Any, Any]:
        """The RE2 sets of the lower-case hints and of the others, made on first use (the import stays cheap)."""
        import re2

        sets = []
        for group in self._groups:
            hints = re2.Set.SearchSet()
            for hint, _ in group:
                hints.Add(re.escape(hint).encode("utf-8"))
            hints.Compile()
            sets.append(hints)
        return sets[0], sets[1]

    def candidates(self, text: str, lowered: str) -> list[int]:
        """The indices, in order, of the families whose hints ``text`` holds, and those always run."""
        found = set(self._always)
        for hints, group, haystack in zip(self._sets, self._groups, (lowered, text)):
            for number in hints.Match(haystack.encode("utf-8", "surrogatepass")) or ():
                found |= group[number][1]
        return sorted(found)


FAMILY_INDEX = FamilyIndex(FAMILIES)
