"""A golden case's subjects played in their cassettes (``recording/play.py``): its own subject,
judged, then its ``compare_with`` subject, within the case's time limit. What is a golden case's
own lives here: the turns, the judges, the emulator script, and why a recording of it is refused
beyond what ``play`` refuses (the script ran out, or was not used up; the subject made no call).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from rag_core.evals.common.errors import CaseFileError, RecordingFailed
from rag_core.evals.common.paths import shown
from rag_core.evals.emulator.conditions import Conditions
from rag_core.evals.golden import judging, time_limit
from rag_core.evals.golden.build import PROVIDER, build_model
from rag_core.evals.golden.case import GoldenCase
from rag_core.evals.golden.case_run import SubjectRun
from rag_core.evals.golden.checks.replay import no_calls_message
from rag_core.evals.golden.subjects import Subject, subject_of
from rag_core.evals.golden.targets import TargetContext
from rag_core.evals.recording import fix_commands, recorded_live, stuck
from rag_core.evals.recording.play import PlayOptions, Take, play
from rag_core.evals.recording.recorder import CaseRecorder
from rag_core.evals.recording.retrying import asked_wait
from rag_core.evals.recording.throttling import RETRYABLE


@dataclass
class Settings:
    cassettes_dir: Path
    fixtures_dir: Path
    record_mode: str = "none"
    emulator: bool = False  # --emulator: recordings are answered by the in-process emulator
    strict_cassettes: bool = False
    block_network: bool = False
    update_goldens: bool = False
    accept: bool = False  # --accept: a failing case's intended change is accepted (``accepting.py``)
    record_timeout: float = 60.0  # seconds a provider may take to answer one request while recording
    live: bool = False  # --live: run against the providers (or the emulator) and keep nothing
    repeat: int = 1  # --repeat: runs per case under --live
    concurrency: int = 1  # --concurrency: live runs at once per provider
    retries: int = 2  # --retries: runs again of a live run the provider pushed back
    # --emulator-latency / --emulator-capacity: how the emulator answers (None: at once, without limit)
    conditions: Conditions | None = None
    # (case, vcr) -> None: the project's pytest_rag_core_configure_cassette hook (see hookspecs.py)
    configure_cassette: Callable[[GoldenCase, Any], None] | None = None
    # --case-timeout: how long one run of a case may take (a case's timeout: over it)
    case_timeouts: time_limit.CaseTimeouts = field(default_factory=time_limit.CaseTimeouts)

    @property
    def play_options(self) -> PlayOptions:
        return PlayOptions(self.record_mode, self.emulator, self.block_network, self.record_timeout, self.conditions)


def script_digest(case: GoldenCase) -> str | None:
    """A fingerprint of the case's ``emulate:`` script, kept in the cassette so an edited script
    shows the cassette as stale."""
    if not case.emulate and not case.emulate_judge:
        return None
    script: Any = [t.model_dump(exclude_defaults=True) for t in case.emulate]
    if case.emulate_judge:  # an edited verdict makes the cassette stale too
        script = {"emulate": script, "emulate_judge": [v.model_dump() for v in case.emulate_judge]}
    text = json.dumps(script, sort_keys=True, ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass
class Played:
    """One subject's run inside its cassette: what it produced and what crossed the wire."""

    take: Take
    turn_starts: list[int]
    produced: Any  # the agent and its outputs, or a target's answers
    error: BaseException | None
    subject: Subject  # what ran: the case's agent, or a target
    who: str  # as failures name it
    judge_start: int = 0  # exchanges from here on are the judges'
    judgements: list[Any] = field(default_factory=list)
    judge_error: BaseException | None = None
    seconds: float = 0.0  # the subject's turns, wall clock (judges not included)
    problem: str | None = None  # under --live: why the run would not have been kept as a recording

    @property
    def recorder(self) -> CaseRecorder:
        return self.take.recorder

    @property
    def replay(self) -> Any:
        return self.take.replay

    def facts(self) -> SubjectRun:
        """What the checks read of it."""
        replay = self.take.replay
        return SubjectRun(self.who, self.take.recorder.path, self.take.emulated, replay.recorded_with.get("script"),
                          tuple(replay.pairs), replay.unused, tuple(self.take.blocked), self.error,
                          self.subject.defined_at(), self.judge_start > 0, tuple(self.judgements), self.judge_error)


