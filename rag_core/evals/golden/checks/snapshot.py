"""The golden snapshot, and the hand-written fields of ``expect:`` that name exact values: the
fields the wire and the agent determine, the tool calls, the answer, the error."""

from __future__ import annotations

import json
import re
from typing import Any

from rag_core.evals.golden.case import Expect, OutputExpect, ToolCallsExpect
from rag_core.evals.golden.case_run import CaseRun
from rag_core.evals.common.failure import Failure
from rag_core.evals.common.paths import shown

# compared as values; the error has its own check (a hand-written one has matching rules)
SNAPSHOT_FIELDS = ("system_prompt", "user_messages", "tools", "apis", "requests", "references", "judges", "usage")


def _sources(run: CaseRun) -> list[tuple[str, Any, Expect | None]]:
    """Each place expectations come from: its name, its file (shown in a failure only: a case
    that passes names no file), what it expects."""
    return [("golden", run.golden_path, run.golden), ("case", run.case.source, run.case.expect)]


def fields(run: CaseRun) -> list[Failure]:
    failures = []
    sources = _sources(run)
    for name in SNAPSHOT_FIELDS:
        for source, path, expect in sources:
            if expect is None or name not in expect.model_fields_set:
                continue
            wanted = getattr(expect, name)
            if name == "usage" and source == "case" and any(k.startswith("max_") for k in wanted or {}):
                continue  # limits, not counts: see expectations.usage_limits
            if wanted != run.observed.get(name):
                failures.append(Failure("snapshot", source, shown(path), name, golden=wanted,
                                        observed=run.observed.get(name)))
    return failures


def arguments_hold(wanted: Any, observed: Any) -> bool:
    """Whether ``observed`` has everything ``wanted`` names: mappings by subset, recursively;
    anything else (lists included) equal."""
    if isinstance(wanted, dict):
        return isinstance(observed, dict) and all(k in observed and arguments_hold(v, observed[k]) for k, v in wanted.items())
    return wanted == observed


def _holds(wanted: dict[str, Any], call: dict[str, Any], subset: bool) -> bool:
    if subset:
        # a server tool's type and result, where the case names them, hold as the arguments do
        return (wanted["name"] == call.get("name") and arguments_hold(wanted["arguments"], call.get("arguments"))
                and ("type" not in wanted or wanted["type"] == call.get("type"))
                and ("result" not in wanted or arguments_hold(wanted["result"], call.get("result"))))
    return wanted == call


def check_tool_calls(expected: ToolCallsExpect, observed: list[dict[str, Any]], subset: bool = False) -> bool:
    """The expected calls against the observed ones: as a sequence (extras between them allowed
    with ``allow_extra``) or a multiset (``any_order``); arguments whole, or (``subset``, for
    hand-written checks) the ones named."""
    wanted = [c.as_read() for c in expected.calls]
    if expected.any_order:
        remaining = list(observed)
        for want in wanted:  # hand-written subsets may overlap: match each to the first still free
            match = next((i for i, call in enumerate(remaining) if _holds(want, call, subset)), None)
            if match is None:
                return False
            del remaining[match]
        return expected.allow_extra or not remaining
    if not expected.allow_extra:
        return len(wanted) == len(observed) and all(_holds(w, c, subset) for w, c in zip(wanted, observed))
    position = 0  # wanted must appear in order, extras allowed between
    for call in observed:
        if position < len(wanted) and _holds(wanted[position], call, subset):
            position += 1
    return position == len(wanted)


