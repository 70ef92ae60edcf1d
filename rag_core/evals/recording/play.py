"""One subject's run in its cassette, by the rules every recorded or replayed run follows: a
golden case's agent or target, its ``compare_with`` subject, a retriever target, a reranking
store.

The rules, each decided here and nowhere else:

- whether the run records (``modes.records``: the record mode, and whether a recording exists);
- a replay needs its recording: a missing one, or a cassette that does not read, fails naming
  the file and the command that records it;
- recording with ``--emulator``, a ``ScriptedProvider`` answers in-process; without it, the run
  records live, and needs the providers' keys, before anything runs;
- the network guard is up in every mode but a live recording (there too with ``--block-network``),
  and the subject runs in its provider environment (``provider_env.py``), the same in every mode,
  with the ids and keys it makes (uuid, random, secrets) seeded from the run (``seeded_randomness.py``)
  and the key orders its libraries would leave to the process made one (``stable_orders.py``);
  while recording live, no socket waits past ``--record-timeout``;
- afterwards: a request the cassette does not hold is one error (``unrecorded``), and a recording
  that reached for the network, timed out, met an error status or raised is refused
  (``refusal``), naming what; the caller commits or discards.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Iterator

from rag_core.evals.common.errors import CassetteFileError, UnrecordedRequestError
from rag_core.evals.common.modes import records
from rag_core.evals.common.paths import shown
from rag_core.evals.common.raised import described, in_chain, origin
from rag_core.evals.emulator.conditions import Conditions
from rag_core.evals.emulator.provider import ScriptedProvider
from rag_core.evals.recording import cassette_format, seeded_randomness, stable_orders
from rag_core.evals.recording.fix_commands import FixCommands
from rag_core.evals.recording.network import BlockedAttempt, blocked_message, network_blocked
from rag_core.evals.recording.provider_env import provider_environment
from rag_core.evals.recording.recorder import EMULATOR_TARGET, CaseRecorder, require_key
from rag_core.evals.recording.cassette_traffic import Replay
from rag_core.evals.recording.request_timeout import bounded_waits


@dataclass(frozen=True)
class PlayOptions:
    """The session's recording options, as every played subject reads them."""

    record_mode: str = "none"
    emulator: bool = False  # --emulator: a recording is answered by the in-process emulator
    block_network: bool = False  # --block-network: the guard stays up while recording live too
    record_timeout: float = 60.0  # --record-timeout: how long one provider request may take while recording
    conditions: Conditions | None = None  # --emulator-latency / --emulator-capacity


@functools.cache
def sdk_versions(provider: str | None = None) -> str:
    """What a cassette records as the SDK: the provider's SDK packages installed, or, for a subject
    that may use any (``provider`` None), every provider SDK installed. Read once per process: the
    installed versions do not change under a running session."""
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


@functools.cache
def timeout_types() -> tuple[type, ...]:
    """The exceptions a client raises when a provider took too long to answer."""
    types: list[type] = [TimeoutError]
    for module, name in (("openai", "APITimeoutError"), ("httpx", "TimeoutException"), ("httpx2", "TimeoutException")):
        try:
            types.append(getattr(__import__(module), name))
        except (ImportError, AttributeError):
            pass
    return tuple(types)


