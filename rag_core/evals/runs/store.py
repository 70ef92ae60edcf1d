"""The folder of run records: their names, writing one, finding one, pruning old ones.

A record is named ``<UTC time>-<short id>.json`` (``20250301T101502.417Z-3fa9c1.json``): names
sort in time order, so the newest record and the one before a given record are found from the
names alone, without reading any file. Only files named so are ever pruned.
"""

from __future__ import annotations

import json
import math
import re
import secrets
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

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
    """The record at ``path``. Raises RecordError naming the file and the cause for anything else:
    a file that cannot be read, is not JSON, is nested deeper than any record (``MAX_DEPTH``),
    holds text that is no text (a lone surrogate) or a number JSON has not (NaN), or holds a field
    of the wrong kind."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RecordError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise RecordError(f"{path}: not a JSON file ({exc})") from None
    return RunRecord.from_json(plain_json(text, str(path)), str(path))


# A record rag-core writes is at most about 75 levels deep: a failure's values are cut at 64
# levels (``bounds.jsonable``), under a case, its live runs and their failures. A deeper file was
# not written by it, and is refused before anything recurses into it.
MAX_DEPTH = 100


class _Unfit(ValueError):
    """JSON that Python reads but no record holds (NaN, a number past a float's range)."""


def _no_constant(name: str) -> Any:
    raise _Unfit(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _Unfit(f"{text} is beyond the numbers a record holds")
    return number


def plain_json(text: str, source: str) -> Any:
    """``text`` as JSON data that every reader can walk: at most ``MAX_DEPTH`` levels deep, every
    string (keys too) valid Unicode, every number finite. Raises RecordError naming ``source``."""
    try:
        data = json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        raise RecordError(f"{source}: not a run record rag-core can read: nested deeper than {MAX_DEPTH} levels") from None
    except _Unfit as exc:
        raise RecordError(f"{source}: not a run record rag-core can read: {exc}") from None
    except ValueError as exc:  # JSONDecodeError, a constant or an integer too long to read
        raise RecordError(f"{source}: not a JSON file ({exc})") from None
    if not _fit(data):  # walked again, naming where, only when something is wrong
        raise RecordError(f"{source}: not a run record rag-core can read: {_first_problem(data)}")
    return data


def _fit(data: Any) -> bool:
    """Whether ``data`` is at most ``MAX_DEPTH`` deep and all its strings are text, walked without
    recursion (a record of thousands of cases is walked in a blink)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            if not _is_text(value):
                return False
        elif isinstance(value, dict):
            if depth > MAX_DEPTH or not all(_is_text(key) for key in value):
                return False
            stack += [(item, depth + 1) for item in value.values()]
        elif isinstance(value, list):
            if depth > MAX_DEPTH:
                return False
            stack += [(item, depth + 1) for item in value]
    return True


def _first_problem(data: Any) -> str:
    """What makes ``data`` unfit (``_fit``), and where: too deep, or a string that cannot be
    written back as UTF-8 (a lone surrogate, from a ``\\ud800`` escape)."""
    stack: list[tuple[Any, int, str]] = [(data, 1, "")]
    while stack:
        value, depth, where = stack.pop()
        if isinstance(value, str):
            if not _is_text(value):
                return f"{where or 'the record'} holds a lone surrogate ({_surrogate(value)}), which is not text"
            continue
        if not isinstance(value, (dict, list)):
            continue
        if depth > MAX_DEPTH:
            return f"nested deeper than {MAX_DEPTH} levels (at {where[:80]}{'…' if len(where) > 80 else ''})"
        if isinstance(value, dict):
            for key, item in value.items():
                if not _is_text(key):
                    return f"a key in {where or 'the record'} holds a lone surrogate ({_surrogate(key)}), which is not text"
                stack.append((item, depth + 1, f"{where}.{key}" if where else key))
        else:
            stack += [(item, depth + 1, f"{where}[{number}]") for number, item in enumerate(value)]
    return "it cannot be read"


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _surrogate(value: str) -> str:
    return next(f"\\u{ord(c):04x}" for c in value if 0xD800 <= ord(c) <= 0xDFFF)
