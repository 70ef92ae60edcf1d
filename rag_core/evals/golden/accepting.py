"""``--accept``: a change the user means, accepted in one pass, so that the next replay under ``CI``
is green.

Each selected case is replayed first, as CI replays it. What the replay found decides the rest:

- it passed, and its cassette is not stale: nothing is written;
- its run did not complete (it raised, or made no provider call): nothing is written, and its
  failure says so (``runner._not_completed``); accepting what such a run observed is never the fix;
- its golden differs, or it has none, and its cassette still holds what it sends: its golden is
  written from the replay;
- its cassette is stale (a request differs, the ``emulate:`` script changed, recorded interactions
  went unused, or a request is not in it at all): the case is recorded again, and its golden written
  from that recording, the two together or neither (``runner.run_case``). Against the emulator when
  the case or its cassette is emulated; a cassette recorded against the live API is recorded there
  again, with the provider's key, and without it the case fails saying so.

The hand-written checks are the case's own: accepting changes none of them, and a case whose
hand-written checks fail still fails, after its files are accepted.
"""

from __future__ import annotations

import dataclasses

from rag_core.evals.common.errors import HarnessError, UnrecordedRequestError
from rag_core.evals.golden.case import GoldenCase
from rag_core.evals.golden.concurrent_runs import RecordingSession
from rag_core.evals.golden.runner import CaseResult, Settings, run_case
from rag_core.evals.recording.cassette_format import names_the_emulator

# what the replay found that only a new recording fixes
_RECORDED_AGAIN = ("stale", "unused")


def accept_case(case: GoldenCase, settings: Settings, selector: str) -> CaseResult:
    """Replay the case and accept the change it shows, as the module docstring says."""
    replaying = dataclasses.replace(settings, record_mode="none", update_goldens=False, accept=True)
    try:
        replayed = run_case(case, replaying, selector)
    except UnrecordedRequestError:  # no cassette yet, or one that does not hold a request it sends now
        return _record_again(case, settings, selector, settings.emulator or _emulated_cassette(case, settings))
    if not replayed.completed or replayed.accept is None:
        return replayed
    if replayed.stale or any(failure.check in _RECORDED_AGAIN for failure in replayed.failures):
        return _record_again(case, settings, selector, settings.emulator or replayed.emulated)
    written = run_case(case, dataclasses.replace(replaying, update_goldens=True), selector)
    written.accepted = written.completed
    return written


def _record_again(case: GoldenCase, settings: Settings, selector: str, emulated: bool) -> CaseResult:
    recording = dataclasses.replace(settings, record_mode="rewrite", update_goldens=True, accept=True, emulator=emulated)
    session = RecordingSession(recording)  # as a recording session records a case: retried on a provider's pushback
    try:
        result = session.result(case, selector)
    except HarnessError as exc:
        if emulated:
            raise
        said = str(exc).removeprefix(f"{case.id}: ")
        raise HarnessError(f"{case.id}: its cassette was recorded against the live API, so accepting its change "
                           f"records it again there: {said}") from None
    finally:
        session.close()
    result.accepted = result.completed
    return result


def _emulated_cassette(case: GoldenCase, settings: Settings) -> bool:
    """Whether the case records against the emulator: it has an ``emulate:`` script, or a cassette
    of it says it was recorded there."""
    if case.emulate:
        return True
    for name in case.cassette_names():
        path = settings.cassettes_dir / name
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:  # not recorded yet: without a script it records live
            continue
        if names_the_emulator(text):
            return True
    return False
