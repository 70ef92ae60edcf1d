"""Golden case files: what to run, what the emulator answers, what must come out.

Layout (one case = two files side by side, so reviewers see hand-written intent apart
from machine-written snapshots):

* ``<id>.yaml`` – the case, written by hand: the agent, its knowledge, the input, the
  scripted provider turns used when recording with the emulator, and optional hand-written
  checks under ``expect`` (output ``contains``/``regex``, tool-call ordering options, an
  expected error).
* ``<id>.golden.yaml`` – the snapshot, written by ``--update-goldens``: system prompt,
  user messages, tools, request bodies, tool calls, references, output and usage.
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator,
                      model_validator)

from rag_core.evals.emulator.script import ScriptEntry
from rag_core.evals.common import validation_messages
from rag_core.evals.common.errors import CaseFileError
from rag_core.evals.common.modes import GOLDEN_SUFFIX
from rag_core.evals.common.paths import shown
from rag_core.evals.common.yaml_read import compose_nodes, line_of, load_bounded, load_with_lines, tab_problem
from rag_core.evals.golden.judges import Metric
from rag_core.providers import ADAPTED_APIS, adapter_of


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def adapter_class(api: str) -> type:
    """The model adapter a case's ``model.api`` names (``rag_core.providers``: each provider's adapters)."""
    return adapter_of(api)


# adapter fields a case may not set through options: model.id sets the id, keys come from the
# environment (never from a file in the repository), and the HTTP clients are the SDK's own
_HARNESS_OWNED = {"id", "api_key", "auth_token", "http_client", "async_http_client", "client", "client_params"}


class ModelSpec(_Strict):
    """Which adapter and model the case talks to, and adapter options (temperature, ...)."""

    api: Literal[ADAPTED_APIS] = "openai-responses"  # type: ignore[valid-type]  (the providers' table)
    id: str = "gpt-5.2"
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _options(self) -> ModelSpec:
        """Options are checked against the adapter's own fields and types at load time, so a
        mistyped option fails before anything is recorded."""
        adapter = adapter_class(self.api)
        known = _adapter_options(adapter)
        for name, value in self.options.items():
            if name not in known:
                close = difflib.get_close_matches(name, known, n=1, cutoff=0.7)
                raise ValueError(f"options.{name}: {adapter.__name__} has no option {name!r} " + (
                    f"(did you mean {close[0]!r}?)" if close else f"(it has: {', '.join(sorted(known))})"))
            try:
                _option_validator(adapter, name).validate_python(value, strict=True)
            except ValidationError as exc:
                raise ValueError(f"options.{name}: {value!r} is not a valid {name} for {adapter.__name__} "
                                 f"({exc.errors()[0]['msg']})") from None
        return self


@functools.cache
def _adapter_options(adapter: type) -> dict[str, Any]:
    """The options a case may set on ``adapter``, with their types: worked out once per adapter
    (its annotations are strings, evaluated anew by every get_type_hints call, which cost about
    a millisecond per case file)."""
    import dataclasses
    import typing

    hints = typing.get_type_hints(adapter)
    return {f.name: hints[f.name] for f in dataclasses.fields(adapter)
            if f.init and not f.name.startswith("_") and f.name not in _HARNESS_OWNED}


@functools.cache
def _option_validator(adapter: type, name: str) -> TypeAdapter[Any]:
    return TypeAdapter(_adapter_options(adapter)[name])


class KnowledgeSpec(_Strict):
    """A corpus from ``fixtures/corpora/<corpus>.yaml`` in an in-memory BM25 store."""

    corpus: str
    max_results: int = Field(10, ge=1)


class ExpectedCall(_Strict):
    name: str
    arguments: dict[str, Any] = Field(
        default_factory=dict, description="in a case file: the arguments the call must have (others may be there "
                                          "too; nested mappings likewise); in a golden: all of them")
    type: str | None = Field(None, description="server_tool_use for a tool the provider ran itself (Bedrock's code "
                                               "interpreter, say); absent for the tools the program runs")
    result: dict[str, Any] | None = Field(None, description="a server tool's result, as the provider returned it in "
                                                            "the same answer")

    def as_read(self) -> dict[str, Any]:
        """The call in the shape the wire reader gives calls (``type`` and ``result`` only when set)."""
        call: dict[str, Any] = {"name": self.name, "arguments": self.arguments}
        call.update({key: value for key, value in (("type", self.type), ("result", self.result)) if value is not None})
        return call


class ToolCallsExpect(_Strict):
    """The trajectory: the tools called, in order or as a set, with their arguments, and how many
    calls there may be. Read from the wire, so it holds for agent and target cases alike."""

    calls: list[ExpectedCall] = Field(default_factory=list)
    allow_extra: bool = False  # observed calls beyond the expected ones are fine
    any_order: bool = False  # compare as a multiset, not a sequence
    min: int | None = Field(None, ge=0, description="at least this many tool calls in the whole case")
    max: int | None = Field(None, ge=0, description="at most this many tool calls in the whole case")


class OutputExpect(_Strict):
    equals: str | None = Field(None, description="the whole answer, exactly (case-sensitive)")
    contains: str | None = Field(None, description="a substring of the answer, case-sensitive (see icontains)")
    icontains: str | None = Field(None, description="a substring of the answer, ignoring case")
    regex: str | None = Field(None, description="a Python regular expression searched in the answer (case-sensitive unless it says (?i))")
    structured: dict[str, Any] | None = Field(
        None, description="an output_schema answer's fields: in a golden all of them; written by hand, the fields "
                          "listed must have these values")

    @model_validator(mode="after")
    def _one(self) -> OutputExpect:
        given = [k for k in ("equals", "contains", "icontains", "regex", "structured") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of equals, contains, icontains, regex, structured (got {given or 'none'})")
        if self.regex is not None:
            try:
                re.compile(self.regex)
            except re.error as exc:
                raise ValueError(f"regex does not compile: {exc}") from exc
        return self


class ErrorExpect(_Strict):
    type: str = "ModelProviderError"
    status_code: int | None = None
    message: str | None = None  # must be contained in the error message


class RetrievedExpect(_Strict):
    """Documents the turn's knowledge searches must have returned (``search_knowledge_base`` calls
    or traditional RAG): by document name, or by a text each must contain."""

    names: list[str] | None = Field(None, description="names of documents that must be among those returned")
    contains: list[str] | None = Field(None, description="texts that some returned document must contain")
    k: int = Field(10, ge=1, description="how many documents of each search count (its first k)")
    min_recall: float = Field(1.0, ge=0, le=1, description="share of names/contains that must be found")
    min_precision: float = Field(0.0, ge=0, le=1, description="share of returned documents that must be expected")

    @model_validator(mode="after")
    def _one(self) -> RetrievedExpect:
        if (self.names is None) == (self.contains is None):
            raise ValueError("give exactly one of names or contains")
        return self


class JudgeSpec(_Strict):
    """An LLM judge of the case's last answer; its calls are recorded in the case's cassette."""

    metric: Metric
    criteria: str | None = Field(None, description="what the answer must do (rubric only)")
    model: ModelSpec | None = Field(None, description="the judge's model; the case's api and id when not given")
    threshold: float = Field(0.7, ge=0, le=1, description="the lowest score that passes")

    @model_validator(mode="after")
    def _criteria(self) -> JudgeSpec:
        if (self.metric == "rubric") != bool(self.criteria and self.criteria.strip()):
            raise ValueError("criteria: the rubric metric needs criteria, and only it takes them")
        return self


class EmulatedVerdict(_Strict):
    """What the emulator answers for one judge, when recording with --emulator."""

    score: float = Field(ge=0, le=1)
    reason: str
    claims: list[dict[str, Any]] = Field(default_factory=list, description="{claim, supported, evidence}")


class RepeatScript(_Strict):
    """The emulator's script for one repeat of ``--live --emulator``; what it leaves out is the case's."""

    emulate: list[ScriptEntry] | None = None
    emulate_judge: list[EmulatedVerdict] | None = None


# usage limits a case may set by hand (checked against the recorded usage and request count)
USAGE_LIMITS = ("max_input_tokens", "max_output_tokens", "max_total_tokens", "max_rounds")


class Expect(_Strict):
    """Every field is optional; only the fields present are checked."""

    system_prompt: str | None = None
    user_messages: list[str] | None = None
    tools: list[dict[str, Any]] | None = None
    requests: list[dict[str, Any] | None] | None = None  # null: a request without a body (a GET)
    tool_calls: ToolCallsExpect | None = None
    references: list[dict[str, Any]] | None = None
    output: OutputExpect | None = None
    # a golden's exact counts (a normalize placeholder may stand for one), or hand-written max_* limits
    usage: dict[str, int | str] | None = None

    @field_validator("usage")
    @classmethod
    def _limits_are_counts(cls, value: dict[str, int | str] | None) -> dict[str, int | str] | None:
        for key, limit in (value or {}).items():
            if key.startswith("max_") and not isinstance(limit, int):
                raise ValueError(f"{key}: {limit!r} is not a whole number")
        return value
    error: ErrorExpect | None = None
    apis: list[str] | None = Field(None, description="the API of each request, in order (target cases)")
    # hand-written only: one spec for every turn, or a list with one per turn (null skips a turn)
    retrieved: RetrievedExpect | list[RetrievedExpect | None] | None = None
    stable_prefix: bool | None = Field(
        None, description="the system prompt and tools are byte-identical in every request of the case")
    # hand-written: LLM judges of the last answer (see rag_core.evals.golden.judges)
    judge: list[JudgeSpec] | None = None
    # the judges' prompts, request bodies and verdicts (machine-written in goldens)
    judges: list[dict[str, Any]] | None = None

    @field_validator("usage")
    @classmethod
    def _limits_or_counts(cls, value: dict[str, int] | None) -> dict[str, int] | None:
        limits = [k for k in value or {} if k.startswith("max_")]
        unknown = [k for k in limits if k not in USAGE_LIMITS]
        if unknown:
            raise ValueError(f"unknown usage limit(s) {unknown}; limits are {', '.join(USAGE_LIMITS)}")
        if limits and len(limits) != len(value or {}):
            raise ValueError("give either usage limits (max_*) or exact counts, not both")
        return value


def _regex(pattern: str | None) -> str | None:
    try:
        re.compile(pattern or "")
    except re.error as exc:
        raise ValueError(f"not a regular expression: {exc}") from None
    return pattern


# a path: dotted keys, with [*] (every item), [2] or [2:] (from an index), [name=x] (items by a field)
_STEP = r"(?:[^.\[\]]+|\[(?:\*|\d+:?|[^\]=]+=[^\]]*)\])"
_PATH = re.compile(rf"{_STEP}(?:\.?{_STEP})*")


def _path(value: str) -> str:
    """A malformed path (``requests[``) read as a shorter one and replaced a whole field."""
    if not _PATH.fullmatch(value):
        raise ValueError(f"{value!r} is not a path: dotted keys with [*], [2], [2:] or [name=value] steps, "
                         "e.g. requests[*].input[0].content")
    return value


class NormalizeRule(_Strict):
    """Replace the value at ``path`` (dotted, ``[*]`` for every list item) with ``placeholder``;
    with ``pattern`` (a Python regular expression), only its matches inside the strings there."""

    path: str
    placeholder: str
    pattern: str | None = None

    _compiles = field_validator("pattern")(_regex)
    _is_path = field_validator("path")(_path)


class IgnoreRule(_Strict):
    """For ``compare_with``: cut every match of ``pattern`` (a Python regular expression) out of
    the strings at ``path``, on both sides (a block of a prompt one side words differently)."""

    path: str
    pattern: str

    _compiles = field_validator("pattern")(_regex)
    _is_path = field_validator("path")(_path)


DEFAULT_RULES = [NormalizeRule(path="references[*].time", placeholder="<elapsed>")]


class GoldenCase(_Strict):
    id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    agent: dict[str, Any] | str = Field(default_factory=dict)
    target: str | None = Field(None, description="'package.module:callable' run instead of a rag_core agent; "
                               "golden fields are read from its provider traffic")
    compare_with: str | None = Field(None, description="another 'package.module:callable' run on the same input and "
                                     "emulator script; its traffic must match this case's (see ignore)")
    ignore: list[Annotated[str, AfterValidator(_path)] | IgnoreRule] = Field(
        default_factory=list, description="what compare_with leaves out: paths (like normalize paths; [name=x] "
                                          "selects list items by a field, [2:] the items from index 2 on) or "
                                          "{path, pattern} cutting a regex's matches out of strings")
    requires: list[str] = Field(default_factory=list, description="modules the case needs (llama_index.core), or "
                                "distributions in a version range (google-genai<3); it is skipped without them")
    model: ModelSpec = Field(default_factory=ModelSpec)
    knowledge: KnowledgeSpec | None = None
    input: str | None = None
    turns: list[str] | None = None
    stream: bool | list[bool] = False
    cassette: str | None = None
    clock: datetime = datetime(2026, 1, 15, 9, 30, 0)
    emulate: list[ScriptEntry] = Field(default_factory=list)
    emulate_judge: list[EmulatedVerdict] = Field(
        default_factory=list, description="the emulator's verdict for each expect.judge entry, in order")
    emulate_repeats: list[RepeatScript] = Field(
        default_factory=list, description="--live --emulator: the script of repeat 1, 2, … (cycled), replacing "
                                          "emulate / emulate_judge where given")
    allow_unused_turns: bool = Field(False, description="let a recording leave emulate: turns unused (by default "
                                     "it fails: a script longer than the run is usually a mistake)")
    min_pass_rate: float = Field(1.0, ge=0, le=1, description="--live --repeat N: the share of runs that must pass")
    max_concurrency: int | None = Field(None, ge=1, description="--live --concurrency N: at most this many of the "
                                        "case's runs at once (its tools share a resource, say)")
    timeout: float | None = Field(None, gt=0, allow_inf_nan=False, strict=True,
                                  description="seconds one run of the case may take, over the session's --case-timeout "
                                              "(300 by default when CI is set); past it the case fails, writing nothing")
    normalize: list[NormalizeRule] = Field(default_factory=list)
    expect: Expect = Field(default_factory=Expect)

    # filled in by the loader
    source: Path | None = Field(default=None, exclude=True)

    @field_validator("cassette")
    @classmethod
    def _inside_cassettes(cls, value: str | None) -> str | None:
        if value is not None and (Path(value).is_absolute() or ".." in Path(value).parts or "\\" in value):
            raise ValueError("a cassette is named relative to the cassettes folder, without '..' (it must stay inside it)")
        return value

    @field_validator("requires")
    @classmethod
    def _requirements(cls, value: list[str]) -> list[str]:
        for entry in value:
            if not re.match(r"^[A-Za-z_][\w.-]*\s*([<>=!~].*)?$", entry or ""):
                raise ValueError(f"{entry!r} is neither a module name (llama_index.core) nor a distribution with a "
                                 "version range (google-genai<3)")
        return value

    @field_validator("agent", "target", "compare_with")
    @classmethod
    def _factory_path(cls, value: Any) -> Any:
        if isinstance(value, str) and not re.match(r"^[\w.]+:\w+$", value):
            raise ValueError("write it as 'package.module:function'")
        return value

    @model_validator(mode="after")
    def _inputs(self) -> GoldenCase:
        if (self.input is None) == (self.turns is None):
            raise ValueError("give exactly one of input or turns")
        if isinstance(self.stream, list) and not self.stream:
            raise ValueError("stream: [] would run no variant of the case: give false, true or [false, true]")
        if self.turns is not None and not self.turns:
            raise ValueError("turns is empty")
        retrieved = self.expect.retrieved
        if isinstance(retrieved, list) and len(retrieved) != len(self.inputs):
            raise ValueError(f"expect.retrieved lists {len(retrieved)} turn(s), the case has {len(self.inputs)}")
        judges = len(self.expect.judge or [])
        scripts = [("emulate_judge", self.emulate_judge)] + [
            (f"emulate_repeats[{i}].emulate_judge", r.emulate_judge) for i, r in enumerate(self.emulate_repeats)]
        for name, verdicts in scripts:
            if verdicts and len(verdicts) != judges:
                raise ValueError(f"{name} scripts {len(verdicts)} verdict(s) for {judges} expect.judge entr(ies): "
                                 "give one per judge")
        if self.target is not None:
            given = sorted({"agent", "model", "knowledge"} & self.model_fields_set)
            if given:
                raise ValueError(f"a target case builds its own clients and agent: remove {', '.join(given)} "
                                 "(or drop target: to test a rag_core agent)")
            if self.expect.retrieved is not None:
                raise ValueError("expect.retrieved reads the agent's references, which a target's traffic does not "
                                 "show; check the answer or the tool calls instead")
        if isinstance(self.agent, dict):
            for reserved in ("model", "knowledge", "clock"):
                if reserved in self.agent:
                    raise ValueError(f"agent.{reserved}: set it at the case's top level ({reserved}:), not under agent")
        return self

    @property
    def inputs(self) -> list[str]:
        return [self.input] if self.input is not None else list(self.turns or [])

    @property
    def rules(self) -> list[NormalizeRule]:
        return DEFAULT_RULES + self.normalize

    @property
    def golden_path(self) -> Path:
        assert self.source is not None
        return self.source.parent / f"{self.id}{GOLDEN_SUFFIX}"

    def cassette_name(self) -> str:
        return self.cassette or f"{self.id}.yaml"

    def compare_cassette_name(self) -> str | None:
        """The cassette of the ``compare_with`` subject, beside the case's own (None without one)."""
        if self.compare_with is None:
            return None
        return compare_cassette(self.cassette_name())

    def cassette_names(self) -> list[str]:
        return [n for n in (self.cassette_name(), self.compare_cassette_name()) if n is not None]


def _error_location(exc: ValidationError, data: Any, mappings: Any, path: Path, root: Any = None) -> str:
    problems = []
    for problem in validation_messages.problems(exc, data, GoldenCase if root is None else root):
        line = line_of(data, mappings, problem.path)
        where = f"{shown(path)}:{line}" if line else shown(path)
        problems.append(f"{where}: {problem.text}")
    return "\n".join(dict.fromkeys(problems))


def parse_case_file(path: Path) -> list[GoldenCase]:
    """The case(s) in a file: one, or two when ``stream: [false, true]`` asks for both variants.

    A file read again with the same text gives the cases it gave (the orphan check at the end of a
    session read every case file a second time, as long as collecting them had taken)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CaseFileError(f"{shown(path)}: not UTF-8 text (byte {exc.start}: {exc.reason}); save it as UTF-8") from None
    except OSError as exc:
        raise CaseFileError(f"{shown(path)}: cannot be read: {exc}") from exc
    return list(_parsed(path, text))


@functools.lru_cache(maxsize=65536)  # errors are not kept: their messages name the file from the working directory
def _parsed(path: Path, text: str) -> tuple[GoldenCase, ...]:
    try:
        data, mappings = load_with_lines(path, text)
    except yaml.YAMLError as exc:
        tab = tab_problem(exc, text)
        if tab is not None:
            raise CaseFileError(f"{shown(path)}: {tab}") from None
        mark = getattr(exc, "problem_mark", None)
        where = f"{shown(path)}:{mark.line + 1}" if mark else shown(path)
        raise CaseFileError(f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from exc
    if not isinstance(data, dict):
        raise CaseFileError(f"{shown(path)}: a case file must be a mapping of case fields, got {type(data).__name__}")
    try:
        case = GoldenCase.model_validate(data)
    except ValidationError as exc:
        raise CaseFileError(_error_location(exc, data, mappings, path)) from None
    except RecursionError:
        raise CaseFileError(f"{shown(path)}: it is nested more deeply than can be read") from None
    case.source = path
    if isinstance(case.stream, bool):
        return (case,)
    variants = []
    for stream in dict.fromkeys(case.stream):
        variant = case.model_copy(update={"id": f"{case.id}.{'stream' if stream else 'sync'}", "stream": stream})
        variant.source = path
        variants.append(variant)
    return tuple(variants)


def find_duplicates(cases: list[GoldenCase]) -> dict[str, str]:
    """For every case sharing its id, cassette or golden with another: the error naming both files.

    Variants count: a plain ``s.sync`` and the sync variant of ``s`` would share a cassette
    and a golden, and silently overwrite each other's recordings; so do compared subjects' cassettes
    (a case ``s.compare`` would record into the ``compare_with`` cassette of ``s``)."""
    owners: dict[tuple[str, str], GoldenCase] = {}
    errors: dict[str, str] = {}
    for case in cases:
        for what, key in clash_keys(case):
            other = owners.setdefault((what, key), case)
            if other is not case and case.id not in errors:
                message = (f"{shown(case.source)} and {shown(other.source)} both define a case with the {what} "
                           f"{key!r} (a stream: [false, true] case is <id>.sync and <id>.stream); rename one")
                errors[case.id] = message
                errors.setdefault(other.id, message)
    return errors


def compare_cassette(name: str) -> str:
    """The cassette of a ``compare_with`` subject, beside the case's cassette ``name``."""
    return f"{name[:-5] if name.endswith('.yaml') else name}.compare.yaml"


def clash_keys(case: GoldenCase) -> list[tuple[str, str]]:
    """What a case owns alone: its id, its golden and its cassettes (see ``find_duplicates``)."""
    return [("id", case.id), ("golden", case.golden_path.name)] + [("cassette", n) for n in case.cassette_names()]


_ID = re.compile(r"^[A-Za-z0-9_.-]+$")  # GoldenCase.id's pattern


@dataclass(frozen=True)
class Skimmed:
    """What a case file's top level says, read without validating the file: enough to know, under
    ``--case``, that the file cannot be one of the selected cases nor clash with one (see
    ``discovery.py``). ``keys`` holds every clash key the file can have if it is valid."""

    id: str  # the test id the file gives if it is valid (a file that is not gives its stem instead)
    keys: frozenset[tuple[str, str]]
    tags: tuple[str, ...]


def skim_case_file(path: Path) -> Skimmed | None:
    """The top level of a case file, or None when only reading it whole can tell what tests it gives
    (it is not YAML, or not a mapping; its id is not a plain string; ``stream:`` is not a plain
    true or false, so it may give two tests; a merge key or a key written twice; not readable).

    Only the node tree is composed (the C parser's, no values built, so an alias bomb is not
    expanded): about a third of the cost of loading the file, and pydantic never runs."""
    try:
        root = compose_nodes(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError, OSError, RecursionError):
        return None
    if not isinstance(root, yaml.MappingNode):
        return None
    fields: dict[str, yaml.Node] = {}
    for key, value in root.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge" or key.value in fields:
            return None
        fields[key.value] = value

    def text(name: str) -> str | None | bool:  # a plain string, None when absent, False for anything else
        node = fields.get(name)
        if node is None:
            return None
        return node.value if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:str" else False

    case_id, cassette = text("id"), text("cassette")
    stream = fields.get("stream")
    if not isinstance(case_id, str) or cassette is False or (
            stream is not None and not (isinstance(stream, yaml.ScalarNode) and stream.tag == "tag:yaml.org,2002:bool")):
        return None
    names = [cassette or f"{case_id}.yaml"]
    if "compare_with" in fields:
        names.append(compare_cassette(names[0]))
    keys = frozenset([("id", case_id), ("golden", f"{case_id}{GOLDEN_SUFFIX}")] + [("cassette", n) for n in names])
    tags = fields.get("tags")
    tag_names = tuple(t.value for t in tags.value if isinstance(t, yaml.ScalarNode)) if isinstance(
        tags, yaml.SequenceNode) else ()
    return Skimmed(case_id if _ID.match(case_id) else path.stem, keys, tag_names)


def case_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.yaml") if not p.name.endswith(GOLDEN_SUFFIX))


def read_golden(path: Path) -> str | None:
    """A golden file's text, or None when it does not exist yet; a golden that cannot be read (a
    folder, not UTF-8, no permission) is an error naming the file."""
    if not path.exists():
        return None
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CaseFileError(f"{shown(path)}: the golden is not UTF-8 text (byte {exc.start}); fix it or delete it "
                            "and write it again with --update-goldens") from None
    except OSError as exc:
        raise CaseFileError(f"{shown(path)}: the golden cannot be read ({exc.strerror or exc})") from None


def load_expect(path: Path) -> Expect | None:
    """The snapshot in a ``.golden.yaml`` file, or None when it does not exist yet."""
    text = read_golden(path)
    if text is None:
        return None
    try:
        # the fast C parser first; line numbers are worked out only if there is an error
        return Expect.model_validate(load_bounded(text) or {})
    except (yaml.YAMLError, ValidationError):
        pass
    try:
        data, mappings = load_with_lines(path, text)
    except yaml.YAMLError as exc:
        tab = tab_problem(exc, text)
        raise CaseFileError(f"{shown(path)}: {tab or f'not valid YAML: {exc}'}") from exc
    try:
        return Expect.model_validate(data or {})
    except ValidationError as exc:
        raise CaseFileError(_error_location(exc, data, mappings, path, Expect)) from None


def json_schema() -> dict[str, Any]:
    """The JSON Schema of case files, for editor completion (published as fixtures/goldens/case.schema.json)."""
    schema = GoldenCase.model_json_schema()
    schema["properties"].pop("source", None)
    schema["title"] = "rag-core golden case"
    return schema
