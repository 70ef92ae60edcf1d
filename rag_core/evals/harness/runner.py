"""Run one golden case: build the agent, replay or record its cassette, observe, compare."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from rag_core.evals.atomic import write_atomic
from rag_core.evals import credentials
from rag_core.evals.harness import cassette_format, hints
from rag_core.evals.harness import judging
from rag_core.evals.harness.case import GoldenCase, load_expect, read_golden
from rag_core.evals.harness.errors import (CaseFileError, CassetteFileError, HarnessError, RecordingFailed,
                                          UnrecordedRequestError)
from rag_core.evals.harness import wire
from rag_core.evals.harness.case_run import CaseRun
from rag_core.evals.harness.checks import HAND_WRITTEN, SNAPSHOT, replay as replay_checks, run_checks
from rag_core.evals.harness.checks.replay import blocked_message, no_calls_message
from rag_core.evals.harness.failure import Failure
from rag_core.evals.harness.observe import normalize
from rag_core.evals.harness.paths import shown
from rag_core.evals.harness.raised import described, origin
from rag_core.evals.harness import seeded_randomness, stuck, time_limit, value_sizes
from rag_core.evals.harness.value_sizes import large_values
from rag_core.evals.harness.subjects import Subject, subject_of
from rag_core.evals.harness.target import TargetContext
from rag_core.evals.harness.provider_env import provider_environment
from rag_core.evals.harness.pushback import RETRYABLE
from rag_core.evals.harness.retrying import asked_wait
from rag_core.evals.harness.recorder import EMULATOR_TARGET, CaseRecorder, require_key
from rag_core.evals.harness.network import BlockedAttempt, network_blocked
from rag_core.evals.harness.wait_bound import bounded_waits
from rag_core.evals.harness.build import PROVIDER, build_model
from rag_core.evals.emulator.conditions import Conditions
from rag_core.evals.emulator.provider import ScriptedProvider
from rag_core.evals.harness.yaml_dump import dump


@dataclass
class Settings:
    cassettes_dir: Path
    fixtures_dir: Path
    record_mode: str = "none"
    emulator: bool = False  # --emulator: recordings are answered by the in-process emulator
    strict_cassettes: bool = False
    block_network: bool = False
    update_goldens: bool = False
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


@functools.cache
def _sdk_version(provider: str | None) -> str:
    """What the cassette records as the SDK; for a target, every provider SDK installed. Read
    once per process: reading a package's metadata from disk took a third of a millisecond or
    more per case, and the installed versions do not change under a running session."""
    from importlib.metadata import PackageNotFoundError, version

    from rag_core.providers import PROVIDERS, by_name

    wanted = by_name(provider).sdk_packages if provider is not None else list(dict.fromkeys(
        package for each in PROVIDERS for package in each.sdk_packages))
    found = []
    for package in wanted:
        try:
            found.append(f"{package} {version(package)}")
        except PackageNotFoundError:
            pass
    return ", ".join(found)


def _in_chain(exc: BaseException | None, wanted: tuple[type, ...]) -> BaseException | None:
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, wanted):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def _timeout_types() -> tuple[type, ...]:
    types: list[type] = [TimeoutError]
    for module, name in (("openai", "APITimeoutError"), ("httpx", "TimeoutException"), ("httpx2", "TimeoutException")):
        try:
            types.append(getattr(__import__(module), name))
        except (ImportError, AttributeError):
            pass
    return tuple(types)


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


def _recording_problem(case: GoldenCase, replay: Any, error: BaseException | None, provider: Any,
                       settings: Settings, blocked: list[BlockedAttempt], idle: str | None) -> str | None:
    """Why a recording must not be kept, or None when it succeeded; ``idle`` names the subject when
    it made no provider call."""
    if blocked:
        return blocked_message(blocked)
    if provider is not None and provider.overrun is not None:
        return (f"{shown(case.source)}: emulate: scripts {len(provider.turns)} turn(s), but the agent made "
                f"more model calls ({provider.overrun}); " + hints.missing_turns(provider.turns, provider.requests[-1]))
    timed_out = _in_chain(error, _timeout_types())
    if timed_out is not None:
        request = getattr(timed_out, "request", None)
        what = f"{request.method} {request.url}" if request is not None else "a provider request"
        return (f"request #{len(replay.recorded) + 1} of the case ({what}) got no answer within "
                f"{settings.record_timeout:g} s (--record-timeout)")
    expects_error = case.expect.error is not None
    failed_calls = [f"{method} {path} answered HTTP {status}" for method, path, status in replay.recorded if status >= 400]
    if failed_calls and not expects_error:
        return ("the provider answered with an error status (" + "; ".join(failed_calls) + "); a case that tests an "
                "error must say so under expect: error:")
    if error is not None and not expects_error:
        where = origin(error)
        return f"the run failed: {described(error)}" + (f" (raised at {where})" if where else "")
    if idle is not None and no_calls_message(case, idle):
        return no_calls_message(case, idle)
    if provider is not None and provider.unused and not case.allow_unused_turns:
        used = len(provider.turns) - provider.unused
        return (f"{shown(case.source)}: emulate: scripts {len(provider.turns)} turn(s), but the run asked for "
                f"{used}: turns #{used + 1}–#{len(provider.turns)} were never used (remove them, or set "
                "allow_unused_turns: true)")
    return None


@dataclass
class Played:
    """One subject's run inside its cassette: what it produced and what crossed the wire."""

    recorder: CaseRecorder
    replay: Any
    turn_starts: list[int]
    produced: Any  # the agent and its outputs, or a target's answers
    error: BaseException | None
    subject: Subject  # what ran: the case's agent, or a target
    judge_start: int = 0  # exchanges from here on are the judges'
    judgements: list[Any] = field(default_factory=list)
    judge_error: BaseException | None = None
    seconds: float = 0.0  # the subject's turns, wall clock (judges not included)
    problem: str | None = None  # under --live: why the run would not have been kept as a recording
    blocked: list[BlockedAttempt] = field(default_factory=list)  # network the subject reached for while it ran
    blocked_at_import: list[BlockedAttempt] = field(default_factory=list)  # ... and while its module was imported


