"""What a run record holds, as dataclasses, and their JSON form (the only place that knows it).

A record is read back by later versions of rag-core (``rag-core report --compare`` an old run),
so readers are lenient: a field a record lacks (or holds null in) takes its default. They are
also total: a field of the wrong kind (an object where a case id belongs, text where a number
does) is a ``RecordError`` naming where it is (``cases[3].id``), never a value the report, the
comparison or the merge then trips over. A record of a newer schema than this code knows is
refused with a clear message instead of being misread.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping, TypeVar, get_args

SCHEMA_VERSION = 1

Status = Literal["passed", "failed", "skipped", "new", "updated"]
STATUSES: tuple[str, ...] = get_args(Status)
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
    def from_json(cls, data: Mapping[str, Any]) -> FailureEntry:
        label = data.get("label")
        if label is not None and not isinstance(label, str):
            label = _texts(data, "label")
        return cls(check=_text(data, "check"), source=_text(data, "source"), where=_text(data, "where"),
                   field=_text(data, "field"), message=_text(data, "message"), fix=_optional_text(data, "fix"),
                   label=label, has_values="golden" in data or "observed" in data,
                   golden=data.get("golden"), observed=data.get("observed"), diff=_text(data, "diff"),
                   truncated=_wholes(data, "truncated"), withheld=_texts(data, "withheld"))

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
        return cls(repeat=_whole(data, "repeat"), passed=_flag(data, "passed"), seconds=_number(data, "seconds"),
                   tokens=_whole(data, "tokens"), retries=_whole(data, "retries"),
                   failures=_each(data, "failures", FailureEntry.from_json), cost=Cost.from_json(data))


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
        return cls(None if usd is None else _number(data, "cost_usd"), tuple(_texts(data, "unpriced")))


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
    def from_json(cls, data: Mapping[str, Any]) -> LiveSummary:
        return cls(runs=_whole(data, "runs"), passes=_whole(data, "passes"), pass_rate=_number(data, "pass_rate"),
                   min_pass_rate=_number(data, "min_pass_rate"), p50=_number(data, "p50"), p95=_number(data, "p95"),
                   tokens=_whole(data, "tokens"), ok=_flag(data, "ok"), tokens_total=_whole(data, "tokens_total"),
                   repeats=_each(data, "repeats", LiveRepeat.from_json), cost=Cost.from_json(data))


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
    def from_json(cls, data: Mapping[str, Any]) -> CaseEntry:
        status = _text(data, "status", "passed")
        if status not in STATUSES:
            raise FieldError("status", f"{_shown(status)} is none of {', '.join(STATUSES)}")
        live = _object(data, "live")
        return cls(id=_required_text(data, "id"), status=status,  # type: ignore[arg-type]  (checked above)
                   seconds=_number(data, "seconds"), tokens=_whole(data, "tokens"), recorded=_flag(data, "recorded"),
                   stale=_flag(data, "stale"), failures=_each(data, "failures", FailureEntry.from_json),
                   fixes=_texts(data, "fixes"), reason=_text(data, "reason"),
                   live=_within("live", LiveSummary.from_json, live) if live else None)


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
        return cls(id=_required_text(data, "id"), text=_text(data, "text"), metrics=_numbers(data, "metrics"),
                   judged=_wholes(data, "judged"), top=_ranking(data, "top"))


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
        return cls(suite=_required_text(data, "suite"), retriever=_required_text(data, "retriever"),
                   gate=_text(data, "gate", "pass"),  # type: ignore[arg-type]  (any text shows as it is)
                   gate_failures=_texts(data, "gate_failures"), thresholds=_numbers(data, "thresholds"),
                   metrics=_numbers(data, "metrics"), index_seconds=_number(data, "index_seconds"),
                   query_ms_p50=_number(data, "query_ms_p50"), query_ms_p95=_number(data, "query_ms_p95"),
                   recall_curve=_number_list(data, "recall_curve"),
                   queries=_each(data, "queries", QueryEntry.from_json), seconds=_number(data, "seconds"))


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
        return cls(case=_text(data, "case"), attempt=_text(data, "attempt"))


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
    def from_json(cls, data: Mapping[str, Any]) -> RunOptions:
        return cls(record_mode=_text(data, "record_mode", "none"), emulator=_flag(data, "emulator"),
                   live=_flag(data, "live"), repeat=_whole(data, "repeat", 1),
                   update_goldens=_flag(data, "update_goldens"), args=_texts(data, "args"))


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
            raise RecordError(f"{source}: not a rag-core run record (its schema is {_shown(schema)}, not a version "
                              "number)")
        if schema > SCHEMA_VERSION:
            raise RecordError(f"{source}: run record schema {schema} is newer than this rag-core reads "
                              f"({SCHEMA_VERSION}); upgrade rag-core to read it")
        try:
            git = _object(data, "git")
            options = _object(data, "options")
            return cls(schema=schema, id=_required_text(data, "id"), started=_text(data, "started"),
                       seconds=_number(data, "seconds"), exit_status=_whole(data, "exit_status"),
                       git=_within("git", _git_state, git) if git else None,
                       options=_within("options", RunOptions.from_json, options or {}),
                       cases=_each(data, "cases", CaseEntry.from_json),
                       retrieval=_each(data, "retrieval", RetrieverEntry.from_json),
                       notes=_texts(data, "notes"), late=_each(data, "late", LateAttempt.from_json))
        except FieldError as exc:
            raise RecordError(f"{source}: not a run record rag-core can read: {exc}") from None


def _git_state(data: Mapping[str, Any]) -> GitState:
    return GitState(_required_text(data, "commit"), _flag(data, "dirty"))


def _present(**values: Any) -> dict[str, Any]:
    """The values that say something: a record leaves out empty lists, empty text, False and None."""
    return {k: v for k, v in values.items() if v not in (None, "", [], {}, False, 0)}


# ------------------------------------------------------------------ typed fields of JSON data
# Each reader takes a field of a JSON object, or its default when the field is absent or null,
# and raises FieldError when the field holds another kind of value: a record edited by hand, or
# written by something else, is refused naming the field instead of failing later, elsewhere.

T = TypeVar("T")
# the largest count the page's script reads exactly (a JavaScript number)
_LARGEST_WHOLE = 2**53


class FieldError(RecordError):
    """A field holding the wrong kind of value; ``path`` says where (``cases[3].id``)."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem

    def within(self, prefix: str) -> FieldError:
        return FieldError(prefix + (self.path if self.path.startswith("[") else f".{self.path}"), self.problem)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    return "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) else type(value).__name__


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _wrong(key: str, wanted: str, value: Any) -> FieldError:
    return FieldError(key, f"should be {wanted}, not {_kind(value)} ({_shown(value)})")


