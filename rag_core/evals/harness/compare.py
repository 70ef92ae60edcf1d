"""Compare what a case produced with its golden snapshot and its hand-written checks."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any, NamedTuple

from rag_core.evals.harness.case import Expect, GoldenCase, ToolCallsExpect
from rag_core.evals.harness.paths import shown
from rag_core.evals.harness.yaml_dump import TRAILING_MARK, dump_for_diff

SNAPSHOT_FIELDS = ("system_prompt", "user_messages", "tools", "apis", "requests", "references", "judges", "usage",
                   "error")


def unified(label: str, expected: Any, observed: Any) -> str:
    before = dump_for_diff(expected).splitlines(keepends=True)
    after = dump_for_diff(observed).splitlines(keepends=True)
    diff = "".join(difflib.unified_diff(before, after, f"{label} (expected)", f"{label} (observed)"))
    marks = [f"{mark} a trailing {name}" for mark, name in ((TRAILING_MARK[" "], "space"), (TRAILING_MARK["\t"], "tab"))
             if mark in diff]
    return diff + (f"({', '.join(marks)})\n" if marks else "")


def _key(call: dict[str, Any]) -> str:
    return json.dumps(call, sort_keys=True, ensure_ascii=False)


def arguments_hold(wanted: Any, observed: Any) -> bool:
    """Whether ``observed`` has everything ``wanted`` names: mappings by subset, recursively;
    anything else (lists included) equal."""
    if isinstance(wanted, dict):
        return isinstance(observed, dict) and all(k in observed and arguments_hold(v, observed[k]) for k, v in wanted.items())
    return wanted == observed


def _holds(wanted: dict[str, Any], call: dict[str, Any], subset: bool) -> bool:
    if subset:
        return wanted["name"] == call.get("name") and arguments_hold(wanted["arguments"], call.get("arguments"))
    return wanted == call


def check_tool_calls(expected: ToolCallsExpect, observed: list[dict[str, Any]], subset: bool = False) -> bool:
    """The expected calls against the observed ones: as a sequence (extras between them allowed
    with ``allow_extra``) or a multiset (``any_order``); arguments whole, or (``subset``, for
    hand-written checks) the ones named."""
    wanted = [{"name": c.name, "arguments": c.arguments} for c in expected.calls]
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


def answer_text(output: dict[str, Any] | None) -> str | None:
    """The answer as text: the reply, or a structured answer as JSON (text checks and judges read it)."""
    if not output:
        return None
    if "structured" in output:
        return json.dumps(output["structured"], ensure_ascii=False)
    return output.get("equals")


def check_output(expect: Any, content: str | None, structured: dict[str, Any] | None = None) -> bool:
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


class Compared(NamedTuple):
    """Failed checks, by where the expectation is written: the machine-written golden (which
    ``--update-goldens`` rewrites) or the hand-written case file (which it does not touch)."""

    golden: list[str]
    hand: list[str]

    @property
    def all(self) -> list[str]:
        return self.golden + self.hand


def compare(case: GoldenCase, golden: Expect | None, observed: dict[str, Any], golden_path: Path) -> Compared:
    """One message per failed check; each names the file and the field."""
    result = Compared([], [])
    hand = case.expect
    case_file = shown(case.source)
    golden_file = shown(golden_path)
    for name in SNAPSHOT_FIELDS:
        for source, expect in ((golden_file, golden), (case_file, hand)):
            if expect is not None and name in expect.model_fields_set and name != "error":
                wanted = getattr(expect, name)
                if name == "usage" and expect is hand and any(k.startswith("max_") for k in wanted or {}):
                    continue  # limits, not counts: see expectations.py
                if wanted != observed.get(name):
                    (result.hand if expect is hand else result.golden).append(
                        unified(f"{source}:{name}", wanted, observed.get(name)))
    calls = observed["tool_calls"]["calls"]
    options = hand.tool_calls
    by_hand = options is not None and bool(options.calls)
    expected_calls = options if by_hand else None
    if expected_calls is None and golden is not None and golden.tool_calls is not None:
        expected_calls = ToolCallsExpect(
            calls=golden.tool_calls.calls,
            allow_extra=options.allow_extra if options else False,
            any_order=options.any_order if options else False,
        )
    if expected_calls is not None and not check_tool_calls(expected_calls, calls, subset=by_hand):
        source = case_file if by_hand else golden_file
        mode = ", ".join(k for k in ("any_order", "allow_extra") if getattr(expected_calls, k)) or "exact order"
        if by_hand:
            mode += ", arguments as subsets"
        (result.hand if by_hand else result.golden).append(
            unified(f"{source}:tool_calls ({mode})",
                    [{"name": c.name, "arguments": c.arguments} for c in expected_calls.calls], calls)
        )
    if options is not None:
        names = [c.get("name") for c in calls]
        if options.min is not None and len(calls) < options.min:
            result.hand.append(f"{case_file}:tool_calls.min: {len(calls)} tool call(s) {names}, fewer than {options.min}")
        if options.max is not None and len(calls) > options.max:
            result.hand.append(f"{case_file}:tool_calls.max: {len(calls)} tool call(s) {names}, more than {options.max}")
    content = answer_text(observed["output"])
    if hand.output is not None:
        if not check_output(hand.output, content, (observed["output"] or {}).get("structured")):
            result.hand.append(f"{case_file}:output: {hand.output.model_dump(exclude_none=True)} does not hold for {content!r}")
    elif golden is not None and "output" in golden.model_fields_set:
        wanted = golden.output.model_dump(exclude_none=True) if golden.output is not None else None
        if wanted != observed["output"]:
            result.golden.append(unified(f"{golden_file}:output", wanted, observed["output"]))
    _check_error(case, golden, observed, golden_path, result)
    return result


def _check_error(case: GoldenCase, golden: Expect | None, observed: dict[str, Any], golden_path: Path,
                 result: Compared) -> None:
    got = observed.get("error")
    failures = result.hand
    wanted = case.expect.error
    if wanted is not None:
        if got is None:
            failures.append(f"{shown(case.source)}:error: expected a {wanted.type}, but the run succeeded")
        else:
            problems = []
            if got["type"] != wanted.type:
                problems.append(f"type {got['type']} is not {wanted.type}")
            if wanted.status_code is not None and got["status_code"] != wanted.status_code:
                problems.append(f"status {got['status_code']} is not {wanted.status_code}")
            if wanted.message is not None and wanted.message not in got["message"]:
                problems.append(f"message {got['message']!r} does not contain {wanted.message!r}")
            if problems:
                failures.append(f"{shown(case.source)}:error: " + "; ".join(problems))
    elif got is not None:
        failures.append(f"{shown(case.source)}: the run failed with {got['type']}: {got['message']}")
    if golden is not None and "error" in golden.model_fields_set:
        snapshot = golden.error.model_dump() if golden.error is not None else None
        if snapshot != got:
            result.golden.append(unified(f"{shown(golden_path)}:error", snapshot, got))
