"""Build the agent a case describes: inline configuration or a ``module:factory`` function."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rag_core.evals.golden.case import GoldenCase, KnowledgeSpec
from rag_core.evals.golden.model_spec import ModelSpec, adapter_class
from rag_core.evals.common import validation_messages
from rag_core.evals.common.errors import CaseFileError
from rag_core.evals.common.imports import import_named
from rag_core.evals.common.paths import shown
from rag_core.evals.common.yaml_read import load_bounded
from rag_core import Agent, Document, Knowledge
from rag_core.models.base import Model
from rag_core.providers import provider_of_api
from rag_core.tools import ReasoningTools

# the provider of each API a case's model speaks (its key variables, its SDK)
PROVIDER = {api: provider_of_api(api).name for api in ("openai-responses", "openai-chat", "gemini",
                                                        "anthropic-messages")}


def build_model(spec: ModelSpec, *, timeout: float | None = None) -> Model:
    """The case's model, with the endpoint and key its environment names (as in production: the
    emulator answers in-process). ``timeout`` bounds each request while recording, so a hanging
    provider fails the recording instead of the run."""
    options = dict(spec.options)
    if timeout is not None:
        options.setdefault("timeout", timeout)
    if spec.api != "gemini":  # a retry would send a request the script did not plan
        options.setdefault("max_retries", 0)
    try:
        return adapter_class(spec.api)(id=spec.id, **options)
    except TypeError as exc:
        raise CaseFileError(f"model.options: {exc}") from None


@functools.lru_cache(maxsize=32)
def _corpus(path: Path, mtime_ns: int) -> list[dict[str, Any]]:
    return load_bounded(path.read_text(encoding="utf-8"))


def build_knowledge(spec: KnowledgeSpec, fixtures: Path) -> Knowledge:
    path = fixtures / "corpora" / f"{spec.corpus}.yaml"
    if not path.exists():
        raise CaseFileError(f"knowledge.corpus: no corpus {shown(path)}")
    entries = _corpus(path, path.stat().st_mtime_ns)
    knowledge = Knowledge(max_results=spec.max_results)
    knowledge.insert(
        documents=[Document(content=e["content"], meta_data=dict(e.get("meta_data") or {}), name=e.get("name")) for e in entries]
    )
    return knowledge


def _tool(entry: Any, where: str) -> Any:
    """A tool entry: ``reasoning`` / ``{reasoning: {add_instructions: true}}`` or ``module:function``."""
    if entry == "reasoning":
        return ReasoningTools()
    if isinstance(entry, dict) and list(entry) == ["reasoning"]:
        return ReasoningTools(**(entry["reasoning"] or {}))
    if isinstance(entry, str) and ":" in entry:
        return import_named(entry, where)
    raise CaseFileError(f"{where}: unknown tool {entry!r}: use 'reasoning', {{reasoning: {{...}}}} or 'module:function'")


def build_agent(case: GoldenCase, model: Model, fixtures: Path) -> Agent:
    source = shown(case.source)
    if isinstance(case.agent, str):
        factory = import_named(case.agent, f"{source}: agent")
        agent = factory(model)
        if not isinstance(agent, Agent):
            raise CaseFileError(f"{source}: agent: {case.agent} returned {type(agent).__name__}, not an Agent")
        if agent.clock is None:
            agent.clock = lambda: case.clock
        return agent
    options = dict(case.agent)
    options["tools"] = [_tool(t, f"{source}: agent.tools[{i}]") for i, t in enumerate(options.get("tools", []))]
    if isinstance(options.get("output_schema"), str):  # 'module:Model', a pydantic model class
        options["output_schema"] = import_named(options["output_schema"], f"{source}: agent.output_schema")
    if case.knowledge is not None:
        options["knowledge"] = build_knowledge(case.knowledge, fixtures)
    try:
        return Agent(model=model, clock=lambda: case.clock, **options)
    except ValidationError as exc:
        given = {"model": model, "clock": None, **options}
        problems = "; ".join(p.text for p in validation_messages.problems(exc, given, Agent, within=("agent",)))
        raise CaseFileError(f"{source}: {problems}") from None
