"""The folder of run records: their names, writing one, finding one, pruning old ones.

A record is named ``<UTC time>-<short id>.json`` (``20250301T101502.417Z-3fa9c1.json``): names
sort in time order, so the newest record and the one before a given record are found from the
names alone, without reading any file. Only files named so are ever pruned.
"""

from __future__ import annotations

import json
import re
import secrets
from datetime import datetime, timezone
from pathlib import Path

from rag_core.evals.runs.schema import RecordError, RunRecord

DEFAULT_FOLDER = ".rag-core/runs"
DEFAULT_KEEP = 50
_NAME = re.compile(r"^\d{8}T\d{6}\.\d{3}Z-[0-9a-f]{6}\.json$")
# the default folder's parent ignores itself in git, as .pytest_cache does: a project that never
# ran `rag-core init` (which adds it to .gitignore) does not commit its records by accident
_SELF_IGNORE = "# written by rag-core: run records stay on this machine\n*\n"


def new_id(now: datetime | None = None) -> str:
    now = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    return f"{now:%Y%m%dT%H%M%S}.{now.microsecond // 1000:03d}Z-{secrets.token_hex(3)}"


def is_record_name(name: str) -> bool:
    return bool(_NAME.match(name))


class RunStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def paths(self) -> list[Path]:
        """The records in the folder, oldest first."""
        if not self.folder.is_dir():
            return []
        return sorted(p for p in self.folder.iterdir() if is_record_name(p.name) and p.is_file())

    def write(self, record: RunRecord) -> Path:
        """Write ``record`` atomically, with the user's umask, within its size budget (notes added
        to it say what was left out). Raises CredentialError (nothing written) if anything in it
        still looks like a credential, OSError if the folder cannot be written."""
        from rag_core.evals.atomic import write_checked
        from rag_core.evals.runs.bounds import keep_within_budget

        record.notes += keep_within_budget(record.cases)
        path = self.folder / f"{record.id}.json"
        write_checked(path, record.to_json(), _json_line)
        self._ignore_in_git()
        return path

    def _ignore_in_git(self) -> None:
        parent = self.folder.parent
        if parent.name == ".rag-core" and not (parent / ".gitignore").exists():
            from rag_core.evals.atomic import write_atomic

            write_atomic(parent / ".gitignore", _SELF_IGNORE)

    def prune(self, keep: int) -> list[Path]:
        """Delete all but the ``keep`` newest records (0 keeps them all); the deleted paths."""
        if keep <= 0:
            return []
        old = self.paths()[:-keep]
        for path in old:
            path.unlink(missing_ok=True)  # another session may have pruned it meanwhile
        return old

    def newest(self) -> Path:
        paths = self.paths()
        if not paths:
            raise RecordError(f"{self.folder}: no run records here yet (run pytest evals/ first)")
        return paths[-1]

    def before(self, path: Path) -> Path:
        """The record made just before ``path`` (by name, so by time)."""
        earlier = [p for p in self.paths() if p.name < path.name]
        if not earlier:
            raise RecordError(f"{path.name}: no earlier run record in {self.folder} to compare with")
        return earlier[-1]

    def history(self, path: Path, count: int) -> list[Path]:
        """Up to ``count`` records ending with ``path``, oldest first."""
        earlier = [p for p in self.paths() if p.name < path.name]
        return [*earlier[-(count - 1):], path] if count > 1 else [path]

    def resolve(self, spec: str | None) -> Path:
        """A record from what a user types: nothing (the newest), a path, or a record's id or file name."""
        if spec is None:
            return self.newest()
        given = Path(spec)
        if given.is_file():
            return given
        for candidate in (self.folder / spec, self.folder / f"{spec}.json"):
            if candidate.is_file():
                return candidate
        matches = [p for p in self.paths() if p.name.startswith(spec)] if spec else []
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise RecordError(f"{spec}: names {len(matches)} run records in {self.folder}; give more of the name")
        raise RecordError(f"{spec}: no such run record (neither a file nor a record in {self.folder})")


def _json_line(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"


def load(path: Path) -> RunRecord:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RecordError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecordError(f"{path}: not a JSON file ({exc})") from None
    return RunRecord.from_json(data, str(path))