def tool_calls(run: CaseRun) -> list[Failure]:
    """The calls in order (or as the case's options say): the golden's whole, or the hand-written
    ones by name and argument subsets; and the hand-written ``min``/``max`` counts."""
    calls = run.observed["tool_calls"]["calls"]
    options, golden = run.case.expect.tool_calls, run.golden
    by_hand = options is not None and bool(options.calls)
    expected = options if by_hand else None
    if expected is None and golden is not None and golden.tool_calls is not None:
        expected = ToolCallsExpect(calls=golden.tool_calls.calls, allow_extra=options.allow_extra if options else False,
                                   any_order=options.any_order if options else False)
    failures = []
    case_file = shown(run.case.source)
    if expected is not None and not check_tool_calls(expected, calls, subset=by_hand):
        where = case_file if by_hand else shown(run.golden_path)
        mode = ", ".join(k for k in ("any_order", "allow_extra") if getattr(expected, k)) or "exact order"
        if by_hand:
            mode += ", arguments as subsets"
        failures.append(Failure("tool_calls", "case" if by_hand else "golden", where, "tool_calls",
                                golden=[c.as_read() for c in expected.calls],
                                observed=calls, label=f"{where}:tool_calls ({mode})"))
    if options is not None:
        names = [c.get("name") for c in calls]
        if options.min is not None and len(calls) < options.min:
            failures.append(Failure("tool_calls", "case", case_file, "tool_calls.min",
                                    f"{case_file}:tool_calls.min: {len(calls)} tool call(s) {names}, fewer than "
                                    f"{options.min}"))
        if options.max is not None and len(calls) > options.max:
            failures.append(Failure("tool_calls", "case", case_file, "tool_calls.max",
                                    f"{case_file}:tool_calls.max: {len(calls)} tool call(s) {names}, more than "
                                    f"{options.max}"))
    return failures


def answer_text(output: dict[str, Any] | None) -> str | None:
    """The answer as text: the reply, or a structured answer as JSON (text checks and judges read it)."""
    if not output:
        return None
    if "structured" in output:
        return json.dumps(output["structured"], ensure_ascii=False)
    return output.get("equals")


def check_output(expect: OutputExpect, content: str | None, structured: dict[str, Any] | None = None) -> bool:
    if expect.structured is not None:
        return structured is not None and all(
            key in structured and structured[key] == value for key, value in expect.structured.items())
    if expect.equals is not None:
        return content == expect.equals
    if content is None:
        return False
    if expect.contains is not None:
        return expect.contains in content
    if expect.icontains is not None:
        return expect.icontains.casefold() in content.casefold()
    return re.search(expect.regex, content) is not None


def output(run: CaseRun) -> list[Failure]:
    """The answer: the hand-written check (equals, contains, regex, structured fields), else the golden's."""
    observed, hand, golden = run.observed["output"], run.case.expect.output, run.golden
    content = answer_text(observed)
    if hand is not None:
        if check_output(hand, content, (observed or {}).get("structured")):
            return []
        where = shown(run.case.source)
        wanted = hand.model_dump(exclude_none=True)
        return [Failure("output", "case", where, "output", f"{where}:output: {wanted} does not hold for {content!r}")]
    if golden is not None and "output" in golden.model_fields_set:
        wanted = golden.output.model_dump(exclude_none=True) if golden.output is not None else None
        if wanted != observed:
            return [Failure("output", "golden", shown(run.golden_path), "output", golden=wanted, observed=observed)]
    return []


def error(run: CaseRun) -> list[Failure]:
    """The error the run ended with: the hand-written expectation's type, status and message, or
    none at all; and the golden's snapshot of it."""
    got, wanted = run.observed.get("error"), run.case.expect.error
    case_file = shown(run.case.source)
    failures = []

    def hand(message: str) -> None:
        failures.append(Failure("error", "case", case_file, "error", message))

    if wanted is not None:
        if got is None:
            hand(f"{case_file}:error: expected a {wanted.type}, but the run succeeded")
        else:
            problems = []
            if got["type"] != wanted.type:
                problems.append(f"type {got['type']} is not {wanted.type}")
            if wanted.status_code is not None and got["status_code"] != wanted.status_code:
                problems.append(f"status {got['status_code']} is not {wanted.status_code}")
            if wanted.message is not None and wanted.message not in got["message"]:
                problems.append(f"message {got['message']!r} does not contain {wanted.message!r}")
            if problems:
                hand(f"{case_file}:error: " + "; ".join(problems))
    elif got is not None:
        hand(f"{case_file}: the run failed with {got['type']}: {got['message']}")
    if run.golden is not None and "error" in run.golden.model_fields_set:
        snapshot = run.golden.error.model_dump() if run.golden.error is not None else None
        if snapshot != got:
            failures.append(Failure("error", "golden", shown(run.golden_path), "error", golden=snapshot, observed=got))
    return failures
