"""Recorded retrievers: a target's (or a built-in store's reranker's) provider traffic in a
cassette, its rankings beside it, replayed in CI with no key and no network.

Each such retriever has two files under ``<rag_core_cassettes>/retrieval/<suite>/``:

    <retriever>.yaml            the provider traffic (embeddings, a hosted reranker, any HTTP the
                                harness intercepts), as golden cases' cassettes hold theirs
    <retriever>.rankings.json   the rankings the recording produced

It runs as a golden case's subject runs, with the harness's own pieces: in the case environment
(``provider_environment``), behind the network guard (``network_blocked``; off only while
recording live), inside ``CaseRecorder`` (replay; record live; or, with ``--emulator``, record
with a ``ScriptedProvider`` answering embeddings and reranking in-process). A plain run replays:
a request the cassette does not hold fails naming it and the command that records it again, and
so do rankings other than the recorded ones (stale: the first query that differs), since the
numbers of a replay are only worth what its rankings are. A recording is kept only when the whole
run succeeded: the rankings are staged, then the cassette and the rankings are committed together.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from rag_core.evals.common.paths import shown

FOLDER = "retrieval"  # inside the project's cassettes folder (rag_core_cassettes)


class RecordingError(ValueError):
    """A retriever's recording is missing, stale, or could not be made; the message says which
    file, and the command that fixes it."""


@dataclass(frozen=True)
class ReplaySettings:
    """The session's recording options, as golden cases read them."""

    cassettes: Path  # <rag_core_cassettes>/retrieval
    record_mode: str = "none"
    emulator: bool = False  # --emulator: recordings are answered by the in-process emulator
    block_network: bool = False  # --block-network: the guard stays on while recording live too
    strict: bool = False  # --strict-cassettes (default under CI): requests that changed fail, not only rankings
    live: bool = False  # --live: retrievers marked live: true run (against their service)


@dataclass(frozen=True)
class RecordingFiles:
    cassette: Path
    rankings: Path

    @classmethod
    def of(cls, settings: ReplaySettings, suite: str, retriever: str) -> RecordingFiles:
        folder = settings.cassettes / suite
        stem = file_stem(retriever)
        return cls(folder / f"{stem}.yaml", folder / f"{stem}.rankings.json")


def file_stem(retriever: str) -> str:
    """A retriever's name as a file name: a sweep point ``bm25[k1=1.2,b=0.75]`` becomes
    ``bm25@k1=1.2,b=0.75``; characters a file system may refuse become ``_``."""
    name = retriever.replace("[", "@").removesuffix("]")
    return re.sub(r"[^A-Za-z0-9_.,=@+-]", "_", name)


@dataclass
class RecordedRankings:
    """What ``<retriever>.rankings.json`` holds."""

    suite: str
    retriever: str
    depth: int
    emulated: bool  # recorded against the emulator (a command recording it again says --emulator)
    rankings: dict[str, list[str]]

    def data(self) -> dict[str, Any]:
        """The file's content as JSON data (what its writer screens)."""
        return {"suite": self.suite, "retriever": self.retriever, "depth": self.depth,
                "recorded_with": _EMULATED if self.emulated else _LIVE, "rankings": self.rankings}

    def text(self) -> str:
        return rankings_text(self.data())


def rankings_text(data: dict[str, Any]) -> str:
    """A rankings file's JSON with one line per query: a re-recording's diff shows the queries that changed."""
    head = {key: value for key, value in data.items() if key != "rankings"}
    lines = [f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}," for key, value in head.items()]
    queries = [f"  {json.dumps(query, ensure_ascii=False)}: {json.dumps(ids, ensure_ascii=False)}"
               for query, ids in data["rankings"].items()]
    return "{\n" + "\n".join(lines) + '\n "rankings": {\n' + ",\n".join(queries) + "\n }\n}\n"


# what the cassettes' recorded_with.target says (recorder.EMULATOR_TARGET), here without importing vcrpy
_EMULATED, _LIVE = "rag-core provider emulator", "live provider API"


