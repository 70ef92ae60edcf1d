"""Files no case or suite uses any more: cassettes and goldens of deleted or renamed cases,
baselines of removed retrievers. Listed in the session summary; ``--prune-orphans`` deletes them.

What counts as an orphan, and what may ever be deleted:

* Only a file of the kind its folder holds: a top-level ``.yaml`` of the cassettes folder that
  reads as a cassette (``cassette_format.read_cassette``), a ``.golden.yaml`` of the cases folder
  that reads as a golden, a ``.json`` of a suite's baseline folder that is baseline-shaped, a
  retriever's recording in ``<cassettes>/retrieval/<suite>/`` (a ``.yaml`` that reads as a
  cassette, a ``.rankings.json`` that reads as rankings). Any other file there
  (``docker-compose.yaml`` when the cassettes folder is the project root, notes, another tool's
  JSON) is never one.
* Owned by no case or suite as the files are *now*: ownership is read from the case and suite
  files at the end of the session (a case added or recorded meanwhile by another session owns its
  files), and not decided at all while one of them does not load (it may own any of them).
* Deletion (``prune``) checks each path once more just before unlinking it: still there, still of
  its kind, still owned by nothing (the case and suite files are read again if any changed), and
  not modified since this session started (``mark_session_start``): a file written while the
  session ran may be a live recording, which cannot be made again.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import Any, Callable, Iterable

import pytest

from rag_core.evals.common.modes import GOLDEN_SUFFIX
from rag_core.evals.common.paths import resolved_all

SESSION_START = pytest.StashKey[int]()
# a file's modification time comes from the kernel's coarse clock, which may lag the clock read
# at the session's start by a tick (1-10 ms): a file written just after the start may look older
CLOCK_SLACK_NS = 50_000_000


def mark_session_start(config: pytest.Config) -> None:
    """Remember when this session started (once): nothing modified since is ever deleted."""
    if SESSION_START not in config.stash:
        config.stash[SESSION_START] = time.time_ns()


def session_start(config: pytest.Config) -> int | None:
    return config.stash.get(SESSION_START, None)


def _fingerprint(paths: Iterable[Path]) -> tuple[Any, ...]:
    """What changes when a file is added, removed, renamed or rewritten."""
    marks = []
    for path in paths:
        try:
            info = path.stat()
        except OSError:
            marks.append((str(path), None))
        else:
            marks.append((str(path), info.st_mtime_ns, info.st_size, info.st_ino))
    return tuple(marks)


class _Owners:
    """Files owned by the case or suite files of a folder, read again whenever those changed."""

    def __init__(self, listed: Callable[[], list[Path]], read: Callable[[list[Path]], set[Path] | str],
                 cache: bool = True) -> None:
        self._listed = listed
        self._read = read
        self._cache = cache
        self._seen: tuple[Any, ...] | None = None
        self._owned: set[Path] | str = set()

    def now(self) -> set[Path] | str:
        """The resolved paths owned now, or why ownership cannot be decided."""
        files = self._listed()
        seen = _fingerprint(files)
        if seen != self._seen or not self._cache:
            self._owned, self._seen = self._read(files), seen
        return self._owned


class _Files:
    """One family of files that can be orphans: candidates, their kind, their owners."""

    def candidates(self) -> list[Path]:
        raise NotImplementedError

    def kind_problem(self, path: Path) -> str | None:
        """Why ``path`` is not a file of this family's kind (so never an orphan), or None."""
        raise NotImplementedError

    owners: _Owners | _AllOwners
    users = "a case or suite"  # what uses such files, in messages

    def orphans(self) -> tuple[list[Path], str | None]:
        """The orphans now, and a note when they were not looked for."""
        owned = self.owners.now()
        if isinstance(owned, str):
            return [], f"orphans not checked: {owned}"
        candidates = self.candidates()
        return [p for p, real in zip(candidates, resolved_all(candidates))
                if real not in owned and self.kind_problem(p) is None], None

    def still_orphan(self, path: Path) -> str | None:
        """Why ``path`` is no orphan any more (checked now), or None when it still is one."""
        owned = self.owners.now()
        if isinstance(owned, str):
            return owned
        if path.resolve() in owned:
            return f"{self.users} uses it now"
        return self.kind_problem(path)


