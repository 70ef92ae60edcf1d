"""What a run record holds, as dataclasses, and their JSON form (the only place that knows it).

A record is read back by later versions of rag-core (``rag-core report --compare`` an old run),
so readers are lenient: a field a record lacks takes its default. A record of a newer schema
than this code knows is refused with a clear message instead of being misread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

SCHEMA_VERSION = 1

Status = Literal["passed", "failed", "skipped", "new", "updated"]
# a case "passes" in every status but these two: a new or updated golden is the run succeeding
NOT_PASSING = ("failed", "skipped")


class RecordError(ValueError):
    """A file is not a run record this version can read; the message names the file and the cause."""


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

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"check": self.check, "source": self.source, "where": self.where, "field": self.field}
        out |= _present(message=self.message, fix=self.fix, label=self.label, diff=self.diff,
                        truncated=self.truncated, withheld=self.withheld)
        if self.has_values:  # None, "" and False are values a check compares: kept as they are
            out["golden"], out["observed"] = self.golden, self.observed
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FailureEntry:
        return cls(check=data.get("check", ""), source=data.get("source", ""), where=data.get("where", ""),
                   field=data.get("field", ""), message=data.get("message", ""), fix=data.get("fix"),
                   label=data.get("label"), has_values="golden" in data or "observed" in data,
                   golden=data.get("golden"), observed=data.get("observed"), diff=data.get("diff", ""),
                   truncated=dict(data.get("truncated", {})), withheld=list(data.get("withheld", [])))

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
    def from_json(cls, data: dict[str, Any]) -> LiveRepeat:
        return cls(repeat=int(data.get("repeat", 0)), passed=bool(data.get("passed", False)),
                   seconds=float(data.get("seconds", 0.0)), tokens=int(data.get("tokens", 0)),
                   retries=int(data.get("retries", 0)),
                   failures=[FailureEntry.from_json(f) for f in data.get("failures", [])], cost=Cost.from_json(data))


@dataclass(frozen=True)
class Cost:
    """What runs' calls cost at list prices (``usd`` None: not priced, genai-prices missing or a
    record from before prices), and the models no price was found for."""

    usd: float | None = None
    unpriced: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return ({} if self.usd is None else {"cost_usd": self.usd}) | _present(unpriced=list(self.unpriced))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Cost:
        usd = data.get("cost_usd")
        return cls(None if usd is None else float(usd), tuple(str(m) for m in data.get("unpriced", ())))


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

    def to_json(self) -> dict[str, Any]:
        return {"runs": self.runs, "passes": self.passes, "pass_rate": round(self.pass_rate, 6),
                "min_pass_rate": self.min_pass_rate, "p50": round(self.p50, 4), "p95": round(self.p95, 4),
                "tokens": self.tokens, "ok": self.ok,
                **_present(tokens_total=self.tokens_total, repeats=[r.to_json() for r in self.repeats]),
                **self.cost.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LiveSummary:
        return cls(runs=int(data.get("runs", 0)), passes=int(data.get("passes", 0)),
                   pass_rate=float(data.get("pass_rate", 0.0)), min_pass_rate=float(data.get("min_pass_rate", 0.0)),
                   p50=float(data.get("p50", 0.0)), p95=float(data.get("p95", 0.0)),
                   tokens=int(data.get("tokens", 0)), ok=bool(data.get("ok", False)),
                   tokens_total=int(data.get("tokens_total", 0)),
                   repeats=[LiveRepeat.from_json(r) for r in data.get("repeats", [])], cost=Cost.from_json(data))


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

    @property
    def passing(self) -> bool:
        return self.status not in NOT_PASSING

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "status": self.status, "seconds": round(self.seconds, 4)}
        out |= _present(tokens=self.tokens, recorded=self.recorded, stale=self.stale,
                        failures=[f.to_json() for f in self.failures], fixes=self.fixes, reason=self.reason,
                        live=self.live.to_json() if self.live else None)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CaseEntry:
        live = data.get("live")
        return cls(id=data["id"], status=data.get("status", "passed"), seconds=float(data.get("seconds", 0.0)),
                   tokens=int(data.get("tokens", 0)), recorded=bool(data.get("recorded", False)),
                   stale=bool(data.get("stale", False)),
                   failures=[FailureEntry.from_json(f) for f in data.get("failures", [])],
                   fixes=list(data.get("fixes", [])), reason=data.get("reason", ""),
                   live=LiveSummary.from_json(live) if live else None)


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
    def from_json(cls, data: dict[str, Any]) -> QueryEntry:
        return cls(id=str(data["id"]), text=data.get("text", ""), metrics=dict(data.get("metrics", {})),
                   judged=dict(data.get("judged", {})), top=[(str(d), g) for d, g in data.get("top", [])])


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
    def from_json(cls, data: dict[str, Any]) -> RetrieverEntry:
        return cls(suite=data["suite"], retriever=data["retriever"], gate=data.get("gate", "pass"),
                   gate_failures=list(data.get("gate_failures", [])), thresholds=dict(data.get("thresholds", {})),
                   metrics=dict(data.get("metrics", {})), index_seconds=float(data.get("index_seconds", 0.0)),
                   query_ms_p50=float(data.get("query_ms_p50", 0.0)), query_ms_p95=float(data.get("query_ms_p95", 0.0)),
                   recall_curve=list(data.get("recall_curve", [])),
                   queries=[QueryEntry.from_json(q) for q in data.get("queries", [])],
                   seconds=float(data.get("seconds", 0.0)))


@dataclass(frozen=True)
class LateAttempt:
    """A request or connection made by code a case left running (a thread it started, a job it
    submitted) after the case had ended: refused, and no other case's."""

    case: str  # the case that had ended
    attempt: str  # what was sent or reached for, where, by which client

    def to_json(self) -> dict[str, Any]:
        return {"case": self.case, "attempt": self.attempt}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LateAttempt:
        return cls(case=str(data.get("case", "")), attempt=str(data.get("attempt", "")))


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

    def to_json(self) -> dict[str, Any]:
        return {"record_mode": self.record_mode, "emulator": self.emulator, "live": self.live, "repeat": self.repeat,
                "update_goldens": self.update_goldens, "args": self.args}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunOptions:
        return cls(record_mode=data.get("record_mode", "none"), emulator=bool(data.get("emulator", False)),
                   live=bool(data.get("live", False)), repeat=int(data.get("repeat", 1)),
                   update_goldens=bool(data.get("update_goldens", False)), args=list(data.get("args", [])))


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
        if not isinstance(data["schema"], int) or data["schema"] > SCHEMA_VERSION:
            raise RecordError(f"{source}: run record schema {data['schema']!r} is newer than this rag-core reads "
                              f"({SCHEMA_VERSION}); upgrade rag-core to read it")
        git = data.get("git")
        try:
            return cls(schema=data["schema"], id=str(data["id"]), started=data.get("started", ""),
                       seconds=float(data.get("seconds", 0.0)), exit_status=int(data.get("exit_status", 0)),
                       git=GitState(str(git["commit"]), bool(git.get("dirty"))) if git else None,
                       options=RunOptions.from_json(data.get("options", {})),
                       cases=[CaseEntry.from_json(c) for c in data.get("cases", [])],
                       retrieval=[RetrieverEntry.from_json(r) for r in data.get("retrieval", [])],
                       notes=list(data.get("notes", [])),
                       late=[LateAttempt.from_json(each) for each in data.get("late", [])])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise RecordError(f"{source}: a malformed run record ({type(exc).__name__}: {exc})") from None


def _present(**values: Any) -> dict[str, Any]:
    """The values that say something: a record leaves out empty lists, empty text, False and None."""
    return {k: v for k, v in values.items() if v not in (None, "", [], {}, False, 0)}
