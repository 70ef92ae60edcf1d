"""What one case's run came to, the single input of every check (``golden/checks/``): a plain fact
sheet, built once the run is over and its golden is read. It holds no recorder, no cassette and no
subject, so a check can be tested with a ``CaseRun`` written as a literal."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag_core.evals.golden.case import Expect, GoldenCase
from rag_core.evals.golden.judges import Judgement
from rag_core.evals.recording.network import BlockedAttempt
from rag_core.evals.recording.cassette_traffic import Pair


@dataclass(frozen=True)
class SubjectRun:
    """What one subject (the case's agent or target, or its ``compare_with`` subject) did in its
    cassette."""

    who: str  # as failures name it: "the agent", or the callable's "module:name"
    cassette: Path
    emulated: bool  # the cassette was (or is to be) recorded against the emulator: its commands say --emulator
    recorded_script: str | None = None  # the ``emulate:`` script's digest the cassette was recorded with
    pairs: tuple[Pair, ...] = ()  # each replayed request: the body sent now, and the recorded one
    unused: int = 0  # recorded interactions the run did not use
    blocked: tuple[BlockedAttempt, ...] = ()  # what the network guard refused while it ran
    error: BaseException | None = None  # what it raised
    defined_at: str | None = None  # where a target is defined (a call that fails on its signature fails there)
    made_calls: bool = True  # it made at least one provider call (judges' apart)
    judgements: tuple[Judgement, ...] = ()
    judge_error: BaseException | None = None  # the judge that gave no verdict raised this


@dataclass(frozen=True)
class CaseRun:
    case: GoldenCase
    # the golden fields the run produced (normalized by the case's rules): a rag_core agent's own
    # account of its run, or for a target what its traffic shows
    observed: dict[str, Any]
    wire: dict[str, Any]  # what the subject's traffic shows (``wire.observe``), judges' calls apart
    subject: SubjectRun
    golden: Expect | None = None  # the reviewed golden; None when it was just written, or in a live run
    other: SubjectRun | None = None  # the ``compare_with`` subject's run
    other_wire: dict[str, Any] | None = None
    recording: bool = False
    selector: str = ""  # what selects the case on a pytest command line, for the fix commands
    script_digest: str | None = None  # the case's ``emulate:`` script now
    # per turn, the searches a rag_core agent reports (a target reports none)
    turn_references: list[list[dict[str, Any]]] = field(default_factory=list)

    @property
    def golden_path(self) -> Path:
        return self.case.golden_path

    @property
    def is_agent(self) -> bool:
        """A rag_core agent: its own account of the run can be checked against its traffic."""
        return self.case.target is None

    def subjects(self) -> list[SubjectRun]:
        return [self.subject] + ([self.other] if self.other is not None else [])
