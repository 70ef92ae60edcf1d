"""What a run record holds, as dataclasses, and their JSON form (the only place that knows it).

A record is read back by later versions of rag-core (``rag-core report --compare`` an old run),
so readers are lenient: a field a record lacks (or holds null in) takes its default. They are
also total: a field of the wrong kind (an object where a case id belongs, text where a number
does) is a ``RecordError`` naming where it is (``cases[3].id``), never a value the report, the
comparison or the merge then trips over. A record of a newer schema than this code knows is
refused with a clear message instead of being misread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, get_args

from rag_core.evals.runs import fields as read
from rag_core.evals.runs.fields import FieldError, RecordError  # noqa: F401  (RecordError: read from here too)

SCHEMA_VERSION = 1

Status = Literal["passed", "failed", "skipped", "new", "updated"]
STATUSES: tuple[str, ...] = get_args(Status)
# a case "passes" in every status but these two: a new or updated golden is the run succeeding
NOT_PASSING = ("failed", "skipped")


@dataclass
class FailureEntry:
    """One ``harness.failure.Failure`` as the record keeps it: its values JSON-able and bounded."""

    check: str
    source: str
    where: str
    field: str
    message: str = ""
    fix: str | None = None
    label: str | list[str] | None = None
    has_values: bool = False  # False: the failure compares no values (a limit, a missing file)
    golden: Any = None
    observed: Any = None
    diff: str = ""
    # field ("golden", "observed", "diff", "message") -> its full size in bytes, when it was cut
    # to a bound; a cut value is then the head of its YAML text, a string
    truncated: dict[str, int] = field(default_factory=dict)
    withheld: list[str] = field(default_factory=list)  # fields left out: they looked like a credential
    # one change in several checks: the places of the others, on the first; on each other, the first's
    also: list[str] = field(default_factory=list)
    same_as: str = ""

    @property
    def place(self) -> str:
        return f"{self.where}:{self.field}" if self.where else self.field

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"check": self.check, "source": self.source, "where": self.where, "field": self.field}
        out |= _present(message=self.message, fix=self.fix, label=self.label, diff=self.diff,
                        truncated=self.truncated, withheld=self.withheld, also=self.also, same_as=self.same_as)
        if self.has_values:  # None, "" and False are values a check compares: kept as they are
            out["golden"], out["observed"] = self.golden, self.observed
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FailureEntry:
        label = data.get("label")
        if label is not None and not isinstance(label, str):
            label = read.texts(data, "label")
        return cls(check=read.text(data, "check"), source=read.text(data, "source"), where=read.text(data, "where"),
                   field=read.text(data, "field"), message=read.text(data, "message"), fix=read.optional_text(data, "fix"),
                   label=label, has_values="golden" in data or "observed" in data,
                   golden=data.get("golden"), observed=data.get("observed"), diff=read.text(data, "diff"),
                   truncated=read.wholes(data, "truncated"), withheld=read.texts(data, "withheld"),
                   also=read.texts(data, "also"), same_as=read.text(data, "same_as"))

    def fingerprint(self) -> tuple[str, ...]:
        """What makes two failures the same failure (run against run)."""
        return (self.check, self.where, self.field, self.message, self.diff)


@dataclass
class LiveRepeat:
    """One run of a case under ``--live --repeat N``: its verdict, time, tokens, retries, failures."""

    repeat: int  # from 0, in the order the runs were made
    passed: bool
    seconds: float = 0.0
    tokens: int = 0
    retries: int = 0  # provider calls retried in this run
    failures: list[FailureEntry] = field(default_factory=list)
    cost: Cost = field(default_factory=lambda: Cost())

    def to_json(self) -> dict[str, Any]:
        return {"repeat": self.repeat, "passed": self.passed, "seconds": round(self.seconds, 4),
                **_present(tokens=self.tokens, retries=self.retries, failures=[f.to_json() for f in self.failures]),
                **self.cost.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LiveRepeat:
        return cls(repeat=read.whole(data, "repeat"), passed=read.flag(data, "passed"), seconds=read.number(data, "seconds"),
                   tokens=read.whole(data, "tokens"), retries=read.whole(data, "retries"),
                   failures=read.each(data, "failures", FailureEntry.from_json), cost=Cost.from_json(data))


@dataclass(frozen=True)
class Cost:
    """What runs' calls cost at list prices (``usd`` None: not priced, genai-prices missing or a
    record from before prices), and the models no price was found for."""

    usd: float | None = None
    unpriced: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return ({} if self.usd is None else {"cost_usd": self.usd}) | _present(unpriced=list(self.unpriced))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Cost:
        usd = data.get("cost_usd")
        return cls(None if usd is None else read.number(data, "cost_usd"), tuple(read.texts(data, "unpriced")))


@dataclass
class LiveSummary:
    """A case's runs under ``--live``: pass rate against its minimum, latency, tokens, and each run
    (records written before runs were kept have none)."""

    runs: int
    passes: int
    pass_rate: float
    min_pass_rate: float
    p50: float
    p95: float
    tokens: int  # the median run's
    ok: bool
    tokens_total: int = 0  # every run's together
    repeats: list[LiveRepeat] = field(default_factory=list)  # in run order; at most bounds.REPEAT_LIMIT
    cost: Cost = field(default_factory=lambda: Cost())  # every run's together
    retries: int = 0  # runs made again after the provider pushed back
    resumed: int = 0  # runs taken from a session that was cut short (--resume)

    def to_json(self) -> dict[str, Any]:
        return {"runs": self.runs, "passes": self.passes, "pass_rate": round(self.pass_rate, 6),
                "min_pass_rate": self.min_pass_rate, "p50": round(self.p50, 4), "p95": round(self.p95, 4),
                "tokens": self.tokens, "ok": self.ok,
                **_present(tokens_total=self.tokens_total, repeats=[r.to_json() for r in self.repeats],
                           retries=self.retries, resumed=self.resumed),
                **self.cost.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LiveSummary:
        return cls(runs=read.whole(data, "runs"), passes=read.whole(data, "passes"), pass_rate=read.number(data, "pass_rate"),
                   min_pass_rate=read.number(data, "min_pass_rate"), p50=read.number(data, "p50"), p95=read.number(data, "p95"),
                   tokens=read.whole(data, "tokens"), ok=read.flag(data, "ok"), tokens_total=read.whole(data, "tokens_total"),
                   repeats=read.each(data, "repeats", LiveRepeat.from_json), cost=Cost.from_json(data),
                   retries=read.whole(data, "retries"), resumed=read.whole(data, "resumed"))


@dataclass
class CaseEntry:
    id: str
    status: Status
    seconds: float = 0.0
    tokens: int = 0
    recorded: bool = False
    stale: bool = False  # its cassette no longer matches what the agent sends
    failures: list[FailureEntry] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)  # commands that fix the failures
    # why it was skipped, or what failed when no check ran (a case that does not load, a refusal)
    reason: str = ""
    live: LiveSummary | None = None
    golden: str = ""  # the golden the run wrote: "new" or "updated" (a failed case's too), or none
    cut_short: bool = False  # committed while the session was cut short, before its test reported it
    # its model calls reported no token usage: "stream" (a stream not asked for it) or "response"
    no_usage: str = ""
    selector: str = ""  # its test's node id: what selects it on a pytest command line
    accept: bool = False  # what failed, or is stale, is what --accept changes
    accepted: bool = False  # --accept wrote its files
    written: list[str] = field(default_factory=list)  # the files its run wrote (cassettes, golden)

    @property
    def passing(self) -> bool:
        return self.status not in NOT_PASSING

    @property
    def wrote(self) -> str:
        """The golden the run wrote ("new", "updated" or ""), as a record older than ``golden`` says it too."""
        return self.golden or (self.status if self.status in ("new", "updated") else "")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "status": self.status, "seconds": round(self.seconds, 4)}
        out |= _present(tokens=self.tokens, recorded=self.recorded, stale=self.stale,
                        failures=[f.to_json() for f in self.failures], fixes=self.fixes, reason=self.reason,
                        live=self.live.to_json() if self.live else None, golden=self.golden,
                        cut_short=self.cut_short, no_usage=self.no_usage, selector=self.selector, accept=self.accept,
                        accepted=self.accepted, written=self.written)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CaseEntry:
        status = read.text(data, "status", "passed")
        if status not in STATUSES:
            raise FieldError("status", f"{read.shown(status)} is none of {', '.join(STATUSES)}")
        live = read.optional_mapping(data, "live")
        return cls(id=read.required_text(data, "id"), status=status,  # type: ignore[arg-type]  (checked above)
                   seconds=read.number(data, "seconds"), tokens=read.whole(data, "tokens"), recorded=read.flag(data, "recorded"),
                   stale=read.flag(data, "stale"), failures=read.each(data, "failures", FailureEntry.from_json),
                   fixes=read.texts(data, "fixes"), reason=read.text(data, "reason"),
                   live=read.within("live", LiveSummary.from_json, live) if live else None,
                   golden=read.text(data, "golden"), cut_short=read.flag(data, "cut_short"),
                   no_usage=read.text(data, "no_usage"), selector=read.text(data, "selector"),
                   accept=read.flag(data, "accept"), accepted=read.flag(data, "accepted"),
                   written=read.texts(data, "written"))


@dataclass
class QueryEntry:
    """One judged query of a retriever's run: its scores, its judgements, what came back first."""

    id: str
    text: str = ""
    metrics: dict[str, float] = field(default_factory=dict)
    judged: dict[str, int] = field(default_factory=dict)  # doc id -> grade (0: judged not relevant)
    top: list[tuple[str, int | None]] = field(default_factory=list)  # the top k: doc id, its grade if judged

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, **_present(text=self.text), "metrics": self.metrics, "judged": self.judged,
                "top": [[doc, grade] for doc, grade in self.top]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> QueryEntry:
        return cls(id=read.required_text(data, "id"), text=read.text(data, "text"), metrics=read.numbers(data, "metrics"),
                   judged=read.wholes(data, "judged"), top=read.ranking(data, "top"))