def read_rankings(path: Path) -> RecordedRankings:
    hint = "record it again (the command is in the message of the retriever's test when it is missing)"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise RecordingError(f"{shown(path)}: not a rankings file ({exc}); delete it and {hint}") from None
    rankings = data.get("rankings") if isinstance(data, dict) else None
    if not (isinstance(rankings, dict) and all(isinstance(r, list) and all(isinstance(d, str) for d in r)
                                               for r in rankings.values())
            and isinstance(data.get("suite"), str) and isinstance(data.get("retriever"), str)
            and isinstance(data.get("depth"), int)):
        raise RecordingError(f"{shown(path)}: not a rankings file (suite, retriever, depth and rankings: query -> "
                             f"document ids); delete it and {hint}")
    return RecordedRankings(data["suite"], data["retriever"], data["depth"], data.get("recorded_with") == _EMULATED,
                            rankings)


def command(selector: str, *options: str) -> str:
    return " ".join(["pytest", shlex.quote(selector), *options])


def first_difference(recorded: dict[str, list[str]], now: dict[str, list[str]]) -> str | None:
    """The first query (in the recording's order, then the new ones) whose ranking differs, said
    with the first rank that differs; None when every ranking is the recorded one."""
    for query in [*recorded, *(q for q in now if q not in recorded)]:
        before, after = recorded.get(query), now.get(query)
        if before == after:
            continue
        if before is None or after is None:
            return f"query {query} is {'new' if before is None else 'no longer ranked'}"
        rank = next((i for i, (b, a) in enumerate(zip(before, after)) if b != a), min(len(before), len(after)))
        return (f"query {query} ranks differently from rank {rank + 1} on: recorded {_listed(before[rank:])}, now "
                f"{_listed(after[rank:])}")
    return None


def _listed(ids: list[str]) -> str:
    return "[" + ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "") + "]" if ids else "nothing more"


def run_recorded(suite: str, retriever: str, depth: int, settings: ReplaySettings, selector: str,
                 run: Callable[[bool], Any]) -> tuple[Any, list[str]]:
    """``run(emulated)`` (which returns the retriever's ``Rankings``) recorded or replayed
    (``recording/play.py``); with notes worth a warning. RecordingError when the recording is
    missing, stale or cannot be made; what ``run`` raises (a RetrieverTargetError) otherwise."""
    from rag_core.evals.common.modes import records
    from rag_core.evals.recording.fix_commands import RetrieverCommands
    from rag_core.evals.recording.recorder import CaseRecorder

    where = f"suite {suite}, retriever {retriever}"
    files = RecordingFiles.of(settings, suite, retriever)
    commands = RetrieverCommands(selector)
    recorded = read_rankings(files.rankings) if files.rankings.exists() else None
    if recorded is not None and (recorded.suite, recorded.retriever) != (suite, retriever):
        raise RecordingError(f"{where}: {shown(files.rankings)} holds the rankings of suite {recorded.suite}, "
                             f"retriever {recorded.retriever}; record this one: {commands.rerecord(False)}")
    recording = records(settings.record_mode, recorded is not None)
    if recording:
        files.cassette.parent.mkdir(parents=True, exist_ok=True)
    # a recording is made whole: under once, a cassette without its rankings is recorded again
    mode = ("rewrite" if settings.record_mode == "once" else settings.record_mode) if recording else "none"
    recorder = CaseRecorder(files.cassette, mode)
    played = _played(where, recorder, settings, commands, files, f"{suite}/{retriever}", run,
                     replays_emulated=not recording and recorded is not None and recorded.emulated)
    try:
        ranked = played.ranked_or_raise(where)
        if recording:
            _keep(where, played, files, RecordedRankings(suite, retriever, depth, played.emulated, ranked.by_query))
            return ranked, []
    except BaseException:
        recorder.discard()
        raise
    assert recorded is not None
    _refuse_stale(where, recorded, ranked.by_query, depth, files, commands.rerecord(played.emulated))
    notes = _changed_requests(where, played.take.replay, files, commands, played.emulated)
    if notes and settings.strict:
        raise RecordingError(notes[0])
    return ranked, notes


@dataclass
class _Played:
    """A retriever's run in its cassette (``play``): the take, and what the run gave or raised."""

    take: Any  # recording.play.Take
    emulated: bool  # answered by the emulator now, or replayed from a recording it answered
    ranked: Any = None
    error: BaseException | None = None

    def ranked_or_raise(self, where: str) -> Any:
        """The rankings, once the run is known to count: RecordingError for a run the guard refused
        or that sent a request its cassette does not hold; what the run raised, raised again."""
        if self.take.blocked:
            raise RecordingError(f"{where}: {self.take.refusal(None)}"
                                 + ("; nothing was recorded" if self.take.recording else ""))
        unrecorded = self.take.unrecorded(self.error)
        if unrecorded is not None:
            raise RecordingError(str(unrecorded))
        if self.error is not None:
            raise self.error
        assert self.ranked is not None
        return self.ranked


