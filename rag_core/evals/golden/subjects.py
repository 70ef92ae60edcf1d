"""What a case runs: its own rag_core agent (built from the case file), or a target (any
callable a ``target:`` or ``compare_with:`` names). The runner plays either the same way; what
differs lives here: how the subject is made ready, run turn by turn, judged and observed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rag_core.evals.golden import judging
from rag_core.evals.wire import traffic
from rag_core.evals.golden.build import PROVIDER, build_agent, build_model
from rag_core.evals.golden.case import GoldenCase
from rag_core.evals.golden.model_spec import ModelSpec
from rag_core.evals.common.errors import CaseFileError
from rag_core.evals.golden.fields import agent_fields, target_fields
from rag_core.evals.common.raised import defined_at
from rag_core.evals.golden.targets import TargetContext, answer_text, load_target, settle, takes_context

# what a run produced and how it ended: (the agent and its outputs, or a target's answers; its error)
Ran = tuple[Any, BaseException | None]


@dataclass
class AgentSubject:
    """The case's own rag_core agent: its model is built from the case, the agent inside the
    cassette (a knowledge factory may call providers too, embedding a corpus)."""

    case: GoldenCase
    _model: Any = field(default=None, init=False, repr=False)

    name = "the agent"

    @property
    def provider(self) -> str | None:
        return PROVIDER[self.case.model.api]

    def models(self) -> list[ModelSpec]:
        """The models whose keys a live recording needs."""
        return [self.case.model]

    def prepare(self, timeout: float | None) -> None:
        self._model = build_model(self.case.model, timeout=timeout)

    def run(self, turn_starts: list[int], replay: Any, context: TargetContext) -> Ran:
        agent = build_agent(self.case, self._model, context.fixtures)
        outputs: list[Any] = []
        for text in self.case.inputs:
            turn_starts.append(len(replay.exchanges))
            try:
                result = agent.run(text, stream=bool(self.case.stream))
                outputs.append(list(result)[-1].output if self.case.stream else result)
            except Exception as exc:
                partial = getattr(exc, "output", None)
                if partial is not None:
                    outputs.append(partial)
                return (agent, outputs), exc
        return (agent, outputs), None

    def judge_inputs(self, produced: Any, replay: Any, turn_starts: list[int]) -> tuple[str, list[str]]:
        return judging.agent_inputs(produced[1])

    def defined_at(self) -> str | None:
        """Where to look when calling the subject fails before its code runs: never, for an agent the
        harness builds and runs itself (its exceptions come from its own frames or the user's)."""
        return None

    def golden_fields(self, produced: Any, seen_on_wire: dict[str, Any], error: BaseException | None
                ) -> tuple[dict[str, Any], list[list[dict[str, Any]]]]:
        """Its golden fields, from its own account of the run, and each turn's searches."""
        agent, outputs = produced
        sent = [request for out in outputs for request in out.requests]
        return agent_fields(agent, outputs, sent, error), [out.references for out in outputs]


@dataclass
class TargetSubject:
    """A callable a case names (``module:callable``): imported in the case's environment behind
    the guard; its golden fields are read from its traffic."""

    spec: str
    where: str  # the case file and field that name it, for errors
    case: GoldenCase
    _target: Any = field(default=None, init=False, repr=False)

    @property
    def name(self) -> str:
        return self.spec

    @property
    def provider(self) -> str | None:
        return None  # any SDK: the cassette names every one installed

    def models(self) -> list[ModelSpec]:
        return []

    def prepare(self, timeout: float | None) -> None:
        self._target = load_target(self.spec, self.where)

    def run(self, turn_starts: list[int], replay: Any, context: TargetContext) -> Ran:
        answers: list[str | None] = []
        with_context = takes_context(self._target)
        for turn, text in enumerate(self.case.inputs):
            turn_starts.append(len(replay.exchanges))
            context.turn = turn
            try:
                answers.append(answer_text(settle(self._target(text, context) if with_context else self._target(text))))
            except CaseFileError as exc:
                raise CaseFileError(f"{self.where}: {exc}") from None
            except SystemExit as exc:  # a target that exits must not end the test session
                raise CaseFileError(f"{self.where}: the target called sys.exit({exc.code!r}) on turn {turn + 1}") from None
            except Exception as exc:
                return answers, exc
        return answers, None

    def judge_inputs(self, produced: Any, replay: Any, turn_starts: list[int]) -> tuple[str, list[str]]:
        return judging.target_inputs(produced, traffic.fields_of(replay.exchanges, turn_starts))

    def defined_at(self) -> str | None:
        """Where the callable is defined: a call that fails on its signature raises in the harness's
        frame, and this is where to look."""
        return defined_at(self._target) if self._target is not None else None

    def golden_fields(self, produced: Any, seen_on_wire: dict[str, Any], error: BaseException | None
                ) -> tuple[dict[str, Any], list[list[dict[str, Any]]]]:
        """Its golden fields, read from its traffic; a target reports no searches of its own."""
        return target_fields(seen_on_wire, produced, error), [[] for _ in self.case.inputs]


Subject = AgentSubject | TargetSubject


def subject_of(case: GoldenCase, spec: str | None, field_name: str = "target") -> Subject:
    """The case's own subject (``spec`` None: its agent, else its target), or its ``compare_with``."""
    from rag_core.evals.common.paths import shown

    return AgentSubject(case) if spec is None else TargetSubject(spec, f"{shown(case.source)}: {field_name}", case)
