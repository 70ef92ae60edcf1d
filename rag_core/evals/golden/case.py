"""Golden case files: what to run, what the emulator answers, what must come out.

Layout (one case = two files side by side, so reviewers see hand-written intent apart
from machine-written snapshots):

* ``<id>.yaml`` – the case, written by hand: the agent, its knowledge, the input, the
  scripted provider turns used when recording with the emulator, and optional hand-written
  checks under ``expect`` (output ``contains``/``regex``, tool-call ordering options, an
  expected error).
* ``<id>.golden.yaml`` – the snapshot, written by ``--update-goldens``: system prompt,
  user messages, tools, request bodies, tool calls, references, output and usage.

This module is the schema of both files (``GoldenCase``, ``Expect``; ``model_spec`` and
``normalize_rules`` hold two of its parts) and reads a golden; ``case_files`` reads case files.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import AfterValidator, Field, ValidationError, field_validator, model_validator

from rag_core.evals.common import validation_messages
from rag_core.evals.common.errors import CaseFileError
from rag_core.evals.common.modes import GOLDEN_SUFFIX
from rag_core.evals.common.paths import shown
from rag_core.evals.common.strict_model import StrictModel
from rag_core.evals.common.yaml_read import line_of, load_bounded, load_with_lines, tab_problem
from rag_core.evals.emulator.script import ScriptEntry
from rag_core.evals.golden.judges import Metric
from rag_core.evals.golden.model_spec import ModelSpec
from rag_core.evals.golden.normalize_rules import DEFAULT_RULES, IgnoreRule, NormalizeRule, checked_path


class KnowledgeSpec(StrictModel):
    """A corpus from ``fixtures/corpora/<corpus>.yaml`` in an in-memory BM25 store."""

    corpus: str
    max_results: int = Field(10, ge=1)


class ExpectedCall(StrictModel):
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


class ToolCallsExpect(StrictModel):
    """The trajectory: the tools called, in order or as a set, with their arguments, and how many
    calls there may be. Read from the wire, so it holds for agent and target cases alike."""

    calls: list[ExpectedCall] = Field(default_factory=list)
    allow_extra: bool = False  # observed calls beyond the expected ones are fine
    any_order: bool = False  # compare as a multiset, not a sequence
    min: int | None = Field(None, ge=0, description="at least this many tool calls in the whole case")
    max: int | None = Field(None, ge=0, description="at most this many tool calls in the whole case")


class OutputExpect(StrictModel):
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


class ErrorExpect(StrictModel):
    type: str = "ModelProviderError"
    status_code: int | None = None
    message: str | None = None  # must be contained in the error message


class RetrievedExpect(StrictModel):
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


class JudgeSpec(StrictModel):
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


class EmulatedVerdict(StrictModel):
    """What the emulator answers for one judge, when recording with --emulator."""

    score: float = Field(ge=0, le=1)
    reason: str
    claims: list[dict[str, Any]] = Field(default_factory=list, description="{claim, supported, evidence}")


class RepeatScript(StrictModel):
    """The emulator's script for one repeat of ``--live --emulator``; what it leaves out is the case's."""

    emulate: list[ScriptEntry] | None = None
    emulate_judge: list[EmulatedVerdict] | None = None


# usage limits a case may set by hand (checked against the recorded usage and request count)
USAGE_LIMITS = ("max_input_tokens", "max_output_tokens", "max_total_tokens", "max_rounds")


class Expect(StrictModel):
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




class GoldenCase(StrictModel):
    id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    agent: dict[str, Any] | str = Field(default_factory=dict)
    target: str | None = Field(None, description="'package.module:callable' run instead of a rag_core agent; "
                               "golden fields are read from its provider traffic")
    compare_with: str | None = Field(None, description="another 'package.module:callable' run on the same input and "
                                     "emulator script; its traffic must match this case's (see ignore)")
    ignore: list[Annotated[str, AfterValidator(checked_path)] | IgnoreRule] = Field(
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


def located_problems(exc: ValidationError, data: Any, mappings: Any, path: Path, root: Any = None) -> str:
    """Each problem of a case file (or, with ``root``, a golden) that did not validate, in the file's
    terms, at its line: one per line."""
    problems = []
    for problem in validation_messages.problems(exc, data, GoldenCase if root is None else root):
        line = line_of(data, mappings, problem.path)
        where = f"{shown(path)}:{line}" if line else shown(path)
        problems.append(f"{where}: {problem.text}")
    return "\n".join(dict.fromkeys(problems))


def compare_cassette(name: str) -> str:
    """The cassette of a ``compare_with`` subject, beside the case's cassette ``name``."""
    return f"{name[:-5] if name.endswith('.yaml') else name}.compare.yaml"


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
        raise CaseFileError(located_problems(exc, data, mappings, path, Expect)) from None


def json_schema() -> dict[str, Any]:
    """The JSON Schema of case files, for editor completion (published as fixtures/goldens/case.schema.json)."""
    schema = GoldenCase.model_json_schema()
    schema["properties"].pop("source", None)
    schema["title"] = "rag-core golden case"
    return schema