def _played(where: str, recorder: Any, settings: ReplaySettings, commands: Any, files: RecordingFiles, name: str,
            run: Callable[[bool], Any], replays_emulated: bool) -> _Played:
    """``run`` in its cassette; what it raises is kept for ``ranked_or_raise``, to be judged once
    vcrpy has let go. RecordingError when the recording is missing or its cassette cannot be read
    or written."""
    from rag_core.evals.common.errors import HarnessError
    from rag_core.evals.recording.play import PlayOptions, play

    options = PlayOptions(settings.record_mode, settings.emulator, settings.block_network)
    try:
        with play(where, recorder, options, commands, guard_name=f"retrieval {name}", emulated=replays_emulated,
                  needs=[files.rankings], seed=name) as take:
            played = _Played(take, take.emulator is not None or replays_emulated)
            with take.cassette():
                try:
                    played.ranked = run(played.emulated)
                except Exception as exc:  # noqa: BLE001 (judged by ranked_or_raise, once vcrpy has let go)
                    played.error = exc
    except HarnessError as exc:
        raise RecordingError(str(exc)) from None
    return played


def _keep(where: str, played: _Played, files: RecordingFiles, rankings: RecordedRankings) -> None:
    """A recording that counts, kept: the rankings staged, then the cassette and the rankings
    committed together; nothing is written for a recording that must be refused."""
    from rag_core.evals.atomic import write_checked
    from rag_core.evals.credentials import CredentialError

    refused = played.take.refusal(None)
    if refused:
        raise RecordingError(f"{where}: recording failed, nothing was written: {refused}")
    staged = files.rankings.with_name(f".{files.rankings.name}.staged")
    try:
        write_checked(staged, rankings.data(), rankings_text, staged_for=files.rankings)
    except (CredentialError, OSError) as exc:
        raise RecordingError(f"{where}: recording failed, nothing was written: {exc}") from None
    played.take.recorder.commit()
    os.replace(staged, files.rankings)


def _refuse_stale(where: str, recorded: RecordedRankings, now: dict[str, list[str]], depth: int,
                  files: RecordingFiles, rerecord: str) -> None:
    """RecordingError for a replay whose rankings are not the recorded ones."""
    stale = first_difference(recorded.rankings, now)
    if stale is None:
        return
    if recorded.depth != depth:
        stale += f" (recorded at depth {recorded.depth}; the suite's depth is {depth} now)"
    raise RecordingError(f"{where}: stale recording: {stale} ({shown(files.rankings)}). If the change is "
                         f"intended, record it again: {rerecord}")


def _changed_requests(where: str, replay: Any, files: RecordingFiles, commands: Any, emulated: bool) -> list[str]:
    """A replay whose requests differ from the recorded ones (or leave some unused) ranked from
    answers to other questions: worth saying even when its rankings came out the same."""
    changed = [number for number, pair in enumerate(replay.pairs, start=1) if pair.sent != pair.recorded]
    problems = []
    if changed:
        pair = replay.pairs[changed[0] - 1]
        problems.append(f"request #{changed[0]} ({pair.path}) differs from the recorded one"
                        + (f", and {len(changed) - 1} more" if len(changed) > 1 else ""))
    if replay.unused:
        problems.append(f"{replay.unused} recorded interaction(s) were not used")
    if not problems:
        return []
    return [f"{where}: stale cassette {shown(files.cassette)}: {'; '.join(problems)}. Record it again: "
            f"{commands.rerecord(emulated)}"]


def run_live(suite: str, retriever: str, settings: ReplaySettings, run: Callable[[bool], Any]) -> Any:
    """A ``live: true`` retriever under --live: against its service, keeping nothing (as golden
    cases run under --live), in the case environment; behind the guard with --block-network."""
    from rag_core.evals.recording.network import blocked_message, network_blocked
    from rag_core.evals.recording.provider_env import provider_environment
    from rag_core.evals.recording.seeded_randomness import seeded

    guard = network_blocked(f"retrieval {suite}/{retriever}") if settings.block_network else nullcontext([])
    with guard as blocked, provider_environment(), seeded(f"{suite}/{retriever}"):
        ranked = run(False)
        attempts = list(blocked)
    if attempts:
        raise RecordingError(f"suite {suite}, retriever {retriever}: {blocked_message(attempts)}")
    return ranked
