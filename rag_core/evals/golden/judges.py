"""LLM judges: is an answer faithful to its context, relevant to its question, graded well by a rubric?

A judge is a rag_core Agent with a fixed system prompt and ``output_schema=Verdict``, so its
request is built by the same pure functions as any agent's (and is pinned in goldens), its reply
is parsed into a typed verdict, and the harness records and replays its calls like any other.

The prompts are written for rag_core. For ``faithfulness`` and ``context_relevance`` the score is
computed here from the judge's per-item decisions (the share supported or relevant), not taken
from the number the judge wrote, so a verdict's score always agrees with the claims it lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from rag_core.models.base import Model

Metric = Literal["faithfulness", "answer_relevance", "context_relevance", "rubric"]


class ClaimCheck(BaseModel):
    """One item the judge decided on: a claim of the answer, or a passage of the context."""

    claim: str = Field(description="the claim, or the passage number and its gist")
    supported: bool = Field(description="faithfulness: the context supports the claim; context_relevance: the "
                                        "passage helps answer the question")
    evidence: str | None = Field(description="the words of the context that decide it, or null")


class Verdict(BaseModel):
    score: float = Field(description="from 0 (worst) to 1 (best)")
    reason: str = Field(description="one or two sentences; name what is missing or unsupported")
    claims: list[ClaimCheck] = Field(description="the items decided on; empty for answer_relevance and rubric")


_ANSWER_FORMAT = "Reply with the JSON verdict only: score, reason, claims."

SYSTEM_PROMPTS: dict[str, str] = {
    "faithfulness": (
        "You check whether an answer says only what its context supports.\n"
        "1. Split the answer into its factual claims, one statement each. Leave out greetings, offers of "
        "further help and statements that assert nothing.\n"
        "2. For each claim decide whether the context supports it: it does when the context states it or it "
        "follows directly from what the context states. A claim that may be true but is not in the context "
        "is not supported.\n"
        "3. For each claim give the context's words that decide it as evidence, or null.\n"
        "Score: the share of claims that are supported (1 when the answer makes no claim). Reason: name the "
        "unsupported claims, or say that every claim is supported.\n" + _ANSWER_FORMAT
    ),
    "answer_relevance": (
        "You rate how well an answer addresses the question it was given. Judge relevance only, not whether "
        "the answer is correct.\n"
        "Score 1: it answers the question directly and completely. Score 0.5: it answers part of the question, "
        "or hides the answer in unrelated text. Score 0: it does not answer (off topic, a refusal, or a "
        "question back). Use values in between for answers in between.\n"
        "Reason: what the answer leaves out or adds that was not asked. Claims: an empty list.\n" + _ANSWER_FORMAT
    ),
    "context_relevance": (
        "You check whether the retrieved context is what the question needs.\n"
        "For each numbered passage of the context add one item: claim is the passage number and its gist in a "
        "few words; supported is true when the passage helps answer the question; evidence is the words that "
        "help, or null.\n"
        "Score: the share of passages that help. Reason: whether the context holds everything the question "
        "needs, and what is missing.\n" + _ANSWER_FORMAT
    ),
    "rubric": (
        "You grade an answer against the criteria given with it, and only against them.\n"
        "Score 1 when the answer meets every criterion, 0 when it meets none, and the share of criteria met "
        "otherwise. Reason: name each criterion the answer does not meet, or say that it meets all of them. "
        "Claims: an empty list.\n" + _ANSWER_FORMAT
    ),
}

# the metrics whose score is the share of items the judge marked supported
COUNTED = {"faithfulness", "context_relevance"}
NEEDS_CONTEXT = {"faithfulness", "context_relevance"}


def judge_prompt(metric: str, question: str, answer: str, context: list[str], criteria: str | None = None) -> str:
    """The user message a judge receives. Pure: the same inputs give the same bytes."""
    sections = [("question", question)]
    if metric in NEEDS_CONTEXT:
        passages = "\n\n".join(f"[{number}] {text}" for number, text in enumerate(context, start=1))
        sections.append(("context", passages or "(no context was retrieved)"))
    if metric == "rubric":
        sections.append(("criteria", criteria or ""))
    sections.append(("answer", answer))
    return "\n\n".join(f"<{name}>\n{text}\n</{name}>" for name, text in sections)


@dataclass
class Judgement:
    """A judge's verdict, with the score used (computed from the claims where the metric counts them)."""

    metric: str
    verdict: Verdict
    score: float
    threshold: float
    prompt: str
    requests: list[dict[str, Any]]

    @property
    def passed(self) -> bool:
        return self.score >= self.threshold

    @property
    def unsupported(self) -> list[str]:
        return [c.claim for c in self.verdict.claims if not c.supported]


def score_of(metric: str, verdict: Verdict) -> float:
    if metric in COUNTED:
        if not verdict.claims:
            return 1.0 if metric == "faithfulness" else 0.0  # no claim is unsupported; no passage helps
        return round(sum(c.supported for c in verdict.claims) / len(verdict.claims), 4)
    return round(min(max(verdict.score, 0.0), 1.0), 4)


def judge(model: Model, metric: Metric, *, question: str, answer: str, context: list[str] = (),
          criteria: str | None = None, threshold: float = 0.7) -> Judgement:
    """Ask ``model`` for a verdict on ``answer``. Raises StructuredOutputError when the judge's
    reply is not a verdict (the raw text is on the error)."""
    from rag_core import Agent

    if metric not in SYSTEM_PROMPTS:
        raise ValueError(f"unknown judge metric {metric!r}; use one of {', '.join(SYSTEM_PROMPTS)}")
    if metric == "rubric" and not (criteria or "").strip():
        raise ValueError("the rubric metric needs criteria")
    prompt = judge_prompt(metric, question, answer, list(context), criteria)
    agent = Agent(model=model, system_message=SYSTEM_PROMPTS[metric], output_schema=Verdict)
    out = agent.run(prompt)
    verdict = out.content
    return Judgement(metric, verdict, score_of(metric, verdict), threshold, prompt, out.requests)