@dataclass
class RetrieverEntry:
    suite: str
    retriever: str
    gate: Literal["pass", "FAIL", "error", "skipped"] = "pass"
    gate_failures: list[str] = field(default_factory=list)
    thresholds: dict[str, float] = field(default_factory=dict)  # the metrics gated on a floor
    metrics: dict[str, float] = field(default_factory=dict)  # in the suite's order: the first is its primary
    index_seconds: float = 0.0
    query_ms_p50: float = 0.0
    query_ms_p95: float = 0.0
    recall_curve: list[float] = field(default_factory=list)  # recall@k for k = 1..depth
    queries: list[QueryEntry] = field(default_factory=list)
    seconds: float = 0.0  # the test's own time

    @property
    def key(self) -> str:
        return f"{self.suite}/{self.retriever}"

    @property
    def primary(self) -> str | None:
        return next(iter(self.metrics), None)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"suite": self.suite, "retriever": self.retriever, "gate": self.gate}
        out |= _present(gate_failures=self.gate_failures, thresholds=self.thresholds)
        out |= {"metrics": self.metrics, "index_seconds": round(self.index_seconds, 4),
                "query_ms_p50": round(self.query_ms_p50, 4), "query_ms_p95": round(self.query_ms_p95, 4),
                "seconds": round(self.seconds, 4), "recall_curve": self.recall_curve,
                "queries": [q.to_json() for q in self.queries]}
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RetrieverEntry:
        return cls(suite=read.required_text(data, "suite"), retriever=read.required_text(data, "retriever"),
                   gate=read.text(data, "gate", "pass"),  # type: ignore[arg-type]  (any text shows as it is)
                   gate_failures=read.texts(data, "gate_failures"), thresholds=read.numbers(data, "thresholds"),
                   metrics=read.numbers(data, "metrics"), index_seconds=read.number(data, "index_seconds"),
                   query_ms_p50=read.number(data, "query_ms_p50"), query_ms_p95=read.number(data, "query_ms_p95"),
                   recall_curve=read.number_list(data, "recall_curve"),
                   queries=read.each(data, "queries", QueryEntry.from_json), seconds=read.number(data, "seconds"))


