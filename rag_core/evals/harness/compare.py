"""Compare what a case produced with its golden snapshot and its hand-written checks."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any

from rag_core.evals.harness.case import Expect, GoldenCase, ToolCallsExpect
from rag_core.evals.harness.paths import shown
from rag_core.evals.harness.yaml_dump import dump

SNAPSHOT_FIELDS = ("system_prompt", "user_messages", "tools", "apis", "requests", "references", "judges", "usage",
                   "error")


def unified(label: str, expected: Any, observed: Any) -> str:
    before = dump(expected).splitlines(keepends=True)
    after = dump(observed).splitlines(keepends=True)
    return "".join(difflib.unified_diff(before, after, f"{label} (expected)", f"{label} (observed)"))


def _key(call: dict[str, Any]) -> str:
    return json.dumps(call, sort_keys=True, ensure_ascii=False)


def check_tool_calls(expected: ToolCallsExpect, observed: list[dict[str, Any]]) -> bool:
    wanted = [{"name": c.name, "arguments": c.arguments} for c in expected.calls]
    if expected.any_order:
        remaining = sorted(_key(c) for c in observed)
        for call in sorted(_key(c) for c in wanted):
            if call not in remaining:
                return False
            remaining.remove(call)
        return expected.allow_extra or not remaining
    if not expected.allow_extra:
        return wanted == observed
    position = 0  # wanted must appear in order, extras allowed between
    for call in observed:
        if position < len(wanted) and call == wanted[position]:
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


def compare(case: GoldenCase, golden: Expect | None, observed: dict[str, Any], golden_path: Path) -> list[str]:
    """One message per failed check; each names the file and the field."""
    failures: list[str] = []
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
                    failures.append(unified(f"{source}:{name}", wanted, observed.get(name)))
    calls = observed["tool_calls"]["calls"]
    options = hand.tool_calls
    expected_calls = options if options is not None and options.calls else None
    if expected_calls is None and golden is not None and golden.tool_calls is not None:
        expected_calls = ToolCallsExpect(
            calls=golden.tool_calls.calls,
            allow_extra=options.allow_extra if options else False,
            any_order=options.any_order if options else False,
        )
    if expected_calls is not None and not check_tool_calls(expected_calls, calls):
        source = case_file if options is not None and options.calls else golden_file
        mode = ", ".join(k for k in ("any_order", "allow_extra") if getattr(expected_calls, k)) or "exact order"
        failures.append(
            unified(f"{source}:tool_calls ({mode})",
                    [{"name": c.name, "arguments": c.arguments} for c in expected_calls.calls], calls)
        )
    content = answer_text(observed["output"])
    if hand.output is not None:
        if not check_output(hand.output, content, (observed["output"] or {}).get("structured")):
            failures.append(f"{case_file}:output: {hand.output.model_dump(exclude_none=True)} does not hold for {content!r}")
    elif golden is not None and "output" in golden.model_fields_set:
        wanted = golden.output.model_dump(exclude_none=True) if golden.output is not None else None
        if wanted != observed["output"]:
            failures.append(unified(f"{golden_file}:output", wanted, observed["output"]))
    failures += _check_error(case, golden, observed, golden_path)
    return failures


def _check_error(case: GoldenCase, golden: Expect | None, observed: dict[str, Any], golden_path: Path) -> list[str]:
    got = observed.get("error")
    failures = []
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
            failures.append(unified(f"{shown(golden_path)}:error", snapshot, got))
    return failures
