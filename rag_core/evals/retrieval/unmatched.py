"""Rankings that name what the dataset does not hold: document ids of no corpus document, and a
run file's queries that match no judged query.

Scored as they are, such ids count as misses, so a retriever that returns ids of another field
(the wrong ``id_field:``) or a run file of other query ids scores 0 with nothing said, and
``--update-baselines`` makes the zeros its baseline. So more of them than the suite allows
(``allow_unmatched:``, none by default) is one message naming how many and the first of them.
"""

from __future__ import annotations

import math
from collections.abc import Container, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Unmatched:
    """How many of ``total`` matched nothing, and the first that did, said in words."""

    count: int
    total: int
    first: str

    @property
    def share(self) -> float:
        return self.count / self.total if self.total else 0.0

    def exceeds(self, allowed: float) -> bool:
        return self.count > 0 and self.share > allowed

    def counted(self) -> str:
        """``3 of 15 (20.0%)``; a share above 0 never reads 0%."""
        share = f"{self.share:.1%}" if self.share >= 0.0005 else "<0.1%"
        return f"{self.count} of {self.total} ({share})"

    def allowance(self) -> float:
        """The smallest ``allow_unmatched:`` share, at two decimals, that would accept this one."""
        return math.ceil(self.share * 100) / 100


def unmatched_documents(rankings: Mapping[str, list[str]], corpus: Container[str]) -> Unmatched | None:
    """The ranked ids that name no corpus document, or None when every one does."""
    count = total = 0
    first = ""
    for query, ranking in rankings.items():
        for rank, doc_id in enumerate(ranking, start=1):
            total += 1
            if doc_id not in corpus:
                count += 1
                first = first or f"{doc_id!r} (query {query}, rank {rank})"
    return Unmatched(count, total, first) if count else None


def unmatched_queries(queries: list[str], judged: Container[str]) -> Unmatched | None:
    """The queries (of a run file) that match no judged query, or None when every one does."""
    missing = [query for query in queries if query not in judged]
    return Unmatched(len(missing), len(queries), repr(missing[0])) if missing else None


def documents_problem(unmatched: Unmatched | None, allowed: float, ranked_by: str) -> str | None:
    """The message when more ranked ids than ``allowed`` match no corpus document; ``ranked_by``
    says what ranked them (``search() returned``, ``the run file ranks``)."""
    if unmatched is None or not unmatched.exceeds(allowed):
        return None
    return (f"{unmatched.counted()} of the document ids {ranked_by} match no document of the corpus (first: "
            f"{unmatched.first}), so they would score as misses; return the corpus's document ids (or, for "
            f"documents, set id_field: to where their id is). If that share is meant (an index holding more "
            f"than the corpus), allow it in the suite: allow_unmatched: {{documents: {unmatched.allowance():g}}}")


def queries_problem(unmatched: Unmatched | None, allowed: float) -> str | None:
    """The message when more of a run file's queries than ``allowed`` match no judged query."""
    if unmatched is None or not unmatched.exceeds(allowed):
        return None
    return (f"{unmatched.counted()} of its queries match no judged query (first: {unmatched.first}), so the "
            f"judged queries they stand for would score 0; name the queries by the dataset's query ids. If "
            f"that share is meant (a run over more queries than the split judges), allow it in the suite: "
            f"allow_unmatched: {{queries: {unmatched.allowance():g}}}")