class GoldenFiles(_Files):
    """Goldens (``*.golden.yaml`` of the cases folder) and top-level cassettes of the cassettes
    folder. Sub-folders of the cassettes folder (embedding caches, the retrievers' recordings:
    ``RetrieverRecordings``) are not the golden cases' to judge."""

    users = "a case"

    def __init__(self, cases_dir: Path, cassettes_dir: Path) -> None:
        self.cases_dir = cases_dir
        self.cassettes_dir = cassettes_dir
        self.owners = _Owners(self._case_files, self._read)

    def _case_files(self) -> list[Path]:
        from rag_core.evals.golden.case_files import case_files

        return case_files(self.cases_dir) if self.cases_dir.is_dir() else []

    def _read(self, files: list[Path]) -> set[Path] | str:
        from rag_core.evals.golden.case_files import parse_case_file
        from rag_core.evals.common.errors import HarnessError

        cases, broken = [], 0
        for path in files:
            try:
                cases += parse_case_file(path)
            except HarnessError:
                broken += 1
        if broken:  # a case that does not load still owns its files: list nothing rather than wrongly
            return f"{broken} case file(s) did not load"
        return owned_by_cases(cases, self.cassettes_dir) | set(resolved_all(files))

    def candidates(self) -> list[Path]:
        goldens = sorted(self.cases_dir.glob(f"*{GOLDEN_SUFFIX}")) if self.cases_dir.is_dir() else []
        cassettes = sorted(p for p in self.cassettes_dir.glob("*.yaml") if not p.name.endswith(GOLDEN_SUFFIX)) \
            if self.cassettes_dir.is_dir() else []
        return [p for p in dict.fromkeys(goldens + cassettes) if p.is_file()]

    def kind_problem(self, path: Path) -> str | None:
        if path.name.endswith(GOLDEN_SUFFIX) and path.parent.resolve() == self.cases_dir.resolve():
            return golden_problem(path)
        return cassette_problem(path)


class BaselineFiles(_Files):
    """Baseline-shaped ``.json`` files of the loaded suites' baseline folders."""

    users = "a retriever"

    def __init__(self, root: Path, suites_dir: Path) -> None:
        self.root = root
        self.suites_dir = suites_dir
        # not cached: which file a suite reads also depends on which of its baselines exist
        self.owners = _Owners(self._suite_files, self._read, cache=False)
        self._folders: list[Path] = []

    def _suite_files(self) -> list[Path]:
        from rag_core.evals.retrieval.suite import suite_files

        return suite_files(self.suites_dir)

    def _read(self, files: list[Path]) -> set[Path] | str:
        suites = load_suites(files)
        if isinstance(suites, str):
            return suites
        self._folders = [self.root / s.baseline for s in suites if s.baseline]
        return owned_by_suites(suites, self.root)

    def candidates(self) -> list[Path]:
        if not self._folders:
            self.owners.now()  # the folders of the suites as they are now
        folders = {f.resolve(): f for f in self._folders if f.is_dir()}
        return [p for f in folders.values() for p in sorted(f.glob("*.json")) if p.is_file()]

    def kind_problem(self, path: Path) -> str | None:
        from rag_core.evals.retrieval.gate import BaselineError, read_baseline

        try:
            read_baseline(path)
        except BaselineError:
            return "not a baseline"
        return None


class RetrieverRecordings(_Files):
    """The recordings of retrievers (recording.py): ``<retriever>.yaml`` and
    ``<retriever>.rankings.json`` in each suite's folder of ``<cassettes>/retrieval/``. Owned by the
    suites' recorded retrievers, and by a golden case whose ``cassette:`` names one of them (a
    case's cassette may be any path inside the cassettes folder)."""

    users = "a retriever"

    def __init__(self, cassettes_dir: Path, suites_dir: Path, cases_dir: Path | None = None) -> None:
        from rag_core.evals.retrieval.recording import FOLDER

        self.folder = cassettes_dir / FOLDER
        self.suites_dir = suites_dir
        suites = _Owners(self._suite_files, self._read)
        # without a cases folder (the golden plugin is off) no case can own a recording
        cases = GoldenFiles(cases_dir, cassettes_dir).owners if cases_dir is not None else None
        self.owners = _AllOwners([o for o in (suites, cases) if o is not None])

    def _suite_files(self) -> list[Path]:
        from rag_core.evals.retrieval.suite import suite_files

        return suite_files(self.suites_dir)

    def _read(self, files: list[Path]) -> set[Path] | str:
        suites = load_suites(files)
        return suites if isinstance(suites, str) else owned_recordings(suites, self.folder)

    def candidates(self) -> list[Path]:
        if not self.folder.is_dir():
            return []
        suites = sorted(p for p in self.folder.iterdir() if p.is_dir())
        return [p for s in suites for p in sorted([*s.glob("*.yaml"), *s.glob("*.rankings.json")]) if p.is_file()]

    def kind_problem(self, path: Path) -> str | None:
        from rag_core.evals.retrieval.recording import RecordingError, read_rankings

        if path.name.endswith(".rankings.json"):
            try:
                read_rankings(path)
            except RecordingError:
                return "not a rankings file"
            return None
        return cassette_problem(path)


