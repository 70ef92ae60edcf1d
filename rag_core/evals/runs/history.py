"""The last runs as series: the pass rate, and each gated metric of each retriever.

A retriever's gated metrics are its primary metric (the one its baseline gate and significance
test use) and every metric it has a threshold for.

Only full replays measure the pass rate of one thing over time: a recording, a ``--live`` run, an
``--update-goldens`` or ``--accept`` run, a run of a selection (``--case``, ``-k``, a test's node id, ``--lf``) or
a run cut short (``-x``, Ctrl-C) counts other cases, or counts them differently, and drawn on one
line with replays it makes the line zigzag without meaning. Each point says which kind of run it
is; the pass rate is drawn for full replays only. A retriever's metrics measure it whole in any
run that ran it, so they are drawn for every run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from rag_core.evals.runs.schema import RunOptions, RunRecord
from rag_core.evals.runs.tally import tally

RunKind = Literal["replay", "selection", "recording", "live", "update-goldens", "accept", "cut short"]
# what the kinds of run are called where the page names them
KIND_WORDS: dict[str, str] = {"replay": "full replay", "selection": "replay of a selection",
                              "recording": "recording", "live": "live run", "update-goldens": "--update-goldens run",
                              "accept": "--accept run", "cut short": "cut short"}
# pytest's exit statuses of a session that ran what it collected to its end: 0 all passed, 1 some failed
_RAN_TO_ITS_END = (0, 1)
# options that choose some of the tests (or stop before the end): a run given one is no full replay
_SELECTING = ("--case", "-k", "-m", "--lf", "--last-failed", "--sw", "--stepwise", "--stepwise-skip", "--deselect",
              "--ignore", "--ignore-glob", "-x", "--exitfirst", "--maxfail")
_FLAGS = set("vqxsl")  # pytest's short options that take no value, so that they combine (-vx)


@dataclass
class HistoryPoint:
    id: str
    started: str
    commit: str | None
    dirty: bool
    pass_rate: float | None
    cases: int
    failed: int
    kind: RunKind = "replay"
    metrics: dict[str, float] = field(default_factory=dict)  # series name -> value in this run

    @property
    def comparable(self) -> bool:
        """Whether its pass rate belongs on the line of full replays."""
        return self.kind == "replay"


def series_name(suite: str, retriever: str, metric: str) -> str:
    return f"{suite}/{retriever} {metric}"


def run_kind(record: RunRecord) -> RunKind:
    """Which kind of run ``record`` is, for the history: only a ``replay`` is a full replay."""
    options = record.options
    if options.live:
        return "live"
    if options.record_mode != "none":
        return "recording"
    if options.update_goldens:
        return "update-goldens"
    if options.accept:
        return "accept"
    if record.exit_status not in _RAN_TO_ITS_END:
        return "cut short"
    return "selection" if selects(options) else "replay"


def selects(options: RunOptions) -> bool:
    """Whether the command line chose some tests only: a selecting option (``--case x``,
    ``--case=x``, ``-kx``), or a test's node id (``evals/test_goldens.py::test_golden``)."""
    for arg in options.args:
        name = arg.split("=", 1)[0]
        if name in _SELECTING or "::" in arg:
            return True
        letters = arg[1:] if arg.startswith("-") and not arg.startswith("--") else ""
        if len(letters) > 1 and (letters[0] in "km" or (set(letters) <= _FLAGS and "x" in letters)):
            return True  # a short option glued to its value (-kpad_thai), or -x among other flags (-vx)
    return False


def history(records: list[RunRecord]) -> list[HistoryPoint]:
    """One point per record, in the order given (oldest first)."""
    points = []
    for record in records:
        counts = tally(record)
        point = HistoryPoint(record.id, record.started, record.git.commit if record.git else None,
                             bool(record.git and record.git.dirty), counts.pass_rate, counts.cases, counts.failed,
                             run_kind(record))
        for retriever in record.retrieval:
            gated = [m for m in [retriever.primary, *retriever.thresholds] if m in retriever.metrics]
            for metric in dict.fromkeys(gated):
                point.metrics[series_name(retriever.suite, retriever.retriever, metric)] = retriever.metrics[metric]
        points.append(point)
    return points


def series(points: list[HistoryPoint]) -> list[str]:
    """Every metric series any point has, in the order they first appear."""
    return list(dict.fromkeys(name for point in points for name in point.metrics))
