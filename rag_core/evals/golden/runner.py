"""Run one golden case: play its subjects (``playing.py``), observe what they did, write its golden
when asked to, and check the run (``checks.evaluate``)."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag_core.evals import credentials
from rag_core.evals.atomic import write_atomic
from rag_core.evals.common import value_sizes
from rag_core.evals.common.errors import HarnessError
from rag_core.evals.common.failure import Failure
from rag_core.evals.common.paths import shown
from rag_core.evals.common.value_sizes import large_values
from rag_core.evals.common.yaml_dump import dump
from rag_core.evals.golden import judging
from rag_core.evals.golden.case import GoldenCase, load_expect, read_golden
from rag_core.evals.golden.case_run import CaseRun
from rag_core.evals.golden.checks import UNFINISHED, Findings, evaluate
from rag_core.evals.golden.checks.same_change import grouped
from rag_core.evals.golden.normalizing import normalize
from rag_core.evals.golden.playing import Played, Settings, play_subjects
from rag_core.evals.recording import fix_commands
from rag_core.evals.recording.recorder import CaseRecorder
from rag_core.evals.wire import traffic

__all__ = ["CaseResult", "Observation", "Settings", "observe_run", "run_case"]


@dataclass
class CaseResult:
    case_id: str
    failures: list[Failure] = field(default_factory=list)
    stale: list[Failure] = field(default_factory=list)  # failures too under --strict-cassettes or a golden diff
    updated: bool = False
    new_golden: bool = False  # written for the first time: to be reviewed before committing
    recorded: bool = False
    tokens: int = 0
    wire: dict[str, Any] = field(default_factory=dict)  # the golden fields read from the case's traffic
    notes: list[str] = field(default_factory=list)  # worth a warning, not a failure
    fixes: list[str] = field(default_factory=list)  # commands that fix the failures (not failures themselves)
    completed: bool = True  # False: the run raised or made no provider call (its first failure says which)
    pushbacks: list[Any] = field(default_factory=list)  # the provider's 429s and 5xx met while recording
    emulated: bool = False  # its cassette was recorded, or is to be recorded, against the emulator
    written: list[str] = field(default_factory=list)  # the files the run wrote: cassettes recorded, the golden
    # the command that accepts its change (``fix_commands.accept``) when --accept has one to accept
    # (a golden that differs or is missing, a stale cassette); None when it has not
    accept: str | None = None
    accepted: bool = False  # written by --accept (``accepting.py``)


@dataclass(frozen=True)
class Observation:
    """What a case's subjects did, as golden fields: what a golden is written from, and the
    ``CaseRun`` its checks read once the golden is known."""

    case: GoldenCase
    played: Played
    other: Played | None
    observed: dict[str, Any]
    wire: dict[str, Any]
    other_wire: dict[str, Any] | None
    turn_references: list[list[dict[str, Any]]]
    recording: bool
    selector: str

    def run(self, golden: Any) -> CaseRun:
        return CaseRun(self.case, self.observed, self.wire, self.played.facts(), golden,
                       self.other.facts() if self.other is not None else None, self.other_wire, self.recording,
                       self.selector, self.played.recorder.script_digest, self.turn_references)


def observe_run(case: GoldenCase, played: Played, other: Played | None, recording: bool = False,
                selector: str = "") -> Observation:
    """What the case's run observed: its golden fields (the agent's own account, or for a target
    its traffic), and what its traffic shows."""
    seen_on_wire = traffic.fields_of(played.replay.exchanges[:played.judge_start], played.turn_starts)
    own, references = played.subject.golden_fields(played.produced, seen_on_wire, played.error)
    observed = normalize(own, case.rules)
    if case.expect.judge:
        observed["judges"] = normalize({"judges": judging.observed(played.judgements)}, case.rules)["judges"]
    other_wire = traffic.fields_of(other.replay.exchanges, other.turn_starts) if other is not None else None
    return Observation(case, played, other, observed, seen_on_wire, other_wire, references, recording, selector)


def run_case(case: GoldenCase, settings: Settings, selector: str | None = None) -> CaseResult:
    """Run one case. ``selector`` is what selects it on a pytest command line (its node id), for hints."""
    selector = selector or case.id
    played, other = play_subjects(case, settings, selector)
    recording = played.take.recording
    seen = observe_run(case, played, other, recording, selector)
    result = CaseResult(case.id, recorded=recording, wire=seen.wire, tokens=seen.observed["usage"].get("total_tokens", 0),
                        pushbacks=played.replay.pushbacks + (other.replay.pushbacks if other is not None else []),
                        emulated=bool(case.emulate) or played.take.emulated)
    for each in (played, other):
        if each is not None and each.take.at_import:
            result.notes.append(f"{each.who}: while its module was imported, the network guard refused "
                                + "; ".join(map(str, each.take.at_import)) + " (the import went on without it)")
    recorders = [played.recorder] + ([other.recorder] if other is not None else [])
    mode = "record" if recording else "replay"
    golden_path = case.golden_path
    # a case recorded for the first time gets its first golden with the recording: replay alone
    # (CI) never writes one, so a case without a reviewed golden still fails there
    first_golden = recording and not golden_path.exists()
    text = dump(seen.observed) if settings.update_goldens or first_golden else None
    try:
        # a golden being written is not read (it may be the broken file being replaced): the run is
        # checked against the case alone
        golden = None if text is not None else load_expect(golden_path)
        found = evaluate(seen.run(golden), mode)
        if not found.completed:  # its golden stays as it is, compared with what the run did observe
            golden = load_expect(golden_path) if text is not None else golden
            return _not_completed(evaluate(seen.run(golden), mode) if text is not None else found, seen, result,
                                  settings, recorders)
        staged = _staged_golden(case, seen, text, result)
    except BaseException:
        for each in recorders:
            each.discard()
        raise
    if recording:
        for each in recorders:
            each.commit()
        result.written += [shown(each.path) for each in recorders]
    if staged is not None:
        os.replace(staged, golden_path)
        result.written.append(shown(golden_path))
    result.notes += _large_values(case, recorders if recording else [], seen.observed if staged is not None else None)
    return _judged(result, found, settings, selector, shown(golden_path),
                   written=text is not None, missing=golden is None and text is None)


def _judged(result: CaseResult, found: Findings, settings: Settings, selector: str, golden: str, *,
            written: bool, missing: bool) -> CaseResult:
    """A completed run's failures, each change once, and the one fix that accepts the case's change.
    ``written``: its golden was just written; ``missing``: it has none, and none was written."""
    result.stale = grouped(found.stale)
    result.failures += found.how_it_went
    rerecorded = bool(found.stale) or any(failure.check in _RECORDED_AGAIN for failure in found.how_it_went)
    if rerecorded or found.golden_changed or missing:
        result.accept = fix_commands.accept(selector)
    if written:
        result.failures = grouped(result.failures + found.snapshot + found.hand_written)
        return result
    if missing:
        result.failures.append(Failure("golden", "golden", golden, "",
                                       f"{golden}: no golden file yet; write it with {result.accept}, then review it"))
    stale_fail = bool(found.stale) and (settings.strict_cassettes or bool(found.snapshot))
    if found.golden_changed or stale_fail or any(failure.check in _RECORDED_AGAIN for failure in result.failures):
        # one fix for the case, whatever its change shows up in: a stale cassette's own fix is this
        # command too, so a failure that repeats it says it no more
        note = fix_commands.live_note(result.emulated) if rerecorded else ""
        result.fixes.append(f"if the change is intended: {result.accept}{note}, then review the diff (git diff)")
        result.failures = [dataclasses.replace(f, fix=None) if f.check in _RECORDED_AGAIN else f for f in result.failures]
    result.failures += found.snapshot + found.hand_written  # hand-written: --accept changes none
    if stale_fail:
        result.failures += [dataclasses.replace(f, fix=None) for f in found.stale]
    result.failures = grouped(result.failures)
    return result


# failures whose fix is to record the cassette again, which --accept does
_RECORDED_AGAIN = ("stale", "unused")


def _staged_golden(case: GoldenCase, seen: Observation, text: str | None, result: CaseResult) -> Path | None:
    """The new golden (``text``), refused if it holds a credential, compared with the old one and,
    when it differs, staged beside it before anything is committed: the cassette and the golden are
    replaced together or not at all."""
    if text is None:
        return None
    golden_path = case.golden_path
    credentials.check(shown(golden_path), seen.observed)
    previous = read_golden(golden_path)
    if previous == text:
        return None
    result.new_golden, result.updated = previous is None, True
    staged = golden_path.with_name(f".{golden_path.name}.staged")
    _stage(staged, text, golden_path)
    return staged


def _large_values(case: GoldenCase, recorded: list[CaseRecorder], golden: dict[str, Any] | None) -> list[str]:
    """A warning per file just recorded or written (the case, its cassettes, its golden) that
    holds a value over ``value_sizes.LARGE``."""
    files: list[tuple[Path | None, Any]] = [(each.path, each.large) for each in recorded]
    if recorded:
        files.insert(0, (case.source, large_values(case.model_dump(exclude_defaults=True))))
    if golden is not None:
        files.append((case.golden_path, large_values(golden)))
    return [value_sizes.warning(shown(path), found) for path, found in files if found]


def _not_completed(found: Findings, seen: Observation, result: CaseResult, settings: Settings,
                   recorders: list[CaseRecorder]) -> CaseResult:
    """A run that did not complete observed no snapshot of the program: its golden is not written
    from it (``--update-goldens`` keeps the old one, byte for byte), and why it did not complete
    leads the report. A comparison with a value it did observe (the requests it sent before it
    raised) is shown after it; a comparison with what it never produced (a diff against null), or
    that would offer a fix, is named in one line. No fix is offered: accepting what it observed, or
    recording it again, is never the fix."""
    for each in recorders:  # a recording that did not complete is refused before this; keep nothing
        each.discard()
    case, how = seen.case, found.how_it_went
    raised = [f for f in how if f.check == "raised"]
    # a run that raised made no (further) call because it raised: the exception is the news
    leads = raised or [f for f in how if f.check == "no_calls"]
    compared = [f for f in found.snapshot + found.hand_written
                if not (f.check == "error" and f.source == "case")]  # "the run failed with ...": the lead says it
    shown_too = [f for f in how if f.check == "network"] + [  # the guard's refusals: often why it raised
        f for f in compared if f.compares_values and f.observed not in (None, "", [], {})]
    summed_up = ([f for f in how if f.check not in (*UNFINISHED, "network")] + found.stale
                 + [f for f in compared if not any(f is kept for kept in shown_too)])
    notes = []
    if settings.update_goldens or settings.accept or seen.recording:
        golden = shown(case.golden_path)
        notes.append(f"{golden} is kept as it was: a golden is written only from a run that completed"
                     if case.golden_path.exists() else
                     f"no golden is written to {golden}: a golden is written only from a run that completed")
    if summed_up:
        named: dict[str, list[str]] = {}
        for failure in summed_up:
            what = {"unused": "unused interactions", "stale": f"stale {failure.field}"}.get(failure.check, failure.field)
            if what not in named.setdefault(failure.where, []):
                named[failure.where].append(what)
        notes.append("differences not shown, since the run did not complete: "
                     + "; ".join(f"{where}: {', '.join(whats)}" for where, whats in named.items()))
    leads[0] = dataclasses.replace(leads[0], message="\n  ".join([leads[0].message, *notes]))
    result.failures = leads + shown_too
    result.stale, result.fixes, result.completed, result.accept = [], [], False, None
    return result


def _stage(staged: Path, text: str, golden_path: Path) -> None:
    """The new golden beside the old one, whole, ready to be renamed over it."""
    try:
        write_atomic(staged, text)
    except OSError as exc:
        staged.unlink(missing_ok=True)
        raise HarnessError(f"{shown(golden_path)}: the golden cannot be written ({exc.strerror or exc}); "
                           "the committed cassette and golden are unchanged") from None