class _AllOwners:
    """What several owners own together; undecided when any of them is."""

    def __init__(self, owners: list[_Owners]) -> None:
        self._owners = owners

    def now(self) -> set[Path] | str:
        owned: set[Path] = set()
        for owners in self._owners:
            these = owners.now()
            if isinstance(these, str):
                return these
            owned |= these
        return owned


def owned_recordings(suites: Iterable[Any], folder: Path) -> set[Path]:
    """The recordings these suites replay (resolved paths), named as recording.py names them: each
    recorded retriever's (a target, a store with a reranker; not a ``live: true`` one, which keeps
    nothing), its sweeps' grid points included."""
    from rag_core.evals.retrieval.recording import RecordingFiles, ReplaySettings

    settings = ReplaySettings(cassettes=folder)
    owned: set[Path] = set()
    for suite in suites:
        for spec in [*suite.retrievers, *(v for sweep in suite.sweep for v in suite.variants(sweep))]:
            if spec.records_traffic and not spec.live:
                files = RecordingFiles.of(settings, suite.name, spec.name)
                owned |= {files.cassette.resolve(), files.rankings.resolve()}
    return owned


def load_suites(files: list[Path]) -> list[Any] | str:
    """The suites of these files, or why their files' owners cannot be decided: a suite that does
    not load still owns its baselines and recordings."""
    from rag_core.evals.retrieval.suite import SuiteFileError, load_suite

    suites, broken = [], 0
    for path in files:
        try:
            suites.append(load_suite(path))
        except SuiteFileError:
            broken += 1
    return f"{broken} retrieval suite file(s) did not load" if broken else suites


def owned_by_cases(cases: Iterable[Any], cassettes_dir: Path) -> set[Path]:
    """The cassettes and goldens of these cases (resolved paths)."""
    cases = list(cases)
    return set(resolved_all([cassettes_dir / n for c in cases for n in c.cassette_names()]
                            + [c.golden_path for c in cases]))


def owned_by_suites(suites: Iterable[Any], root: Path) -> set[Path]:
    """The baseline files these suites read (resolved paths); see ``gate.owned_baselines``."""
    from rag_core.evals.retrieval.gate import owned_baselines

    owned: set[Path] = set()
    for suite in suites:
        owned |= owned_baselines(suite, root)
    return owned


def cassette_problem(path: Path) -> str | None:
    from rag_core.evals.recording.cassette_format import read_cassette
    from rag_core.evals.common.errors import HarnessError

    try:
        read_cassette(path)
    except HarnessError:
        return "not a cassette"
    return None


def golden_problem(path: Path) -> str | None:
    """None when the file reads as a golden: a YAML mapping of the snapshot fields (``Expect``)."""
    import yaml
    from pydantic import ValidationError

    from rag_core.evals.golden.case import Expect

    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        if not isinstance(data, dict):  # an empty or scalar file is no snapshot
            return "not a golden"
        Expect.model_validate(data)
    except (OSError, ValueError, yaml.YAMLError, ValidationError):  # ValueError: UnicodeDecodeError too
        return "not a golden"
    return None


def prune(files: _Files, paths: Iterable[Path], started_ns: int | None) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Delete the orphans among ``paths``, each checked again just before it is unlinked (see the
    module's docstring): the one place orphans are deleted. Returns (deleted, [(kept, why)]);
    a path gone meanwhile is in neither."""
    deleted: list[Path] = []
    kept: list[tuple[Path, str]] = []
    for path in paths:
        try:
            info = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            continue
        except OSError as exc:
            kept.append((path, f"cannot be read: {exc}"))
            continue
        if started_ns is None:
            reason: str | None = "the session's start is unknown: a file written during it cannot be told apart"
        elif not stat.S_ISREG(info.st_mode):
            reason = "not a regular file"
        elif info.st_mtime_ns >= started_ns - CLOCK_SLACK_NS:
            reason = "modified since this session started"
        else:
            reason = files.still_orphan(path)
        if reason is None and _identity(path) != _identity(info):
            reason = "modified since this session started"  # replaced while it was being checked
        if reason is not None:
            kept.append((path, reason))
            continue
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            kept.append((path, f"cannot be deleted: {exc}"))
            continue
        deleted.append(path)
    return deleted, kept


def _identity(what: Path | os.stat_result) -> tuple[int, int, int] | None:
    if isinstance(what, Path):
        try:
            what = os.stat(what, follow_symlinks=False)
        except OSError:
            return None
    return what.st_ino, what.st_mtime_ns, what.st_size


def prune_lines(files: _Files, paths: list[Path], config: pytest.Config) -> list[str]:
    """Prune ``paths`` (``prune``) and say what happened: one summary line per file."""
    from rag_core.evals.common.paths import shown

    deleted, kept = prune(files, paths, session_start(config))
    return [f"  orphan deleted: {shown(p)}" for p in deleted] + [
        f"  orphan kept: {shown(p)} ({why})" for p, why in kept]