def _script_problem(case: GoldenCase, take: Take, agent_calls: int) -> str | None:
    """Why an emulated recording's script did not fit the run: it ran out (for the subject, or
    for its judges), or was not used up."""
    provider = take.emulator
    if provider is None:
        return None
    if provider.overrun is not None and case.expect.judge and provider.overrun_at >= agent_calls:
        return (f"{shown(case.source)}: expect.judge has {len(case.expect.judge or [])} judge(s), but "
                f"emulate_judge scripts {len(case.emulate_judge)} verdict(s): give the emulator one verdict per judge "
                "under emulate_judge: (score, reason, claims)")
    if provider.overrun is not None:
        return (f"{shown(case.source)}: emulate: scripts {len(provider.turns)} turn(s), but the agent made "
                f"more model calls ({provider.overrun}); "
                + fix_commands.missing_turns(provider.turns, provider.paths[-1], provider.requests[-1]))
    if provider.unserved_problem is not None:  # its 404s are the emulator's, not the provider's
        return f"{shown(case.source)}: {provider.unserved_problem}"
    return None


def _unused_turns(case: GoldenCase, take: Take) -> str | None:
    provider = take.emulator
    if provider is None or not provider.unused or case.allow_unused_turns:
        return None
    used = len(provider.turns) - provider.unused
    return (f"{shown(case.source)}: emulate: scripts {len(provider.turns)} turn(s), but the run asked for "
            f"{used}: turns #{used + 1}–#{len(provider.turns)} were never used (remove them, or set "
            "allow_unused_turns: true)")


def _recording_problem(case: GoldenCase, played: Played, agent_calls: int) -> str | None:
    """Why a recording of the case must not be kept, or None when it succeeded."""
    take = played.take
    script = _script_problem(case, take, agent_calls)
    if script is not None and take.blocked == []:
        return script
    error = played.error or played.judge_error
    problem = take.refusal(error, expects_error=case.expect.error is not None,
                           error_status_hint="; a case that tests an error must say so under expect: error:")
    if problem is not None:
        return problem
    if not played.judge_start and no_calls_message(case, played.who):
        return no_calls_message(case, played.who)
    return _unused_turns(case, take)


