"""The one place fix commands come from. Every command a failure message tells a user to run is
built here, and tests run each one to check that it ends green.

A command selects exactly the failing case by its pytest node id (``-k`` would also match
every case whose id contains the same words), and records against the emulator when the case
is emulated (it has an ``emulate:`` script, or its cassette was recorded against the emulator).

A change the user means (a prompt, a tool's docstring, the emulator's script) is accepted by one
command, ``--accept``, whatever it touched: it records the stale cassettes of the failing cases
again (each against the emulator when it was recorded there) and writes their goldens, in one
pass, so that the next replay under ``CI`` is green (``golden/accepting.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Sequence

from rag_core.evals.common.commands import pytest_command

if TYPE_CHECKING:
    from rag_core.evals.runs.schema import CaseEntry

# at most this many failing cases are named one by one in the command that accepts them all; past
# it the command names their test files (``--accept`` leaves a case that passes as it is)
NAMED_CASES = 3


def _pytest(selector: str, *options: str) -> str:
    return pytest_command([selector], options)


def _source(emulated: bool) -> list[str]:
    return ["--emulator"] if emulated else []


def live_note(emulated: bool) -> str:
    return "" if emulated else " (set the provider's API key, e.g. OPENAI_API_KEY, to record against the live API)"


def record(selector: str, emulated: bool) -> str:
    """A case with no cassette yet: record it; its first golden is written with it."""
    return _pytest(selector, "--record-mode=once", *_source(emulated))


def accept(selector: str) -> str:
    """A change the case shows that the user means: record its stale cassettes again (against the
    emulator where they were recorded there) and write its golden; review the diff before
    committing."""
    return _pytest(selector, "--accept")


def accept_all(selectors: Sequence[str]) -> str | None:
    """The one command that accepts the changes of every case named (by node id): the cases
    themselves when they are few, else their test files (None when none is named)."""
    chosen = list(dict.fromkeys(selector for selector in selectors if selector))
    if not chosen:
        return None
    if len(chosen) > NAMED_CASES:
        chosen = list(dict.fromkeys(selector.split("::", 1)[0] for selector in chosen))
    return pytest_command(chosen, ["--accept"])


def accept_cases(cases: Sequence[CaseEntry]) -> str | None:
    """The one command that accepts the change of every case of a run that shows one
    (``CaseEntry.accept``): those that failed, and those that passed with a stale cassette, which
    CI fails."""
    return accept_all([case.selector for case in cases if case.accept and (case.status == "failed" or case.stale)])


def record_again(selector: str, emulated: bool) -> str:
    """A cassette that cannot be read: record it again. The golden is not rewritten: the new
    recording is compared with it, as a replay would be."""
    return _pytest(selector, "--record-mode=rewrite", *_source(emulated))


def with_emulator(selector: str, record_mode: str, update_goldens: bool, live: bool, accepting: bool = False) -> str:
    """A recording (or live run, or acceptance) that went to the live API without a key: the same
    against the built-in emulator."""
    if live:
        return _pytest(selector, "--live", "--emulator")
    if accepting:
        return _pytest(selector, "--accept", "--emulator")
    return _pytest(selector, f"--record-mode={record_mode}", "--emulator", *(["--update-goldens"] if update_goldens else []))


class FixCommands(Protocol):
    """The commands a played subject's failures name (``play.py``), for the kind of thing it is."""

    def record(self, emulated: bool) -> str:
        """It has no recording yet."""

    def record_again(self, emulated: bool) -> str:
        """Its cassette cannot be read."""

    def rerecord(self, emulated: bool) -> str:
        """Its recording no longer matches what it sends."""


@dataclass(frozen=True)
class CaseCommands:
    """A golden case's: its recording comes with its golden, which ``--accept`` records again
    together."""

    selector: str

    def record(self, emulated: bool) -> str:
        return record(self.selector, emulated) + live_note(emulated)

    def record_again(self, emulated: bool) -> str:
        return record_again(self.selector, emulated) + live_note(emulated)

    def rerecord(self, emulated: bool) -> str:
        return accept(self.selector) + live_note(emulated)


@dataclass(frozen=True)
class RetrieverCommands:
    """A recorded retriever's: its cassette and rankings, recorded together; never recorded, it
    may be meant either way (against the emulator, or live)."""

    selector: str

    def record(self, emulated: bool) -> str:
        return (f"{_pytest(self.selector, '--record-mode=once', '--emulator')} (against the built-in emulator; "
                "without --emulator, against the live API, with the provider's key set)")

    def record_again(self, emulated: bool) -> str:
        return _pytest(self.selector, "--record-mode=rewrite", *_source(emulated))

    def rerecord(self, emulated: bool) -> str:
        return _pytest(self.selector, "--record-mode=rewrite", *_source(emulated))


def missing_turns(turns: list[Any], path: str, request: dict[str, Any]) -> str:
    """What to add to a script the agent ran past. An agent that ends its run only on a tool call
    (smolagents' ``final_answer``, a structured-output tool) asks again after a text answer: more
    text turns would never end it."""
    from rag_core.evals.wire.traffic import tools

    last_was_text = bool(turns) and getattr(turns[-1], "text", None) is not None and not getattr(turns[-1], "tool_calls", [])
    offered = [t.get("name") for t in tools(path, request) if t.get("name")]
    finishing = [name for name in offered if "final" in name.lower() or "answer" in name.lower()]
    if last_was_text and finishing:
        return (f"the request after the last turn (a text answer) still offers {finishing[0]!r}: an agent that ends "
                f"only on that tool call needs it scripted, e.g. - {{tool_calls: [{{name: {finishing[0]}, "
                "arguments: {...}}]}")
    if last_was_text and offered:
        return ("add the missing turns to emulate: (if the agent ends its run only on a tool call rather than a text "
                f"answer, script that call: it offers {', '.join(offered)})")
    return "add the missing turns to emulate:"
