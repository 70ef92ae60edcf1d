"""One run's record from the records of its CI shards (``rag-core merge``).

A run split over CI jobs (``pytest-split``, ``-k``, a matrix over case folders) writes one record
per job, each holding the cases and retrievers of its shard. Merged, they are one record: the
report, the markdown summary and later comparisons see the whole run. Only shards of one run merge:
a case or a retriever in two shards, shards made from different commits or with different options
are refused, naming the files, rather than merged into a record that says something no run did.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from rag_core.evals.runs.schema import GitState, RecordError, RunOptions, RunRecord
from rag_core.evals.runs.store import new_id

NO_TESTS = 5  # pytest's exit status when a session collected nothing: a shard may be empty


@dataclass(frozen=True)
class Shard:
    name: str  # as the user gave it, for messages
    record: RunRecord


def merge(shards: list[Shard], now: datetime | None = None) -> RunRecord:
    """The merged record (a new id, named for ``now``: the newest record of its folder). Raises
    RecordError naming the files when the shards are not of one run."""
    if not shards:
        raise RecordError("no shard records to merge")
    _one_commit(shards)
    _one_set_of_options(shards)
    first = shards[0].record
    merged = RunRecord(id=new_id(now), started=min((s.record.started for s in shards if s.record.started), default=""),
                       seconds=max(s.record.seconds for s in shards),  # shards run side by side
                       exit_status=_exit_status([s.record.exit_status for s in shards]),
                       git=_git(first.git, shards), options=first.options)
    owners: dict[str, str] = {}
    for shard in shards:
        for case in shard.record.cases:
            _claim(owners, f"case {case.id}", shard.name)
            merged.cases.append(case)
        for retriever in shard.record.retrieval:
            _claim(owners, f"retriever {retriever.key}", shard.name)
            merged.retrieval.append(retriever)
    merged.late = [attempt for shard in shards for attempt in shard.record.late]
    notes = [note for shard in shards for note in shard.record.notes]
    merged.notes = [*dict.fromkeys(notes), f"merged from {len(shards)} shard records: "
                    + ", ".join(shard.name for shard in shards)]
    return merged


def _claim(owners: dict[str, str], what: str, shard: str) -> None:
    if what in owners:
        raise RecordError(f"{what} is in two shard records, {owners[what]} and {shard}: the shards of one run hold "
                          "each case and retriever once (were two shards given the same selection?)")
    owners[what] = shard


def _commit(git: GitState | None) -> str:
    return git.commit if git else "no commit"


def _one_commit(shards: list[Shard]) -> None:
    commits = {_commit(shard.record.git) for shard in shards}
    if len(commits) > 1:
        made = ", ".join(f"{shard.name} at {_commit(shard.record.git)[:12]}" for shard in shards)
        raise RecordError(f"the shard records were made from different commits ({made}): only the shards of one "
                          "run merge")


def _git(git: GitState | None, shards: list[Shard]) -> GitState | None:
    return GitState(git.commit, dirty=any(s.record.git and s.record.git.dirty for s in shards)) if git else None


def _one_set_of_options(shards: list[Shard]) -> None:
    """Shards of one run share its options; their command lines differ (the selection), so the
    merged record keeps the first shard's."""
    def mode(options: RunOptions) -> dict[str, object]:
        return {k: v for k, v in options.to_json().items() if k != "args"}

    first, expected = shards[0], mode(shards[0].record.options)
    for shard in shards[1:]:
        given = mode(shard.record.options)
        differ = [k for k, v in given.items() if expected[k] != v]
        if differ:
            shown = "; ".join(f"{k}: {expected[k]!r} in {first.name}, {given[k]!r} in {shard.name}" for k in differ)
            raise RecordError(f"the shard records were made with different options ({shown}): only the shards of "
                              "one run merge")


def _exit_status(statuses: list[int]) -> int:
    """The run's: the worst shard's, where an empty shard (nothing collected) counts as none."""
    ran = [status for status in statuses if status != NO_TESTS]
    return max(ran) if ran else NO_TESTS


def load_shards(paths: list[Path]) -> list[Shard]:
    """The records at ``paths``, each given once. Raises RecordError naming a file that is given twice,
    missing or no run record."""
    from rag_core.evals.runs.store import load

    seen: dict[Path, str] = {}
    shards = []
    for path in paths:
        key = path.resolve()
        if key in seen:
            raise RecordError(f"{path}: given twice (as {seen[key]} too)")
        seen[key] = str(path)
        shards.append(Shard(str(path), load(path)))
    return shards