def _play(case: GoldenCase, settings: Settings, selector: str, cassette: Path, subject: Subject,
          judged: bool = True) -> Played:
    """Record or replay one subject of a case (its rag_core agent, or a callable it names) in
    ``cassette``, then its judges (when ``judged``); raises when the cassette is missing or does
    not fit, or when a recording failed (nothing is written then).

    The subject runs in the same environment in every mode (``provider_env``), behind the network
    guard from its import on (except while recording live), and sends its requests where it
    always does: the cassette replays them, or the emulator answers them in-process, or (live)
    the provider does."""
    configure = functools.partial(settings.configure_cassette, case) if settings.configure_cassette else None
    recorder = CaseRecorder(cassette, settings.record_mode, script_digest(case), configure)
    recorder.keep = not settings.live  # a live run keeps nothing: its recording is never written
    recording = recorder.will_record
    emulated = bool(case.emulate) or settings.emulator
    try:
        recorder.check()  # a cassette this run reads must be one; one a recording replaces is not read
    except CassetteFileError as exc:
        emulated = emulated or cassette_format.names_the_emulator(exc.text)
        raise CassetteFileError(f"{case.id}: {exc}; record it again: {hints.record_again(selector, emulated)}"
                                f"{hints.live_note(emulated)}", exc.text) from None
    if not recording and not recorder.path.exists():
        raise UnrecordedRequestError(
            f"{case.id}: no cassette {shown(recorder.path)} yet. Record it: "
            f"{hints.record(selector, emulated)}{hints.live_note(emulated)}"
        )
    provider = None
    if recording and settings.emulator:
        # seeded by the case: a compared subject gets the same ids as the case's own
        script = list(case.emulate) + (judging.emulated_turns(case) if judged else [])
        provider = ScriptedProvider(script, seed=case.id)
    live = recording and provider is None
    guard = network_blocked(case.id) if (settings.block_network or not live) else nullcontext([])
    waits = bounded_waits(settings.record_timeout) if live else nullcontext()  # the target's clients too
    turn_starts: list[int] = []
    sdk = _sdk_version(subject.provider)
    if live:  # before the case's environment fills missing keys with dummies
        models = subject.models() + ([judging.judge_model(spec, case) for spec in case.expect.judge or []]
                                     if judged else [])
        for spec in models:
            require_key(PROVIDER[spec.api])
    with guard as blocked, provider_environment(), waits:
        # imported or built in the case's environment, behind the guard
        with stuck.preparing(subject), seeded_randomness.seeded(case.id, case.clock, "prepare"):
            subject.prepare(timeout=settings.record_timeout if recording else None)
        at_import, blocked[:] = list(blocked), []
        with recorder.use(sdk, provider, settings.conditions if provider is not None else None) as replay, \
                seeded_randomness.seeded(case.id, case.clock):  # its ids and keys, as its clock, the case's
            started = time.perf_counter()
            context = TargetContext(turn=0, turns=len(case.inputs), clock=case.clock, stream=bool(case.stream),
                                    emulated=provider is not None or (
                                        not recording and replay.recorded_with.get("target") == EMULATOR_TARGET),
                                    fixtures=settings.fixtures_dir)
            with stuck.running(subject, turn_starts, len(case.inputs)):
                produced, error = subject.run(turn_starts, replay, context)
            seconds = time.perf_counter() - started
            judge_start, judgements, judge_error = len(replay.exchanges), [], None
            agent_calls = len(provider.requests) if provider is not None else 0  # the judges' come after
            if judged and case.expect.judge and error is None:
                answer, judged_context = subject.judge_inputs(produced, replay, turn_starts)

                def judge_model(spec: Any) -> Any:
                    return build_model(spec, timeout=settings.record_timeout if recording else None)

                with stuck.judging(recorder):
                    judgements, judge_error = judging.run_judges(case, answer, judged_context, recorder, judge_model)
        during_run = list(blocked)
    from vcr.errors import CannotOverwriteExistingCassetteException

    missing = _in_chain(error or judge_error, (CannotOverwriteExistingCassetteException,))
    if missing is not None:
        request = getattr(missing, "failed_request", None)
        what = f"{request.method} {request.path}" if request is not None else "a request"
        emulated = emulated or replay.recorded_with.get("target") == EMULATOR_TARGET
        raise UnrecordedRequestError(
            f"{case.id}: {subject.name} sent {what} (request #{len(replay.pairs) + 1}), which "
            f"{shown(recorder.path)} does not hold: it makes more or other provider calls than when it was "
            f"recorded. Record it again: {hints.rerecord(selector, emulated)}{hints.live_note(emulated)}"
        )
    judges_overran = (provider is not None and provider.overrun is not None and bool(case.expect.judge)
                      and provider.overrun_at >= agent_calls)
    if judges_overran:  # the script ran out while a judge asked: its verdicts are what is missing
        problem: str | None = (
            f"{shown(case.source)}: expect.judge has {len(case.expect.judge or [])} judge(s), but "
            f"emulate_judge scripts {len(case.emulate_judge)} verdict(s): give the emulator one verdict per judge "
            "under emulate_judge: (score, reason, claims)")
    else:
        problem = (_recording_problem(case, replay, error or judge_error, provider, settings, during_run,
                                      None if judge_start else subject.name) if recording else None)
    if settings.live:
        recorder.discard()  # a live run keeps nothing
    elif problem is not None:
        recorder.discard()
        pushed_back = any(status in RETRYABLE for _, _, status in replay.recorded) and case.expect.error is None
        raise RecordingFailed(
            f"{case.id}: recording failed, nothing was written ({shown(recorder.path)} and "
            f"{shown(case.golden_path)} are as they were): {problem}",
            pushed_back=pushed_back, wait=asked_wait(replay.pushbacks))
    return Played(recorder, replay, turn_starts, produced, error, subject, judge_start, judgements, judge_error,
                  seconds, problem, during_run, at_import)


