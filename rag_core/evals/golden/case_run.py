"""What one case's run observed, the single input of every check (``harness/checks/``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag_core.evals.golden.case import Expect, GoldenCase

if TYPE_CHECKING:
    from rag_core.evals.golden.runner import Played


@dataclass
class CaseRun:
    case: GoldenCase
    # the golden fields the run produced (normalized by the case's rules): a rag_core agent's own
    # account of its run, or for a target what its traffic shows
    observed: dict[str, Any]
    wire: dict[str, Any]  # what the subject's traffic shows (``wire.observe``), judges' calls apart
    golden_path: Path
    golden: Expect | None = None  # the reviewed golden; None when it was just written, or in a live run
    played: Played | None = None  # the subject's run: its cassette, replay, judges, guard
    other: Played | None = None  # the ``compare_with`` subject's
    other_wire: dict[str, Any] | None = None
    recording: bool = False
    selector: str = ""  # what selects the case on a pytest command line, for the hints
    # per turn, the searches a rag_core agent reports (a target reports none)
    turn_references: list[list[dict[str, Any]]] = field(default_factory=list)

    @property
    def is_agent(self) -> bool:
        """A rag_core agent: its own account of the run can be checked against its traffic."""
        return self.case.target is None
