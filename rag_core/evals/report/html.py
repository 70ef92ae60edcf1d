"""The report as one self-contained HTML file: the page's style, script and data inline, nothing
fetched when it is viewed (no CDN, no font, no image), so it opens from ``file://``, from a CI
artifact or from a mail attachment alike.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from rag_core.evals.runs.schema import RecordError, RunRecord

HISTORY = 20  # runs the history shows, the reported one included
_SLOT = re.compile(r"/\*@(style|script|data|title)@\*/")


def _static(name: str) -> str:
    return files("rag_core.evals.report").joinpath("static", name).read_text(encoding="utf-8")


def render(data: dict[str, Any], title: str) -> str:
    """The page for ``data`` (``view.build``)."""
    from html import escape

    from rag_core.evals.runs.bounds import jsonable

    # JSON inside <script>: "<" escaped, so no text in the data can close the element early
    payload = json.dumps(jsonable(data), ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    slots = {"style": _static("report.css"), "script": _static("report.js"), "data": payload, "title": escape(title)}
    # one pass: a slot's text is never searched for further slots
    return _SLOT.sub(lambda match: slots[match.group(1)], _static("report.html"))


@dataclass
class Report:
    html: str
    run: Path
    base: Path | None


def report_for(folder: Path, run: str | None = None, compare: str | None = None, history: int = HISTORY) -> Report:
    """The report of the record ``run`` (default: the newest in ``folder``), against ``compare``
    (a record, or ``previous``: the one before it), with up to ``history`` runs of history.
    Raises RecordError naming what is missing or unreadable."""
    from rag_core.evals.report.view import build
    from rag_core.evals.runs.store import RunStore, load

    store = RunStore(folder)
    run_path = store.resolve(run)
    record = load(run_path)
    base_path = None
    base = None
    if compare is not None:
        base_path = store.before(run_path) if compare == "previous" else store.resolve(compare)
        base = load(base_path)
    earlier: list[RunRecord] = []
    if run_path.parent.resolve() == store.folder.resolve():
        for path in store.history(run_path, history)[:-1]:
            try:
                earlier.append(load(path))
            except RecordError:  # one unreadable old record leaves a gap in the history, not an error
                continue
    title = f"rag-core run {record.id}" + (f" vs {base.id}" if base else "")
    return Report(render(build(record, base, [*earlier, record]), title), run_path, base_path)