@dataclass
class Take:
    """One subject's run in its cassette, as ``play`` set it up: what the run records into (or
    replays from), whether it records, and what the guard refused while it ran."""

    name: str  # what the guard and messages name the run by: a case id, "retrieval <suite>/<retriever>"
    recorder: CaseRecorder
    commands: FixCommands
    recording: bool
    emulator: ScriptedProvider | None
    emulated: bool  # recorded, or to be recorded, against the emulator: the fix commands say --emulator
    sdk: str
    conditions: Conditions | None = None
    record_timeout: float = 60.0
    seed: str = ""  # what the run's ids and keys are seeded from (``seeded_randomness.py``)
    clock: datetime | None = None  # the run's frozen clock, which uuid1 reads
    blocked: list[BlockedAttempt] = field(default_factory=list)  # the guard's refusals while the subject ran
    at_import: list[BlockedAttempt] = field(default_factory=list)  # ... and while its module was imported
    replay: Replay = field(default_factory=Replay)
    _guard: list[BlockedAttempt] = field(default_factory=list, repr=False)

    @property
    def live_recording(self) -> bool:
        return self.recording and self.emulator is None

    def preparing(self) -> Any:
        """While the subject is imported or built: ids and keys of a sequence of their own."""
        return seeded_randomness.seeded(self.seed, self.clock, "prepare")

    def imported(self) -> None:
        """What the guard refused so far was refused while the subject's module was imported."""
        self.at_import, self._guard[:] = list(self._guard), []

    @contextmanager
    def cassette(self) -> Iterator[Replay]:
        """The cassette around the subject's run (``CaseRecorder.use``)."""
        with self.recorder.use(self.sdk, self.emulator, self.conditions if self.emulator is not None else None) as replay, \
                seeded_randomness.seeded(self.seed, self.clock):  # its ids and keys made as its clock is: the same in every mode
            self.replay = replay
            self.emulated = self.emulated or self.replayed_emulated
            yield replay
        self.blocked = list(self._guard)

    @property
    def replayed_emulated(self) -> bool:
        """A replay of a cassette the emulator answered when it was recorded."""
        return not self.recording and self.replay.recorded_with.get("target") == EMULATOR_TARGET

    def unrecorded(self, error: BaseException | None, who: str = "") -> UnrecordedRequestError | None:
        """The error for a replay that sent a request its cassette does not hold (``who``, if named,
        sent it), or None."""
        from vcr.errors import CannotOverwriteExistingCassetteException

        missing = in_chain(error, (CannotOverwriteExistingCassetteException,))
        if missing is None:
            return None
        request = getattr(missing, "failed_request", None)
        what = f"{request.method} {request.path}" if request is not None else "a request"
        return UnrecordedRequestError(
            f"{self.name}: {who + ' ' if who else ''}sent {what} (request #{len(self.replay.pairs) + 1}), which "
            f"{shown(self.recorder.path)} does not hold: it makes more or other provider calls than when it was "
            f"recorded. Record it again: {self.commands.rerecord(self.emulated)}")

    def refusal(self, error: BaseException | None, expects_error: bool = False,
                error_status_hint: str = "") -> str | None:
        """Why a recording must not be kept, or None: it reached for the network, a provider
        request timed out, the provider answered with an error status or the run raised (the last
        two unless the run expects an error)."""
        if self.blocked:
            return blocked_message(self.blocked)
        timed_out = in_chain(error, timeout_types())
        if timed_out is not None:
            request = getattr(timed_out, "request", None)
            what = f"{request.method} {request.url}" if request is not None else "a provider request"
            return (f"request #{len(self.replay.recorded) + 1} of the run ({what}) got no answer within "
                    f"{self.record_timeout:g} s (--record-timeout)")
        failed = [f"{method} {path} answered HTTP {status}" for method, path, status in self.replay.recorded
                  if status >= 400]
        if failed and not expects_error:
            return "the provider answered with an error status (" + "; ".join(failed) + ")" + error_status_hint
        if error is not None and not expects_error:
            where = origin(error)
            return f"the run failed: {described(error)}" + (f" (raised at {where})" if where else "")
        return None


@contextmanager
def play(name: str, recorder: CaseRecorder, options: PlayOptions, commands: FixCommands, *,
         emulated: bool = False, script: list[Any] | None = None, seed: str | None = None,
         keys: Iterable[str] = (), provider: str | None = None, needs: Iterable[Path] = (),
         guard_name: str | None = None, clock: datetime | None = None) -> Iterator[Take]:
    """Set up one subject's run: its cassette (replayed, or recorded live, or with the emulator
    answering ``script``), the network guard, the provider environment and, while recording live,
    the bound on every socket wait. ``keys``: the providers whose keys a live recording needs;
    ``needs``: the files a replay reads besides the cassette (a retriever's rankings), each named
    when missing; ``emulated``: whether what the subject is says it records against the emulator
    (a case's ``emulate:`` script), for the commands its failures name; ``guard_name``: the run's
    name in the network guard's reports (``name``, the messages' prefix, by default); ``seed``: what
    the emulator's ids and the run's own random values are seeded from (``name`` by default), and
    ``clock`` the time its uuid1 values read."""
    stable_orders.install()  # the orders a run's sources would leave to the process, one order within a run
    needs = list(needs)
    recorded = all(path.exists() for path in needs) if needs else recorder.path.exists()
    recording = records(recorder.mode, recorded)
    emulated = emulated or options.emulator
    try:
        recorder.check()  # a cassette this run reads must be one; one a recording replaces is not read
    except CassetteFileError as exc:
        emulated = emulated or cassette_format.names_the_emulator(exc.text)
        raise CassetteFileError(f"{name}: {exc}; record it again: {commands.record_again(emulated)}", exc.text) from None
    if not recording:
        for path in [*needs, recorder.path]:  # a cassette is kept even when empty: it says what recorded it
            if not path.exists():
                raise UnrecordedRequestError(f"{name}: not recorded yet (no {'cassette ' if path == recorder.path else ''}"
                                             f"{shown(path)}). Record it: {commands.record(emulated)}")
    emulator = ScriptedProvider(list(script or []), seed=seed or name) if recording and options.emulator else None
    live = recording and emulator is None
    if live:  # before the case's environment fills missing keys with dummies
        for each in keys:
            require_key(each)
    take = Take(name, recorder, commands, recording, emulator, emulated or emulator is not None,
                sdk_versions(provider), options.conditions, options.record_timeout, seed or name, clock)
    guard = network_blocked(guard_name or name) if (options.block_network or not live) else nullcontext([])
    waits = bounded_waits(options.record_timeout) if live else nullcontext()
    with guard as blocked, provider_environment(), waits:
        take._guard = blocked
        yield take
        take.blocked = list(blocked)
