"""The markdown summary of a run, for a CI job summary (``pytest --golden-report FILE``, ``rag-core
merge --summary FILE``): the counts, then each failing case under a heading and an anchor of its
own, with its failures, its diff, and links to the case in the HTML report and to the CI run whose
artifacts hold that report.

Built from the record's typed cases, which are bounded and hold no credential (``runs/failures.py``
withheld it), so the summary shows what the report shows; what it quotes is screened once more, as
data (``summary_data``), when the file is written. GitHub caps a job summary at 1 MiB, and a shared
prompt edit can fail thousands of cases: the first ``CASE_LIMIT`` failing cases get a section, each
diff is cut to ``DIFF_LIMIT`` and diffs are kept until ``DIFF_BUDGET`` is spent; the report has the rest.

Model output and case data are never read as markdown: a model's ``![](https://…)`` would be an
image fetched from its server by every reader of the summary (a tracking pixel), its ``[text](…)`` a
link the run never made. Each text from a case (ids, fields, messages, checks, diffs) stands in a
code span or a fenced block whose fence is longer than any run of backticks in it, where nothing is
a link, an image, HTML or emphasis.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import quote

from rag_core.evals.common.commands import spans
from rag_core.evals.common.failure import places
from rag_core.evals.report.html import DEFAULT_OUTPUT
from rag_core.evals.runs.bounds import cut_text
from rag_core.evals.runs.schema import CaseEntry, FailureEntry, RetrieverEntry

CASE_LIMIT = 100  # failing cases with a section of their own
DIFF_LIMIT = 16 * 1024  # bytes of one case's diff
DIFF_BUDGET = 256 * 1024  # bytes of diffs in all: well under GitHub's 1 MiB for the whole summary
REPORT_FILE = "rag-core-report.html"  # what the workflow `rag-core init` writes names the report
REPORT_URL_VARIABLE = "RAG_CORE_REPORT_URL"  # where CI publishes the report, when it does


@dataclass(frozen=True)
class Links:
    """Where the summary's reader finds the HTML report and the CI run."""

    # a URL, or a path relative to the summary; None: where `rag-core report` writes it by default
    # (``DEFAULT_OUTPUT``), placed relative to the summary by ``beside``
    report: str | None = None
    run: str | None = None  # the CI run's page, which lists its artifacts (GitHub Actions only)

    @classmethod
    def from_environment(cls, env: Mapping[str, str]) -> Links:
        """The report at ``RAG_CORE_REPORT_URL``; else, on GitHub Actions, the file the workflow
        ``rag-core init`` writes uploads, in the run whose artifacts hold it; else where
        ``rag-core report`` writes it by default."""
        server, repository, run_id = (env.get(name, "").strip().rstrip("/") for name in
                                      ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"))
        run = f"{server}/{repository}/actions/runs/{run_id}" if server and repository and run_id else None
        return cls(report=env.get(REPORT_URL_VARIABLE, "").strip() or (REPORT_FILE if run else None), run=run)

    def beside(self, summary: Path, cwd: Path) -> Links:
        """These links as the summary at ``summary`` holds them: the report ``rag-core report`` run
        in ``cwd`` writes by default, as a path from the summary's folder to it."""
        if self.report is not None:
            return self
        relative = os.path.relpath(cwd / DEFAULT_OUTPUT, (cwd / summary).parent)
        return replace(self, report=quote(Path(relative).as_posix(), safe="/._-~"))

    @property
    def report_file(self) -> str:
        return DEFAULT_OUTPUT if self.report is None else self.report

    @property
    def report_is_url(self) -> bool:
        return bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", self.report_file))

    def case(self, case_id: str) -> str:
        """The report opened at one case (the page's ``#case/<id>`` view)."""
        return f"{self.report_file.split('#', 1)[0]}#case/{quote(case_id, safe='')}"


def write(path: Path, cases: list[CaseEntry], links: Links, orphans: list[str] | None = None,
          retrieval: list[RetrieverEntry] | None = None, cwd: Path | None = None, accept: str | None = None) -> None:
    """Add the summary of these cases to ``path``, after what it holds (a CI job summary keeps what
    earlier commands of its step wrote); its link to the report is relative to ``path`` (``cwd``:
    where ``rag-core report`` is run, by default here); ``accept``: the command that accepts every
    change the cases show. Raises CredentialError, having written nothing, when what it quotes
    looks like a credential; OSError when the file cannot be written."""
    from rag_core.evals.atomic import append_checked

    placed = links.beside(path, cwd or Path.cwd())
    append_checked(path, summary_data(cases, placed, orphans, retrieval, accept), render)


def write_live(path: Path, cases: list[CaseEntry]) -> None:
    """Add the live runs' table of these cases to ``path``, after what it holds (as ``write``)."""
    from rag_core.evals.atomic import append_checked

    append_checked(path, [case.to_json() for case in cases], render_live)


def render_live(data: list[dict[str, Any]]) -> str:
    """The live runs' table as markdown: each case id a code span, never read as markdown."""
    from rag_core.evals.report.terminal import live_table

    cases = [CaseEntry.from_json(case) for case in data]
    return "\n".join(["## rag-core live runs", "", *live_table(cases, shown_id=code_cell), ""])


def summary_data(cases: list[CaseEntry], links: Links, orphans: list[str] | None = None,
                 retrieval: list[RetrieverEntry] | None = None, accept: str | None = None) -> dict[str, Any]:
    """What the summary of these cases quotes, as JSON data: what its writer screens for
    credentials, and what ``render`` makes the summary from."""
    return {"cases": [case.to_json() for case in cases], "links": {"report": links.report_file, "run": links.run},
            "orphans": list(orphans or []), "accept": accept,
            # a retriever's gate, not its queries: the summary quotes no query
            "retrieval": [{**entry.to_json(), "queries": []} for entry in retrieval or []]}


def render(data: dict[str, Any]) -> str:
    """The summary that ``data`` (``summary_data``) describes."""
    return summary([CaseEntry.from_json(case) for case in data["cases"]], Links(**data["links"]), data["orphans"],
                   [RetrieverEntry.from_json(entry) for entry in data["retrieval"]], data.get("accept"))


def summary(cases: list[CaseEntry], links: Links, orphans: list[str] | None = None,
            retrieval: list[RetrieverEntry] | None = None, accept: str | None = None) -> str:
    failed = [case for case in cases if case.status == "failed"]
    statuses = [case.status for case in cases]
    lines = [
        "## rag-core golden cases",
        "",
        "| cases | failed | new goldens | goldens updated | recorded | stale cassettes | tokens in recordings |",
        "|---|---|---|---|---|---|---|",
        f"| {len(cases)} | {len(failed)} | {statuses.count('new')} | {statuses.count('updated')} "
        f"| {sum(c.recorded for c in cases)} | {sum(c.stale for c in cases)} | {sum(c.tokens for c in cases)} |",
        "",
    ]
    for title, chosen in (("Stale cassettes", [c.id for c in cases if c.stale]),
                          ("New goldens (to review)", [c.id for c in cases if c.status == "new"]),
                          ("Goldens updated", [c.id for c in cases if c.status == "updated"]),
                          ("Orphans (no case uses them)", orphans or [])):
        if chosen:
            lines += [f"**{title}:** " + ", ".join(_code(name) for name in chosen), ""]
    if accept:
        lines += _accept(accept)
    lines += _where(links)
    lines += _gates(retrieval or [])
    if failed:
        lines += _failed(failed, links)
    return "\n".join(lines)


def _accept(command: str) -> list[str]:
    """The one command that accepts every change shown, in a block of its own: copied whole, it runs."""
    fence = "`" * max(3, _longest_ticks(command) + 1)
    return ["**If every change shown is intended**, accept them all (it records the stale cassettes again and "
            "writes the goldens; review the diff before committing):", "", f"{fence}sh", command, fence, ""]


def _where(links: Links) -> list[str]:
    parts = [f"HTML report: {_report_link(links, links.report_file, 'rag-core report')}"]
    if links.run:
        parts.append(f"[the CI run and its artifacts]({links.run}#artifacts)")
    return [" · ".join(parts), ""]


def _report_link(links: Links, href: str, label: str) -> str:
    """A link into the report. A relative path in a GitHub job summary would resolve against
    github.com: there it is named (the file is in the run's artifacts), not linked."""
    if links.report_is_url or links.run is None:
        return f"[{label}]({href})"
    return f"{_code(href)} in the run's artifacts"


def _gates(retrieval: list[RetrieverEntry]) -> list[str]:
    if not retrieval:
        return []
    lines = ["### Retrieval gates", "", "| retriever | gate | primary metric | why |", "|---|---|---|---|"]
    for entry in retrieval:
        primary = entry.primary
        value = f"{_code(primary, cell=True)} {entry.metrics[primary]:.4f}" if primary is not None else "–"
        lines.append(f"| {_code(entry.key, cell=True)} | {_code(entry.gate, cell=True)} | {value} | "
                     f"{_cell('; '.join(entry.gate_failures)) or '–'} |")
    return [*lines, ""]


def _failed(failed: list[CaseEntry], links: Links) -> list[str]:
    anchors = _anchors([case.id for case in failed[:CASE_LIMIT]])
    lines = ["### Failed", "", "| case | what failed | report |", "|---|---|---|"]
    for case in failed[:CASE_LIMIT]:
        checks = ", ".join(dict.fromkeys(_what(f) for f in case.failures if not f.same_as)) or "before any check"
        lines.append(f"| [{_code(case.id, cell=True)}](#{anchors[case.id]}) | {_cell(checks)} | "
                     f"{_report_link(links, links.case(case.id), 'open').replace('|', '%7C')} |")
    lines.append("")
    budget = DIFF_BUDGET
    for case in failed[:CASE_LIMIT]:
        body, label = _body(case)
        body, _ = cut_text(body, DIFF_LIMIT)
        size = len(body.encode("utf-8"))
        lines += [f'<a id="{anchors[case.id]}"></a>', "", f"#### {_code(case.id)}", ""]
        items = [_failure_line(f) for f in case.failures if not f.same_as]
        items += [f"- {_fix(fix)}" for fix in case.fixes]
        if case.live is not None:
            live = case.live
            items.append(f"- live: {live.passes} of {live.runs} runs passed ({live.pass_rate:.0%}, "
                         f"minimum {live.min_pass_rate:.0%})")
        lines += [*items, ""] if items else []
        lines += [f"In the HTML report: {_report_link(links, links.case(case.id), 'open this case')}", ""]
        if size > budget:
            lines += [f"<details><summary>{label} left out</summary>", "",
                      "The summary spent its space on the cases above; the report has it.", "", "</details>", ""]
            continue
        budget -= size
        fence = "`" * max(3, _longest_ticks(body) + 1)
        lines += [f"<details><summary>{label}</summary>", "", f"{fence}{'diff' if label == 'diff' else ''}",
                  body.rstrip(), fence, "", "</details>", ""]
    if len(failed) > CASE_LIMIT:
        lines += [f"… and {len(failed) - CASE_LIMIT} more failing cases: the HTML report lists them all.", ""]
    return lines


def _body(case: CaseEntry) -> tuple[str, str]:
    """What a failing case's collapsed block holds: its diffs, else what pytest reported (a case
    that failed before any check), else its messages; and the block's label."""
    diffs = [f.diff for f in case.failures if f.diff and not f.same_as]
    if diffs:
        return "\n".join(diff.rstrip("\n") for diff in diffs), "diff"
    if case.reason:
        return case.reason, "what pytest reported"
    return "\n".join(f.message for f in case.failures), "messages"


def _what(failure: FailureEntry) -> str:
    """A failure in a few words: its check, and the field it checked when that says more."""
    return failure.check if failure.field in ("", failure.check) else f"{failure.check} {failure.field}"


def _failure_line(failure: FailureEntry) -> str:
    line = f"- {_code(failure.check)} {_code(failure.place)}"
    if failure.message:
        line += f": {_inline(failure.message)}"
    if failure.fix:
        line += f" (fix: {_fix(failure.fix)})"
    if failure.also:
        line += f"; the same change shows up in {_code(places(failure.also))}"
    return line


def _fix(text: str) -> str:
    """A fix as the summary shows it: its words and each command in code spans of their own, so
    that a command is copied whole, as it runs."""
    words = [part.strip(" ,;") for part, _ in spans(" ".join(text.split()))]
    return " ".join(_code(part) for part in words if part)


def _anchors(ids: list[str]) -> dict[str, str]:
    """An HTML id per case, unique even when two ids differ only in what the slug drops."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for case_id in ids:
        base = "rag-core-case-" + (re.sub(r"[^a-z0-9_-]+", "-", case_id.lower()).strip("-") or "case")
        slug, number = base, 2
        while slug in taken:
            slug, number = f"{base}-{number}", number + 1
        taken.add(slug)
        out[case_id] = slug
    return out


def _code(text: str, cell: bool = False) -> str:
    """``text`` as a code span: fenced by more backticks than it holds (a table cell's bars escaped,
    which GitHub reads inside a code span too). Nothing inside is markdown; an empty text is none."""
    if not text:
        return ""
    ticks = "`" * (_longest_ticks(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    span = f"{ticks}{pad}{text}{pad}{ticks}"
    return span.replace("|", "\\|") if cell else span


def code_cell(text: str) -> str:
    """``text`` as a code span in a table cell."""
    return _code(text, cell=True)


def _longest_ticks(text: str) -> int:
    """The longest run of backticks in ``text``: a fence or a code span around it needs one more."""
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def _inline(text: str) -> str:
    """A message on one line, as a code span: its first line, bounded (the report has it whole)."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    first = (first[:300] + "…") if len(first) > 300 else first
    return _code(first)


def _cell(text: str) -> str:
    return _inline(text).replace("|", "\\|")
