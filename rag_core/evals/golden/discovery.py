"""Which golden cases a session has: every case file read into test parameters (``CaseRef``).

Under ``--case`` only what can matter to the selected cases is read whole: the files that can
hold them, and every file that could share an id, golden or cassette with one of them (that
clash fails the case, naming both files). Every other file is skimmed (``case.skim_case_file``)
and stands as a parameter of its own, deselected like before: the session shows the same tests
and the same number deselected, and a broken unrelated file is, as before, not reported.

The plugin imports this module when it loads: the case model (pydantic) is imported only when
cases are read. The harness's small errors module comes with it, so its classes are made once per
process: pytester's in-process runs drop the modules a run imported first, and an error class
made again by a later run slipped past the ``except`` of a module kept from an earlier one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rag_core.evals.common.errors import HarnessError

if TYPE_CHECKING:
    from rag_core.evals.golden.case import GoldenCase
    from rag_core.evals.golden.case_files import Skimmed

# the error of a skimmed file's parameter: always deselected by --case, so never shown
UNREAD = "not read: --case selects other cases"


@dataclass
class CaseRef:
    id: str
    case: GoldenCase | None = None
    error: str | None = None
    tags: tuple[str, ...] = ()  # a skimmed file's tags (a case read whole has its own)


def selects(wanted: list[str], case_id: str) -> bool:
    """Whether ``--case`` values select the case ``case_id`` (its own id, or a variant of it)."""
    return any(case_id == w or case_id.startswith(f"{w}.") for w in wanted)


def discover(folder: Path, wanted: list[str] | None = None) -> list[CaseRef]:
    """The tests of every case file in ``folder``, in file order: one per case (two for a
    ``stream: [false, true]`` file), or one failing with its error for a file that does not load
    or clashes with another. With ``wanted`` (``--case``), files that cannot matter to the
    selected cases are only skimmed."""
    from rag_core.evals.golden.case_files import case_files, find_duplicates

    files = case_files(folder)
    if wanted:
        parsed, skimmed = _read_for(files, wanted)
    else:
        parsed, skimmed = {path: _parse(path) for path in files}, {}
    # in file order, as over every file: which of two clashing cases is named first depends on it
    clashes = find_duplicates([case for path in files if not isinstance(parsed.get(path, ""), str)
                               for case in parsed[path]])
    refs: list[CaseRef] = []
    for path in files:
        if path in skimmed:
            refs.append(CaseRef(skimmed[path].id, error=UNREAD, tags=skimmed[path].tags))
            continue
        found = parsed[path]
        if isinstance(found, str):
            refs.append(CaseRef(path.stem, error=found))
        else:
            refs += [CaseRef(c.id, error=clashes[c.id]) if c.id in clashes else CaseRef(c.id, case=c) for c in found]
    return refs


def tags_of(refs: list[CaseRef]) -> list[str]:
    """Every tag the cases use (as a skimmed file's top level writes them), for the markers."""
    return sorted({tag for ref in refs for tag in (ref.case.tags if ref.case else ref.tags)})


def _parse(path: Path) -> list[GoldenCase] | str:
    from rag_core.evals.golden.case_files import parse_case_file

    try:
        return parse_case_file(path)
    except HarnessError as exc:
        return str(exc)


def _read_for(files: list[Path], wanted: list[str]) -> tuple[dict[Path, list[GoldenCase] | str], dict[Path, Skimmed]]:
    """The files read whole for ``wanted`` (with what reading gave), and the others skimmed.

    Read whole: a file that cannot be skimmed, one whose stem or id is selected, and, until none
    is left, every file with a clash key of a file read whole. A skim's keys include every key
    the file has when valid, so the files read whole are closed under sharing a key: the clash
    errors of the selected cases come out of ``find_duplicates`` over them as over every file."""
    from rag_core.evals.golden.case_files import clash_keys, skim_case_file

    skims = {path: skim_case_file(path) for path in files}
    pending = [path for path, skim in skims.items()
               if skim is None or selects(wanted, path.stem) or selects(wanted, skim.id)]
    first = set(pending)
    by_key: dict[tuple[str, str], list[Path]] = {}
    for path, skim in skims.items():
        if skim is not None and path not in first:
            for key in skim.keys:
                by_key.setdefault(key, []).append(path)
    parsed: dict[Path, list[GoldenCase] | str] = {}
    while pending:
        path = pending.pop()
        if path in parsed:
            continue
        parsed[path] = found = _parse(path)
        for key in [key for case in found for key in clash_keys(case)] if not isinstance(found, str) else []:
            pending += by_key.pop(key, [])
    return parsed, {path: skim for path, skim in skims.items() if path not in parsed and skim is not None}