def observe_run(case: GoldenCase, played: Played, other: Played | None, recording: bool = False,
                selector: str = "") -> CaseRun:
    """What the case's run observed: its golden fields (the agent's own account, or for a target
    its traffic), what its traffic shows, and what its checks need besides."""
    seen_on_wire = wire.observe(played.replay.exchanges[:played.judge_start], played.turn_starts)
    own, references = played.subject.observe(played.produced, seen_on_wire, played.error)
    observed = normalize(own, case.rules)
    if case.expect.judge:
        observed["judges"] = normalize({"judges": judging.observed(played.judgements)}, case.rules)["judges"]
    other_wire = wire.observe(other.replay.exchanges, other.turn_starts) if other is not None else None
    return CaseRun(case, observed, seen_on_wire, case.golden_path, played=played, other=other, other_wire=other_wire,
                   recording=recording, selector=selector, turn_references=references)


def snapshot_failures(run: CaseRun) -> list[Failure]:
    """The snapshot checks' failures, the golden's first (what --update-goldens rewrites), then
    the hand-written ones."""
    found = run_checks(run, SNAPSHOT)
    return [f for f in found if f.source == "golden"] + [f for f in found if f.source != "golden"]


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
                   subject_of(case, case.target))
    if case.compare_with is None:
        return played, None
    try:
        return played, _play(case, settings, selector, _inside(settings.cassettes_dir, case.compare_cassette_name(), case),
                             subject_of(case, case.compare_with, "compare_with"), judged=False)
    except BaseException:
        played.recorder.discard()
        raise


