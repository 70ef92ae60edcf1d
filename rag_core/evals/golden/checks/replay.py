"""How the run went, before what it produced: a subject that raised, reached for the network or
made no provider call pinned nothing; a recording it did not use up means it makes fewer calls
now; a request it sends differently from the recording makes the cassette stale."""

from __future__ import annotations

from rag_core.evals.common.failure import Failure
from rag_core.evals.common.paths import shown
from rag_core.evals.common.raised import described, origin
from rag_core.evals.golden.case import GoldenCase
from rag_core.evals.golden.case_run import CaseRun, SubjectRun
from rag_core.evals.golden.normalizing import normalize
from rag_core.evals.golden.volatile import volatile
from rag_core.evals.recording import fix_commands
from rag_core.evals.recording.network import blocked_message


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
    for subject in run.subjects():
        if subject.error is not None:
            failures.append(_raised(run, subject.who, subject.error, subject.defined_at))
        if subject.judge_error is not None:
            index = len(subject.judgements)
            metric = (run.case.expect.judge or [])[index].metric
            failures.append(_raised(run, f"the judge of expect.judge[{index}] ({metric})", subject.judge_error, None))
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


def network(run: CaseRun) -> list[Failure]:
    return [Failure("network", "cassette", shown(subject.cassette), "network",
                    f"{run.case.id}: {subject.who}: " + blocked_message(list(subject.blocked)))
            for subject in run.subjects() if subject.blocked]


def no_calls(run: CaseRun) -> list[Failure]:
    failures = []
    for subject in run.subjects():
        problem = no_calls_message(run.case, subject.who) if not subject.made_calls else None
        if problem:
            failures.append(Failure("no_calls", "case", shown(run.case.source), "expect.usage.max_rounds", problem))
    return failures


def unused(run: CaseRun) -> list[Failure]:
    return [Failure("unused", "cassette", shown(subject.cassette), "interactions",
                    f"{shown(subject.cassette)}: {subject.unused} recorded interaction(s) were not used: "
                    "the run made fewer provider calls than when it was recorded",
                    fix=f"record it again: {fix_commands.accept(run.selector)}{fix_commands.live_note(subject.emulated)}")
            for subject in run.subjects() if subject.unused]


def stale(run: CaseRun) -> list[Failure]:
    """A report for every replayed request whose body differs from the recorded one, and for an
    emulated case whose ``emulate:`` script changed since it was recorded."""
    return [report for subject in run.subjects() for report in _stale(subject, run)]


def _stale(subject: SubjectRun, run: CaseRun) -> list[Failure]:
    path, case = subject.cassette, run.case
    emulated = subject.recorded_script is not None or subject.emulated
    fix = f"record it again: {fix_commands.accept(run.selector)}{fix_commands.live_note(emulated)}"
    reports = []
    if subject.recorded_script is not None and subject.recorded_script != run.script_digest:
        reports.append(Failure("stale", "cassette", shown(path), "recorded_with.script",
                               f"stale cassette {shown(path)}: the case's emulate: script changed since it was "
                               "recorded", fix=fix))
    # the case's normalize rules on requests hold for the cassette too: a value the golden
    # declares volatile does not make the cassette stale
    rules = [r for r in case.rules if r.path.startswith("requests[*]")]
    now = normalize({"requests": [pair.sent for pair in subject.pairs]}, rules)["requests"]
    then = normalize({"requests": [pair.recorded for pair in subject.pairs]}, rules)["requests"]
    for index, (pair, sent, recorded) in enumerate(zip(subject.pairs, now, then)):
        if sent != recorded:
            message = (f"stale cassette {shown(path)} (request #{index + 1}, {pair.path}, differs from what the agent "
                       "now sends)")
            found, hint = volatile(recorded, sent), ""
            if found is not None:
                # recording again helps only once: a value of a source not seeded differs again next
                # time; either way the fix (--accept) is the same command
                hint = (f"only in values made anew each run: {found.fields()}. If the program makes them with uuid, "
                        "random or secrets, which the harness seeds within a case, recording it again makes them "
                        "the same in every run; if it makes them otherwise (os.urandom, numpy, the time), make them "
                        f"the same in every run, or add these rules to {shown(case.source)}:\n{found.yaml()}\n"
                        "and accept the change")
                message += f" {hint}"
            reports.append(Failure("stale", "cassette", shown(path), f"request[{index}]", message, golden=recorded,
                                   observed=sent, label=f"{path.name}:request[{index}]", fix=fix, hint=hint))
    return reports