def _play(case: GoldenCase, settings: Settings, selector: str, cassette: Path, subject: Subject, who: str,
          judged: bool = True) -> Played:
    """Record or replay one subject of a case (its rag_core agent, or a callable it names) in
    ``cassette``, then its judges (when ``judged``); raises when the cassette is missing or does
    not fit, or when a recording failed (nothing is written then)."""
    configure = functools.partial(settings.configure_cassette, case) if settings.configure_cassette else None
    recorder = CaseRecorder(cassette, settings.record_mode, script_digest(case), configure)
    recorder.keep = not settings.live  # a live run keeps nothing: its recording is never written
    script = list(case.emulate) + (judging.emulated_turns(case) if judged else [])
    keys = [PROVIDER[spec.api] for spec in subject.models()
            + ([judging.judge_model(spec, case) for spec in case.expect.judge or []] if judged else [])]
    turn_starts: list[int] = []
    judge_start, judgements, judge_error, agent_calls = 0, [], None, 0
    with play(case.id, recorder, settings.play_options, fix_commands.CaseCommands(selector),
              emulated=bool(case.emulate), script=script, seed=case.id, clock=case.clock, keys=keys,
              provider=subject.provider) as take:
        if take.emulator is not None and judged and judging.missing_verdicts(case):
            raise CaseFileError(judging.missing_verdicts(case))
        with stuck.preparing(subject), take.preparing():  # imported or built in the case's environment, behind the guard
            subject.prepare(timeout=settings.record_timeout if take.recording else None)
        take.imported()
        with take.cassette() as replay:
            started = time.perf_counter()
            context = TargetContext(turn=0, turns=len(case.inputs), clock=case.clock, stream=bool(case.stream),
                                    emulated=take.emulator is not None or take.replayed_emulated,
                                    fixtures=settings.fixtures_dir)
            with stuck.running(subject, turn_starts, len(case.inputs)):
                produced, error = subject.run(turn_starts, replay, context)
            seconds = time.perf_counter() - started
            judge_start = len(replay.exchanges)
            agent_calls = len(take.emulator.requests) if take.emulator is not None else 0  # the judges' come after
            if judged and case.expect.judge and error is None:
                answer, judged_context = subject.judge_inputs(produced, replay, turn_starts)

                def judge_model(spec: Any) -> Any:
                    return build_model(spec, timeout=settings.record_timeout if take.recording else None)

                with stuck.judging(recorder):
                    judgements, judge_error = judging.run_judges(case, answer, judged_context, recorder, judge_model)
    played = Played(take, turn_starts, produced, error, subject, who, judge_start, judgements, judge_error, seconds)
    unrecorded = take.unrecorded(error or judge_error, subject.name)
    if unrecorded is not None:
        raise unrecorded
    played.problem = _recording_problem(case, played, agent_calls) if take.recording else None
    if take.live_recording and played.problem is not None:  # the user's environment again: without the case's dummy keys
        played.problem += recorded_live.note(error or judge_error, replay.recorded, os.environ, fix_commands.with_emulator(
            selector, settings.record_mode, settings.update_goldens, settings.live, settings.accept), bool(case.emulate))
    if settings.live:
        recorder.discard()  # a live run keeps nothing
    elif played.problem is not None:
        recorder.discard()
        pushed_back = any(status in RETRYABLE for _, _, status in replay.recorded) and case.expect.error is None
        raise RecordingFailed(
            f"{case.id}: recording failed, nothing was written ({shown(recorder.path)} and "
            f"{shown(case.golden_path)} are as they were): {played.problem}",
            pushed_back=pushed_back, wait=asked_wait(replay.pushbacks))
    return played


def _inside(folder: Path, name: str, case: GoldenCase) -> Path:
    """The cassette ``name`` in ``folder``, checked where it really is: a folder on the way may be
    a symbolic link out of the cassettes folder (the case file's check reads only the text)."""
    path = folder / name
    real, root = path.resolve(), folder.resolve()
    if not real.is_relative_to(root):
        raise CaseFileError(f"{shown(case.source)}: cassette: {name} is {real}, outside the cassettes folder "
                            f"{root} (through a symbolic link)")
    return path


def play_subjects(case: GoldenCase, settings: Settings, selector: str) -> tuple[Played, Played | None]:
    """Play the case's subject (judged), then its ``compare_with`` subject, if any, in their
    cassettes under ``settings.cassettes_dir``; if the second fails, the first's recording is
    discarded too. Both within the case's time limit, if it has one (``time_limit.py``)."""
    limit = settings.case_timeouts.of(case)
    if limit is None:
        return _play_both(case, settings, selector)
    writes = not settings.live and (settings.record_mode != "none" or settings.update_goldens)
    intact = ([shown(settings.cassettes_dir / name) for name in case.cassette_names()] + [shown(case.golden_path)]
              if writes else [])  # what a run that overran leaves as it was, for its message
    return time_limit.within(case.id, limit, functools.partial(_play_both, case, settings, selector), intact)


def _play_both(case: GoldenCase, settings: Settings, selector: str) -> tuple[Played, Played | None]:
    played = _play(case, settings, selector, _inside(settings.cassettes_dir, case.cassette_name(), case),
                   subject_of(case, case.target), case.target or "the agent")
    if case.compare_with is None:
        return played, None
    try:
        return played, _play(case, settings, selector, _inside(settings.cassettes_dir, case.compare_cassette_name(), case),
                             subject_of(case, case.compare_with, "compare_with"), case.compare_with, judged=False)
    except BaseException:
        played.recorder.discard()
        raise
