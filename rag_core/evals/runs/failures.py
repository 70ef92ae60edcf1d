"""A case's typed failures as the record keeps them: bounded, and never holding a credential.

Runs where the case ran (a pytest-xdist worker, or the only process): only what fits the bounds
travels to the controller in the test report's ``user_properties``, as the other golden
properties do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rag_core.evals.runs.bounds import VALUE_LIMIT, bound_value, cut_text
from rag_core.evals.runs.schema import FailureEntry

if TYPE_CHECKING:
    from rag_core.evals.harness.failure import Failure
    from rag_core.evals.harness.runner import CaseResult

PROPERTY = "rag_core_failures"  # the user property that carries them


def _withheld(value: Any) -> str | None:
    """Why ``value`` must not reach the record, or None. The harness writes no file that holds a
    credential (a case's input or a tool's output can carry one into an observed value); a record
    leaves the value out, keeps the rest, and says so."""
    from rag_core.evals.credentials import detector

    findings = detector().find(value)
    return f"(withheld: it looks like a credential: {findings[0].kind})" if findings else None


def entry(failure: Failure) -> FailureEntry:
    out = FailureEntry(check=failure.check, source=failure.source, where=failure.where, field=failure.field,
                       fix=failure.fix, label=list(failure.label) if isinstance(failure.label, tuple) else failure.label)
    out.message = _text_field(out, "message", failure.message)
    if failure.compares_values:
        out.has_values = True
        for name in ("golden", "observed"):
            value, full = bound_value(getattr(failure, name))
            if full is not None:
                out.truncated[name] = full
            reason = _withheld(value)
            if reason:
                out.withheld.append(name)
                value = reason
            setattr(out, name, value)
        out.diff = _text_field(out, "diff", failure.diff())
    return out


def _without_diff_marks(diff: str) -> str:
    """A diff's lines without their first column: the detector looks for a credential after a
    boundary, and "-" or "+" glued to its front would hide it."""
    return "\n".join(line[1:] for line in diff.splitlines())


def _text_field(out: FailureEntry, name: str, text: str) -> str:
    text, full = cut_text(text, VALUE_LIMIT)
    if full is not None:
        out.truncated[name] = full
    reason = _withheld(text) or (_withheld(_without_diff_marks(text)) if name == "diff" else None)
    if reason:
        out.withheld.append(name)
        return reason
    return text


def case_property(result: CaseResult) -> tuple[str, dict[str, Any]]:
    """The user property for one case's result: its failures and the commands that fix them."""
    return PROPERTY, {"failures": [entry(f).to_json() for f in result.failures], "fixes": list(result.fixes)}


def withheld_text(text: str) -> str:
    """A free text (a failure's report, a skip reason), bounded, or the note that it was withheld."""
    text, _ = cut_text(text, VALUE_LIMIT)
    return _withheld(text) or _withheld(_without_diff_marks(text)) or text  # it may hold a diff