@dataclass(frozen=True)
class LateAttempt:
    """A request or connection made by code a case left running (a thread it started, a job it
    submitted) after the case had ended: refused, and no other case's."""

    case: str  # the case that had ended
    attempt: str  # what was sent or reached for, where, by which client

    def to_json(self) -> dict[str, Any]:
        return {"case": self.case, "attempt": self.attempt}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LateAttempt:
        return cls(case=read.text(data, "case"), attempt=read.text(data, "attempt"))


@dataclass
class GitState:
    commit: str
    dirty: bool  # tracked files differ from the commit


@dataclass
class RunOptions:
    record_mode: str = "none"
    emulator: bool = False
    live: bool = False
    repeat: int = 1
    update_goldens: bool = False
    args: list[str] = field(default_factory=list)  # the command line pytest was given
    accept: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"record_mode": self.record_mode, "emulator": self.emulator, "live": self.live, "repeat": self.repeat,
                "update_goldens": self.update_goldens, "args": self.args, **_present(accept=self.accept)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunOptions:
        return cls(record_mode=read.text(data, "record_mode", "none"), emulator=read.flag(data, "emulator"),
                   live=read.flag(data, "live"), repeat=read.whole(data, "repeat", 1),
                   update_goldens=read.flag(data, "update_goldens"), args=read.texts(data, "args"),
                   accept=read.flag(data, "accept"))


