"""How the run went, before what it produced: a subject that reached for the network or made no
provider call pinned nothing; a recording it did not use up means it makes fewer calls now; a
request it sends differently from the recording makes the cassette stale."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from rag_core.evals.harness import hints
from rag_core.evals.harness.case import GoldenCase
from rag_core.evals.harness.case_run import CaseRun
from rag_core.evals.harness.failure import Failure
from rag_core.evals.harness.observe import normalize
from rag_core.evals.harness.paths import shown
from rag_core.evals.harness.raised import described, origin
from rag_core.evals.harness.volatile import volatile

if TYPE_CHECKING:
    from rag_core.evals.harness.network import BlockedAttempt
    from rag_core.evals.harness.runner import Played


def blocked_message(blocked: list[BlockedAttempt]) -> str:
    """Why a run that reached for the network is not trusted (it made calls no cassette holds)."""
    counted = Counter(str(attempt) for attempt in blocked)
    listed = "; ".join(f"{what} (×{n})" if n > 1 else what for what, n in list(counted.items())[:5])
    if len(counted) > 5:
        listed += f"; and {len(counted) - 5} more"
    return (f"it reached for the network, which is closed while a case runs: {listed}. Only the HTTP clients the "
            "harness intercepts are recorded and replayed (httpx, httpx2, requests/urllib3, aiohttp, http.client, "
            "boto3, tornado, httplib2, and DSPy's own transports); call the provider through one of them")


def no_calls_message(case: GoldenCase, subject: str) -> str | None:
    """A subject that made no provider call pinned nothing; a case says so when it means it."""
    if (case.expect.usage or {}).get("max_rounds") == 0:
        return None
    return (f"{shown(case.source)}: {subject} made no provider call, so the case pins nothing (a coroutine "
            "never awaited, a cached answer, a client the harness does not intercept?); if that is what it should "
            "do, say so with expect: {usage: {max_rounds: 0}}")


def raised(run: CaseRun) -> list[Failure]:
    """A subject, or a judge, that raised in a case that expects no error (``expect: error:``): its
    run did not complete, so what it observed is not a snapshot of the program. The exception and
    where it was raised lead the case's report."""
    if run.case.expect.error is not None:
        return []
    failures = []
    for played, subject in _subjects(run):
        if played.error is not None:
            failures.append(_raised(run, subject or "the agent", played.error, played.subject.defined_at()))
        if played.judge_error is not None:
            index = len(played.judgements)
            metric = (run.case.expect.judge or [])[index].metric
            failures.append(_raised(run, f"the judge of expect.judge[{index}] ({metric})", played.judge_error, None))
    return failures


def _raised(run: CaseRun, who: str, error: BaseException, defined: str | None) -> Failure:
    where = origin(error)
    if where is not None:
        place = f"\n  raised at {where}"
    elif defined is not None:  # it failed in being called (its signature): look at its definition
        place = f"\n  raised in calling it (defined at {defined})"
    else:
        place = ""
    return Failure("raised", "case", shown(run.case.source), "error", f"{who} raised {described(error)}{place}")


def _subjects(run: CaseRun) -> list[tuple[Played, str]]:
    subjects = [(run.played, run.case.target or "the agent")] if run.played is not None else []
    if run.other is not None:
        subjects.append((run.other, run.case.compare_with or ""))
    return subjects


def network(run: CaseRun) -> list[Failure]:
    if run.recording:
        return []  # a recording that reached for the network is refused before it is checked
    return [Failure("network", "cassette", shown(played.recorder.path), "network",
                    f"{run.case.id}: {subject}: " + blocked_message(played.blocked))
            for played, subject in _subjects(run) if played.blocked]


def no_calls(run: CaseRun) -> list[Failure]:
    if run.recording:
        return []
    failures = []
    for played, subject in _subjects(run):
        problem = no_calls_message(run.case, subject or "the agent") if played.judge_start == 0 else None
        if problem:
            failures.append(Failure("no_calls", "case", shown(run.case.source), "expect.usage.max_rounds", problem))
    return failures


def unused(run: CaseRun) -> list[Failure]:
    if run.recording:
        return []
    return [Failure("unused", "cassette", shown(played.recorder.path), "interactions",
                    f"{shown(played.recorder.path)}: {played.replay.unused} recorded interaction(s) were not used: "
                    f"the run made fewer provider calls than when it was recorded. Record it again: "
                    f"{hints.rerecord(run.selector, _emulated(run, played))}")
            for played, _ in _subjects(run) if played.replay.unused]


def _emulated(run: CaseRun, played: Played) -> bool:
    """Whether the cassette was (or is to be) recorded against the emulator."""
    from rag_core.evals.harness.recorder import EMULATOR_TARGET

    return bool(run.case.emulate) or played.replay.recorded_with.get("target") == EMULATOR_TARGET


def stale(run: CaseRun, script_digest: str | None) -> list[Failure]:
    """A report for every replayed request whose body differs from the recorded one, and for an
    emulated case whose ``emulate:`` script changed since it was recorded (``script_digest`` is
    the case's script now)."""
    if run.recording:
        return []
    return [report for played, _ in _subjects(run) for report in _stale(played, run, script_digest)]


def _stale(played: Played, run: CaseRun, script_digest: str | None) -> list[Failure]:
    from rag_core.evals.harness.recorder import EMULATOR_TARGET

    replay, path, case = played.replay, played.recorder.path, run.case
    emulated = replay.recorded_with.get("target") == EMULATOR_TARGET
    fix = f"record it again: {hints.rerecord(run.selector, emulated)}{hints.live_note(emulated)}"
    reports = []
    recorded_script = replay.recorded_with.get("script")
    if emulated and recorded_script is not None and recorded_script != script_digest:
        reports.append(Failure("stale", "cassette", shown(path), "recorded_with.script",
                               f"stale cassette {shown(path)}: the case's emulate: script changed since it was "
                               "recorded", fix=fix))
    # the case's normalize rules on requests hold for the cassette too: a value the golden
    # declares volatile does not make the cassette stale
    rules = [r for r in case.rules if r.path.startswith("requests[*]")]
    now = normalize({"requests": [pair.sent for pair in replay.pairs]}, rules)["requests"]
    then = normalize({"requests": [pair.recorded for pair in replay.pairs]}, rules)["requests"]
    for index, (pair, sent, recorded) in enumerate(zip(replay.pairs, now, then)):
        if sent != recorded:
            message = (f"stale cassette {shown(path)} (request #{index + 1}, {pair.path}, differs from what the agent "
                       "now sends)")
            found, absorb = volatile(recorded, sent), fix
            if found is not None:
                message += f" only in values made anew each run: {found.fields()}"
                # recording again helps only once: a value of a source not seeded differs again next time
                absorb = (f"if the program makes them with uuid, random or secrets, which the harness seeds within "
                          f"a case, {fix}; if it makes them otherwise (os.urandom, numpy, the time), make them the "
                          f"same in every run, or add these rules to {shown(case.source)}:\n{found.yaml()}\n"
                          f"then accept the golden: {hints.update_goldens(run.selector)}")
            reports.append(Failure("stale", "cassette", shown(path), f"request[{index}]", message, golden=recorded,
                                   observed=sent, label=f"{path.name}:request[{index}]", fix=absorb))
    return reports