def run_case(case: GoldenCase, settings: Settings, selector: str | None = None) -> CaseResult:
    """Run one case. ``selector`` is what selects it on a pytest command line (its node id), for hints."""
    selector = selector or case.id
    result = CaseResult(case.id)
    played, other = play_subjects(case, settings, selector)
    recording = played.recorder.will_record
    result.recorded = recording
    run = observe_run(case, played, other, recording, selector)
    result.wire = run.wire
    result.pushbacks = played.replay.pushbacks + (other.replay.pushbacks if other is not None else [])
    result.tokens = run.observed["usage"].get("total_tokens", 0)
    for each, subject in ((played, case.target or "the agent"), (other, case.compare_with)):
        if each is not None and each.blocked_at_import:
            result.notes.append(f"{subject}: while its module was imported, the network guard refused "
                                + "; ".join(map(str, each.blocked_at_import)) + " (the import went on without it)")
    how = run_checks(run, (replay_checks.raised, replay_checks.network, replay_checks.no_calls, replay_checks.unused))
    result.stale = replay_checks.stale(run, script_digest(case))
    recorders = [played.recorder] + ([other.recorder] if other is not None else [])
    if any(f.check in UNFINISHED for f in how):
        return _not_completed(run, result, how, settings, recorders)
    result.failures += how
    golden_path = case.golden_path
    # a case recorded for the first time gets its first golden with the recording: replay alone
    # (CI) never writes one, so a case without a reviewed golden still fails there
    first_golden = recording and not golden_path.exists()
    text = dump(run.observed) if settings.update_goldens or first_golden else None
    # the new golden is refused, read against the old one and staged before anything is committed:
    # the cassette and the golden are replaced together or not at all
    staged: Path | None = None
    try:
        if text is not None:
            credentials.check(shown(golden_path), run.observed)
            previous = read_golden(golden_path)
            if previous != text:
                result.new_golden, result.updated = previous is None, True
                staged = golden_path.with_name(f".{golden_path.name}.staged")
                _stage(staged, text, golden_path)
    except BaseException:
        for each in recorders:
            each.discard()
        raise
    if recording:
        for each in recorders:
            each.commit()
    if staged is not None:
        os.replace(staged, golden_path)
    result.notes += _large_values(case, recorders if recording else [], run.observed if staged is not None else None)
    if text is not None:
        result.failures += snapshot_failures(run) + run_checks(run, HAND_WRITTEN)
        return result
    run.golden = load_expect(golden_path)
    if run.golden is None:
        result.failures.append(Failure("golden", "golden", shown(golden_path), "",
                                       f"{shown(golden_path)}: no golden file yet; write it with "
                                       f"{hints.update_goldens(selector)} and review it"))
    snapshot = snapshot_failures(run)
    if any(f.source == "golden" for f in snapshot) and run.golden is not None and not result.stale:
        # only a golden's own fields are what --update-goldens rewrites; with a stale cassette the
        # re-record command (in the stale report) is the one that works
        result.fixes.append(f"if the change is intended: {hints.update_goldens(selector)}, then review the golden diff")
    result.failures += snapshot + run_checks(run, HAND_WRITTEN)  # hand-written: --update-goldens changes none
    if result.stale and (settings.strict_cassettes or snapshot):
        result.failures += result.stale
    return result


