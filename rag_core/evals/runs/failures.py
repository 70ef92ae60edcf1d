"""A case's typed failures as the record keeps them: bounded, and never holding a credential.

Runs where the case ran (a pytest-xdist worker, or the only process): only what fits the bounds
travels to the controller in the test report's ``user_properties``, as the other golden
properties do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rag_core.evals.runs.bounds import REPEAT_LIMIT, VALUE_LIMIT, bound_value, cut_text
from rag_core.evals.runs.schema import FailureEntry, LiveSummary

if TYPE_CHECKING:
    from rag_core.evals.common.failure import Failure

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
                       fix=failure.fix, label=list(failure.label) if isinstance(failure.label, tuple) else failure.label,
                       also=list(failure.also), same_as=failure.same_as or "")
    return _held(out, failure.message, failure.golden, failure.observed, failure.diff(), failure.compares_values)


def screened(made: FailureEntry) -> FailureEntry:
    """A failure another part of the harness made (a ``--live`` run's, sent as JSON) held to the same
    bounds and the same detector as ``entry``'s: the record trusts no producer to have done it."""
    out = FailureEntry(check=made.check, source=made.source, where=made.where, field=made.field, fix=made.fix,
                       label=made.label, truncated=dict(made.truncated), withheld=list(made.withheld),
                       also=list(made.also), same_as=made.same_as)
    return _held(out, made.message, made.golden, made.observed, made.diff, made.has_values)


def _held(out: FailureEntry, message: str, golden: Any, observed: Any, diff: str, has_values: bool) -> FailureEntry:
    out.message = _text_field(out, "message", message)
    if has_values:
        out.has_values = True
        for name, given in (("golden", golden), ("observed", observed)):
            value, full = bound_value(given)
            if full is not None:
                out.truncated[name] = full
            reason = _withheld(value)
            if reason:
                _note_withheld(out, name)
                value = reason
            setattr(out, name, value)
    out.diff = _text_field(out, "diff", diff) if diff else ""
    return out


def _note_withheld(out: FailureEntry, name: str) -> None:
    if name not in out.withheld:
        out.withheld.append(name)


def _text_field(out: FailureEntry, name: str, text: str) -> str:
    text, full = cut_text(text, VALUE_LIMIT)
    if full is not None:
        out.truncated[name] = full
    reason = _withheld(text)  # the detector reads a diff's lines whatever mark opens them
    if reason:
        _note_withheld(out, name)
        return reason
    return text


def withheld_text(text: str) -> str:
    """A free text (a failure's report, a skip reason), bounded, or the note that it was withheld."""
    text, _ = cut_text(text, VALUE_LIMIT)
    return _withheld(text) or text


def live_summary(data: dict[str, Any]) -> LiveSummary:
    """A case's ``rag_core_live`` property as the record keeps it: the aggregate, and its first
    ``REPEAT_LIMIT`` runs with their failures bounded and screened (a property without runs, from
    a harness that sent none, gives a summary without them)."""
    summary = LiveSummary.from_json(data)
    summary.repeats = summary.repeats[:REPEAT_LIMIT]
    for repeat in summary.repeats:
        repeat.failures = [screened(failure) for failure in repeat.failures]
    return summary
