"""A case's LLM judges (``expect.judge``): run inside the case's cassette, pinned in its golden.

The judges run after the case's last turn, on its last answer, through rag_core's own model
adapters, so their calls are recorded and replayed like the agent's: CI gets the same verdict
every time, and a rubric edit changes a request body (a stale cassette with the body diff, and a
golden diff). Recorded judge interactions carry a ``rag-core-judge: <metric>`` request header in
the cassette (added to the recording only; nothing extra is sent). Recording with
``--emulator``, the case's ``emulate_judge:`` verdicts are the emulator's replies.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from rag_core.evals.emulator.script import ScriptedTurn
from rag_core.evals.golden.case import GoldenCase, JudgeSpec
from rag_core.evals.golden.model_spec import ModelSpec
from rag_core.evals.common.paths import shown
from rag_core.evals.golden.judges import Judgement, judge


def emulated_turns(case: GoldenCase) -> list[ScriptedTurn]:
    """The emulator's replies to the judges: each scripted verdict as the judge's JSON answer."""
    turns = []
    for verdict in case.emulate_judge:
        claims = [{"claim": c.get("claim", ""), "supported": bool(c.get("supported")), "evidence": c.get("evidence")}
                  for c in verdict.claims]
        turns.append(ScriptedTurn(text=json.dumps({"score": verdict.score, "reason": verdict.reason,
                                                   "claims": claims}, ensure_ascii=False)))
    return turns


def missing_verdicts(case: GoldenCase) -> str | None:
    """Why a judged case cannot be recorded against the emulator, before anything runs: the
    emulator answers each judge with its verdict under ``emulate_judge:``, and the case has none.
    The message names the case file, each judge and what to add; None when they are scripted."""
    judges = case.expect.judge or []
    if not judges or case.emulate_judge:
        return None
    named = ", ".join(f"expect.judge[{i}] ({spec.metric})" for i, spec in enumerate(judges))
    verdicts = "".join(f"\n  - {{score: 1.0, reason: what the {spec.metric} judge found}}" for spec in judges)
    return (f"{shown(case.source)}: {named} {'has' if len(judges) == 1 else 'have'} no verdict for the emulator "
            f"to answer with: recording with --emulator needs one per judge, in order, under emulate_judge:. Add to "
            f"the case file:\n\nemulate_judge:{verdicts}\n")


def agent_inputs(outputs: list[Any]) -> tuple[str, list[str]]:
    """A rag_core agent's last answer as text, and the documents its last turn retrieved."""
    last = outputs[-1] if outputs else None
    if last is None or last.content is None:
        return "", []
    content = last.content
    answer = content.model_dump_json() if isinstance(content, BaseModel) else str(content)
    context = [doc.get("content") or "" for search in last.references for doc in search.get("references", [])]
    return answer, list(dict.fromkeys(context))


def target_inputs(answers: list[str | None], seen: dict[str, Any]) -> tuple[str, list[str]]:
    """A target's last answer (what it returned, else the last model text on the wire) and the
    tool results its last model request carried back: the context it answered from."""
    last = answers[-1] if answers else None
    return (last if last is not None else seen["final_text"] or ""), seen["tool_outputs"]


def judge_model(spec: JudgeSpec, case: GoldenCase) -> ModelSpec:
    """The judge's own model, or the case's api and id (not its options: those tune the agent)."""
    return spec.model or ModelSpec(api=case.model.api, id=case.model.id)


def run_judges(case: GoldenCase, answer: str, context: list[str], recorder: Any,
               build: Any) -> tuple[list[Judgement], BaseException | None]:
    """Each judge in order; ``build(model_spec)`` makes its model (pointed where the case's traffic
    goes). Stops at the first judge that fails to give a verdict."""
    judgements = []
    for spec in case.expect.judge or []:
        recorder.label = spec.metric
        try:
            judgements.append(judge(build(judge_model(spec, case)), spec.metric, question=case.inputs[-1],
                                    answer=answer, context=context, criteria=spec.criteria, threshold=spec.threshold))
        except Exception as exc:
            return judgements, exc
        finally:
            recorder.label = None
    return judgements, None


def observed(judgements: list[Judgement]) -> list[dict[str, Any]]:
    """The golden's ``judges``: per judge its request body (the judge's prompts are in it) and verdict."""
    return [{
        "metric": j.metric,
        "request": j.requests[0] if j.requests else None,
        "verdict": {"score": j.score, "passed": j.passed, "reason": j.verdict.reason,
                    "claims": [c.model_dump() for c in j.verdict.claims]},
    } for j in judgements]