def _within(key: str, read: Callable[[Any], T], value: Any) -> T:
    try:
        return read(value)
    except FieldError as exc:
        raise exc.within(key) from None


def _required_text(data: Mapping[str, Any], key: str) -> str:
    if data.get(key) is None:
        raise FieldError(key, "is missing")
    return _text(data, key)


def _text(data: Mapping[str, Any], key: str, default: str = "") -> str:
    value = data.get(key)
    if value is None:
        return default
    if not isinstance(value, str):
        raise _wrong(key, "text", value)
    return value


def _optional_text(data: Mapping[str, Any], key: str) -> str | None:
    return None if data.get(key) is None else _text(data, key)


def _as_number(key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _wrong(key, "a number", value)
    try:
        number = float(value)
    except OverflowError:  # an integer too large for a float
        number = math.inf
    if not math.isfinite(number):
        raise FieldError(key, f"should be a finite number, not {_shown(value)}")
    return number


def _number(data: Mapping[str, Any], key: str, default: float = 0.0) -> float:
    value = data.get(key)
    return default if value is None else _as_number(key, value)


def _as_whole(key: str, value: Any) -> int:
    number = int(_as_number(key, value))
    if abs(number) > _LARGEST_WHOLE:
        raise FieldError(key, f"should be a count, not {_shown(value)}")
    return number


def _whole(data: Mapping[str, Any], key: str, default: int = 0) -> int:
    value = data.get(key)
    return default if value is None else _as_whole(key, value)


def _flag(data: Mapping[str, Any], key: str, default: bool = False) -> bool:
    value = data.get(key)
    if value is None:
        return default
    if not isinstance(value, (bool, int)):
        raise _wrong(key, "true or false", value)
    return bool(value)


def _list(data: Mapping[str, Any], key: str) -> list[Any]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):  # a tuple: the harness hands its own data over in process
        raise _wrong(key, "a list", value)
    return list(value)


def _mapping(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _wrong(key, "an object", value)
    return value


def _object(data: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    return _mapping(data, key) if data.get(key) is not None else None


def _texts(data: Mapping[str, Any], key: str) -> list[str]:
    items = _list(data, key)
    for number, item in enumerate(items):
        if not isinstance(item, str):
            raise _wrong(f"{key}[{number}]", "text", item)
    return list(items)


def _number_list(data: Mapping[str, Any], key: str) -> list[float]:
    return [_as_number(f"{key}[{number}]", item) for number, item in enumerate(_list(data, key))]


def _numbers(data: Mapping[str, Any], key: str) -> dict[str, float]:
    return {name: _as_number(f"{key}.{name}", value) for name, value in _mapping(data, key).items()}


def _wholes(data: Mapping[str, Any], key: str) -> dict[str, int]:
    return {name: _as_whole(f"{key}.{name}", value) for name, value in _mapping(data, key).items()}


def _ranking(data: Mapping[str, Any], key: str) -> list[tuple[str, int | None]]:
    """A query's top documents: [doc id, its grade or null] pairs."""
    out: list[tuple[str, int | None]] = []
    for number, item in enumerate(_list(data, key)):
        where = f"{key}[{number}]"
        if not (isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str)):
            raise _wrong(where, "a [document id, grade] pair", item)
        out.append((item[0], None if item[1] is None else _as_whole(f"{where}[1]", item[1])))
    return out


def _each(data: Mapping[str, Any], key: str, read: Callable[[Mapping[str, Any]], T]) -> list[T]:
    """The list ``key`` of objects, each read by ``read``; a wrong one named by its place."""
    out = []
    for number, item in enumerate(_list(data, key)):
        where = f"{key}[{number}]"
        if not isinstance(item, Mapping):
            raise _wrong(where, "an object", item)
        out.append(_within(where, read, item))
    return out
