"""The report as one self-contained HTML file: the page's style, script and data inline, nothing
fetched when it is viewed (no CDN, no font, no image), so it opens from ``file://``, from a CI
artifact or from a mail attachment alike.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any, Callable, Iterable

from rag_core.evals.runs.schema import RecordError, RunRecord

HISTORY = 20  # runs the history shows, the reported one included
# where ``rag-core report`` writes the page unless told (relative to where it is run): the markdown
# summary links the report there, relative to the summary, unless CI names another place
DEFAULT_OUTPUT = ".rag-core/report.html"
_SLOT = re.compile(r"/\*@(style|script|data|title)@\*/")


def _static(name: str) -> str:
    return files("rag_core.evals.report").joinpath("static", name).read_text(encoding="utf-8")


def page(data: dict[str, Any], title: str) -> dict[str, Any]:
    """What the page for ``data`` (``view.build``) embeds, as JSON data: the report's writer
    screens this for credentials before the page is rendered from it (``render_page``)."""
    from rag_core.evals.runs.bounds import jsonable

    return {"title": title, "data": jsonable(data)}


def render_page(embedded: dict[str, Any]) -> str:
    """The page embedding ``embedded`` (``page``)."""
    from html import escape

    # JSON inside <script>: "<" escaped, so no text in the data can close the element early
    payload = json.dumps(embedded["data"], ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    slots = {"style": _static("report.css"), "script": _static("report.js"), "data": payload,
             "title": escape(embedded["title"])}
    # one pass: a slot's text is never searched for further slots
    return _SLOT.sub(lambda match: slots[match.group(1)], _static("report.html"))


@dataclass
class Report:
    embedded: dict[str, Any]  # what the page embeds (``page``): what its writer screens
    run: Path
    base: Path | None
    history: list[Path] = field(default_factory=list)  # the earlier runs its history shows, oldest first
    skipped: list[str] = field(default_factory=list)  # why each record its history leaves out was left out

    @functools.cached_property
    def html(self) -> str:
        return render_page(self.embedded)


def page_name(record: Path) -> str:
    """The file name of a run's report beside the report that links to it from its history:
    ``<record name>.html``. ``rag-core report --history-pages`` writes these files and
    ``rag-core view`` serves them, so one relative link works from disk and from the server."""
    return f"{record.stem}.html"


def report_for(folder: Path, run: str | None = None, compare: str | None = None, history: int = HISTORY,
               linked: bool = False, loaded: dict[Path, RunRecord] | None = None) -> Report:
    """The report of the record ``run`` (default: the newest in ``folder``), against ``compare``
    (a record, or ``previous``: the one before it), with up to ``history`` runs of history, whose
    points link to their runs' pages (``page_name``) when ``linked``. ``loaded``: records read
    before, by path (several pages of one history read each record once).
    Raises RecordError naming what is missing or unreadable."""
    from rag_core.evals.report.view import build
    from rag_core.evals.runs.store import RunStore, load

    def read(path: Path) -> RunRecord:
        if loaded is None:
            return load(path)
        key = path.resolve()
        if key not in loaded:
            loaded[key] = load(path)
        return loaded[key]

    store = RunStore(folder)
    run_path = store.resolve(run)
    record = read(run_path)
    base_path = None
    base = None
    if compare is not None:
        base_path = store.before(run_path) if compare == "previous" else store.resolve(compare)
        if base_path.resolve() == run_path.resolve():
            raise RecordError(f"--compare {compare}: names the run being reported ({run_path.name}); compare it "
                              "with another run (previous: the one before it)")
        base = read(base_path)
        if base.id == record.id:
            raise RecordError(f"--compare {compare}: {base_path} is a copy of the run being reported ({run_path}, "
                              f"run {record.id}); compare it with another run (previous: the one before it)")
    earlier: list[tuple[Path, RunRecord]] = []
    skipped: list[str] = []
    if run_path.parent.resolve() == store.folder.resolve():
        for path in store.history(run_path, history)[:-1]:
            try:
                earlier.append((path, read(path)))
            except RecordError as exc:  # one unreadable old record leaves a gap in the history, said once
                skipped.append(f"left out of the history: {exc}")
    pages = {old.id: page_name(path) for path, old in earlier} if linked else {}
    title = f"rag-core run {record.id}" + (f" vs {base.id}" if base else "")
    label = base_label(record, base, compare == "previous") if base else None
    embedded = page(build(record, base, [*(old for _, old in earlier), record], pages, label), title)
    return Report(embedded, run_path, base_path, [path for path, _ in earlier], skipped)


def base_label(run: RunRecord, base: RunRecord, previous: bool) -> str:
    """How the page names the run it compares with, in words rather than the command line's BASE:
    record ids start with their UTC time, so they say which came first."""
    if previous:
        return "the previous run"
    return "the earlier run" if base.id < run.id else "the later run"


class HistoryPages:
    """The reports a page's history points link to (``page_name``), each built when first asked
    for: served by ``rag-core view``, written by ``rag-core report --history-pages``. Each is its
    run's report, against the run before it when the page linking to it was compared, and its
    own history links on in turn."""

    def __init__(self, folder: Path, compared: bool, history: int = HISTORY,
                 warn: Callable[[str], None] | None = None, said: Iterable[str] = ()) -> None:
        self.folder = folder
        self.compared = compared
        self.history = history
        self.warn = warn  # told once of each record a page's history leaves out
        self.said = set(said)  # what was told already (by the page that links to these)
        self.loaded: dict[Path, RunRecord] = {}
        self.built: dict[str, Report] = {}
        self.lock = threading.Lock()  # the server answers requests on several threads

    def page(self, name: str) -> str | None:
        """The page called ``name`` (``<record name>.html``), or None when the folder holds no such
        record: only record names are read, so no request reaches any other file."""
        report = self.report(name)
        return None if report is None else report.html

    def report(self, name: str) -> Report | None:
        """The report of the page called ``name`` (as ``page``), or None."""
        from rag_core.evals.runs.store import RunStore, is_record_name

        record = self.folder / f"{name.removesuffix('.html')}.json"
        if not name.endswith(".html") or not is_record_name(record.name) or not record.is_file():
            return None
        with self.lock:
            if name not in self.built:
                store = RunStore(self.folder)
                compare = "previous" if self.compared and any(p.name < record.name for p in store.paths()) else None
                self.built[name] = report_for(self.folder, str(record), compare, self.history, linked=True,
                                              loaded=self.loaded)
                for line in self.built[name].skipped:
                    if self.warn is not None and line not in self.said:
                        self.said.add(line)
                        self.warn(line)
            return self.built[name]