@dataclass
class RunRecord:
    id: str
    started: str  # UTC, ISO 8601
    seconds: float = 0.0
    exit_status: int = 0
    git: GitState | None = None
    options: RunOptions = field(default_factory=RunOptions)
    cases: list[CaseEntry] = field(default_factory=list)
    retrieval: list[RetrieverEntry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was left out to keep the record bounded
    late: list[LateAttempt] = field(default_factory=list)
    schema: int = SCHEMA_VERSION

    def to_json(self) -> dict[str, Any]:
        return {"schema": self.schema, "id": self.id, "started": self.started, "seconds": round(self.seconds, 3),
                "exit_status": self.exit_status,
                "git": {"commit": self.git.commit, "dirty": self.git.dirty} if self.git else None,
                "options": self.options.to_json(),
                **_present(notes=self.notes, late=[attempt.to_json() for attempt in self.late]),
                "cases": [c.to_json() for c in self.cases], "retrieval": [r.to_json() for r in self.retrieval]}

    @classmethod
    def from_json(cls, data: Any, source: str = "the record") -> RunRecord:
        if not isinstance(data, dict) or "id" not in data or "schema" not in data:
            raise RecordError(f"{source}: not a rag-core run record (no schema and id)")
        schema = data["schema"]
        if not isinstance(schema, int) or isinstance(schema, bool) or schema < 1:
            raise RecordError(f"{source}: not a rag-core run record (its schema is {read.shown(schema)}, not a version "
                              "number)")
        if schema > SCHEMA_VERSION:
            raise RecordError(f"{source}: run record schema {schema} is newer than this rag-core reads "
                              f"({SCHEMA_VERSION}); upgrade rag-core to read it")
        try:
            git = read.optional_mapping(data, "git")
            options = read.optional_mapping(data, "options")
            return cls(schema=schema, id=read.required_text(data, "id"), started=read.text(data, "started"),
                       seconds=read.number(data, "seconds"), exit_status=read.whole(data, "exit_status"),
                       git=read.within("git", _git_state, git) if git else None,
                       options=read.within("options", RunOptions.from_json, options or {}),
                       cases=read.each(data, "cases", CaseEntry.from_json),
                       retrieval=read.each(data, "retrieval", RetrieverEntry.from_json),
                       notes=read.texts(data, "notes"), late=read.each(data, "late", LateAttempt.from_json))
        except FieldError as exc:
            raise RecordError(f"{source}: not a run record rag-core can read: {exc}") from None


def _git_state(data: Mapping[str, Any]) -> GitState:
    return GitState(read.required_text(data, "commit"), read.flag(data, "dirty"))


def _present(**values: Any) -> dict[str, Any]:
    """The values that say something: a record leaves out empty lists, empty text, False and None."""
    return {k: v for k, v in values.items() if v not in (None, "", [], {}, False, 0)}
