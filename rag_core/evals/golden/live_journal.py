"""The finished runs of a ``--live`` session, kept as each one finishes, so that a session cut
short (Ctrl-C, ``-x``, a crash, a CI job's time limit) can be resumed: ``--resume`` runs only
the repeats that did not finish, and reports them with those that did.

One file per finished run (``.rag-core/live/<case>/<repeat>.json``), written atomically through
the credential detector: a kill leaves whole runs or none. A run is taken again only for the
same case definition (hashed: an edited case runs again) in the same mode (the emulator's
answers are never taken for the provider's). A session without ``--resume`` starts afresh; one
that ran everything it selected leaves no journal behind.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from rag_core.evals.golden.case import GoldenCase
from rag_core.evals.wire.cost import Price
from rag_core.evals.common.failure import Failure
from rag_core.evals.golden.live_runs import LiveRun

_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


@dataclass(frozen=True)
class LiveJournal:
    folder: Path
    emulator: bool  # the mode the runs were made in

    def finished(self, case: GoldenCase) -> dict[int, LiveRun]:
        """The case's runs a journal kept, by repeat (those of another definition or mode left out,
        as is a file that cannot be read)."""
        key, found = self._key(case), {}
        for path in sorted(self._folder_of(case).glob("*.json")):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                if data.get("key") == key:
                    run = _run_from_json(data["run"])
                    found[run.repeat] = run
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return found

    def keep(self, case: GoldenCase, run: LiveRun) -> None:
        from rag_core.evals.atomic import write_checked

        folder = self._folder_of(case)
        folder.mkdir(parents=True, exist_ok=True)
        write_checked(folder / f"{run.repeat}.json", {"case": case.id, "key": self._key(case), "run": run.to_json()},
                      lambda data: json.dumps(data, ensure_ascii=False) + "\n")

    def count(self) -> int:
        """The runs kept (whatever their case)."""
        return sum(1 for _ in self.folder.glob("*/*.json")) if self.folder.is_dir() else 0

    def clear(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def _folder_of(self, case: GoldenCase) -> Path:
        safe = _SAFE.sub("_", case.id)
        # a readable name, and the id's hash where characters were replaced (two ids, one folder)
        return self.folder / (safe if safe == case.id else f"{safe}-{hashlib.sha256(case.id.encode()).hexdigest()[:8]}")

    def _key(self, case: GoldenCase) -> str:
        definition = case.model_dump_json(exclude_none=True)
        return hashlib.sha256(f"{'emulator' if self.emulator else 'live'}\n{definition}".encode()).hexdigest()


def _run_from_json(data: dict[str, Any]) -> LiveRun:
    """A kept run: its entry is reported as it was written; its failures are made again only to
    be shown in the terminal (their values as the entry bounded them)."""
    from rag_core.evals.runs.schema import Cost, FailureEntry

    failures = []
    for made in map(FailureEntry.from_json, data["failures"]):
        label = tuple(made.label) if isinstance(made.label, list) else made.label
        values = {"golden": made.golden, "observed": made.observed} if made.has_values else {}
        failures.append(Failure(made.check, made.source, made.where, made.field, made.message,  # type: ignore[arg-type]
                                label=label, fix=made.fix, **values))
    cost = Cost.from_json(data)
    price = None if cost.usd is None else Price(Decimal(str(cost.usd)), cost.unpriced)
    return LiveRun(float(data["seconds"]), int(data["tokens"]), failures, repeat=int(data["repeat"]),
                   retries=int(data["retries"]), answer=data.get("answer"), price=price, resumed=True, stored=data)