def _large_values(case: GoldenCase, recorded: list[CaseRecorder], golden: dict[str, Any] | None) -> list[str]:
    """A warning per file just recorded or written (the case, its cassettes, its golden) that
    holds a value over ``value_sizes.LARGE``."""
    files: list[tuple[Path | None, Any]] = [(each.path, each.large) for each in recorded]
    if recorded:
        files.insert(0, (case.source, large_values(case.model_dump(exclude_defaults=True))))
    if golden is not None:
        files.append((case.golden_path, large_values(golden)))
    return [value_sizes.warning(shown(path), found) for path, found in files if found]


# the checks that say a run did not complete: it raised (and no error was expected), or it made no
# provider call (and the case does not say that is what it does)
UNFINISHED = ("raised", "no_calls")


def _not_completed(run: CaseRun, result: CaseResult, how: list[Failure], settings: Settings,
                   recorders: list[CaseRecorder]) -> CaseResult:
    """A run that did not complete observed no snapshot of the program: its golden is not written
    from it (``--update-goldens`` keeps the old one, byte for byte), and why it did not complete
    leads the report. A comparison with a value it did observe (the requests it sent before it
    raised) is shown after it; a comparison with what it never produced (a diff against null), or
    that would offer a fix, is named in one line. No fix is offered: accepting what it observed, or
    recording it again, is never the fix."""
    for each in recorders:  # a recording that did not complete is refused before this; keep nothing
        each.discard()
    case = run.case
    run.golden = load_expect(case.golden_path)
    raised = [f for f in how if f.check == "raised"]
    # a run that raised made no (further) call because it raised: the exception is the news
    leads = raised or [f for f in how if f.check == "no_calls"]
    compared = [f for f in snapshot_failures(run) + run_checks(run, HAND_WRITTEN)
                if not (f.check == "error" and f.source == "case")]  # "the run failed with ...": the lead says it
    shown_too = [f for f in how if f.check == "network"] + [  # the guard's refusals: often why it raised
        f for f in compared if f.compares_values and f.observed not in (None, "", [], {})]
    summed_up = ([f for f in how if f.check not in (*UNFINISHED, "network")] + result.stale
                 + [f for f in compared if not any(f is kept for kept in shown_too)])
    notes = []
    if settings.update_goldens or run.recording:
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
    result.stale, result.fixes, result.completed = [], [], False
    return result


def _stage(staged: Path, text: str, golden_path: Path) -> None:
    """The new golden beside the old one, whole, ready to be renamed over it."""
    try:
        write_atomic(staged, text)
    except OSError as exc:
        staged.unlink(missing_ok=True)
        raise HarnessError(f"{shown(golden_path)}: the golden cannot be written ({exc.strerror or exc}); "
                           "the committed cassette and golden are unchanged") from None
