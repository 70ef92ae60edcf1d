"""vcrpy set up for one case: record modes, scrubbing, matching, and what replay reveals.

Replay plays interactions in order by method and path; request bodies are then compared
separately, so a run whose requests changed still completes and is reported *stale*
(with the body diff) instead of dying on the first request. When recording new episodes,
bodies must match too, so changed requests get recorded.

Recording against the emulator happens at the same layer: the program sends its requests to
the endpoints it always uses (``https://api.openai.com/...``), vcrpy intercepts them as it does
on replay, and a ``ScriptedProvider`` answers each one in-process; the answer is recorded as a
live one would be. So the cassette and golden hold what the program sends in production, and
replay runs the very same program. Requests to loopback (a local database or search server) are
left to that server.

Recording never touches the committed cassette: vcrpy records into a staging file beside it
(a copy of the cassette when the mode keeps old interactions), and only ``commit()`` (called
when the whole case succeeded) renames the staging file over the cassette. Any failure, a
credential refusal, a provider error, a crash, leaves the cassette as it was.
"""

from __future__ import annotations

import os
import shutil
import threading
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any, Callable, Iterator

from rag_core.evals.common.errors import CassetteFileError, HarnessError, SecretInCassetteError
from rag_core.evals.common.modes import RECORD_MODES, records
from rag_core.evals.common.paths import shown
from rag_core.evals.common.value_sizes import LargeValue
from rag_core.evals.credentials import detector
from rag_core.evals.emulator.conditions import Conditions
from rag_core.evals.emulator.provider import ScriptedProvider
from rag_core.evals.recording import cassette_format, routing, stuck
from rag_core.evals.recording.cassette_persister import AtomicPersister
from rag_core.evals.recording.emulated_answers import answer_in_process
from rag_core.evals.recording.provider_env import KEY_VARIABLES
from rag_core.evals.recording.cassette_traffic import Replay, drop_retried_away, json_body, observe_traffic


# what a client reads from a response beyond its body: botocore reads an error's type from
# x-amzn-errortype (without it a recorded ThrottlingException replays as a bare ClientError)
KEPT_RESPONSE_HEADERS = {"content-type", "x-request-id", "request-id", "openai-version", "x-debug-trace-id",
                         "x-amzn-errortype", "x-amzn-requestid"}
EMULATOR_TARGET = cassette_format.EMULATOR_TARGET  # recorded_with.target of a cassette the emulator answered
# marks the recorded requests made while ``CaseRecorder.label`` is set (a judge's: its metric)
LABEL_HEADER = "rag-core-judge"


def _then(first: Callable[[Any], Any], then: Callable[[Any], Any], item: Any) -> Any:
    """Two vcrpy filters in a row; a filter that returns None drops the interaction."""
    item = first(item)
    return None if item is None else then(item)


def _clean_response(response: dict[str, Any]) -> dict[str, Any]:
    response["headers"] = {k: v for k, v in response.get("headers", {}).items() if k.lower() in KEPT_RESPONSE_HEADERS}
    return response


def _filters_are_ours(recorder: Any, ours: Callable[[Any], Any]) -> bool:
    """Whether the requests' filters are the harness's only: its scrubbing, and none of vcrpy's
    own replacing filters (whose replacements may be callables) or a project's filter."""
    return recorder.before_record_request == ours and not (
        recorder.filter_headers or recorder.filter_query_parameters or recorder.filter_post_data_parameters)


def _filter_each_request_once(cassette: Any) -> None:
    """Filter a replayed request once, however often vcrpy looks it up.

    vcrpy filters a request (a deep copy of it, then every filter) at each lookup: three times per
    replayed request (can it be played; is it held, given the filtered copy; play it). The
    harness's scrubbing gives the same request whichever of them it is given, so the first result
    serves every lookup of the same request, the copy itself included. The request is held, so its
    id is not reused by the next one."""
    filter_request = cassette._before_record_request
    last: list[Any] = [None, None]  # the request last filtered, and what the filters made of it

    def filtered(request: Any) -> Any:
        if request is not last[0] and (request is not last[1] or request is None):
            last[:] = [request, filter_request(request)]
        return last[1]

    cassette._before_record_request = filtered


@contextmanager
def _opened(recorder: Any, path: Path, run_name: str, save: bool = True) -> Iterator[Any]:
    """The cassette at ``path`` as ``recorder.use_cassette`` opens it, its requests routed to it
    (``routing.py``: runs in other threads keep theirs; ``run_name`` names a run of it alone),
    saved when it closes (if ``save``), as vcrpy saves."""
    from vcr.cassette import Cassette

    config = recorder.get_merged_config(path=str(path), serializer="rag_core")
    for name in ("path_transformer", "func_path_generator", "record_on_exception"):  # the decorator's, not the cassette's
        config.pop(name, None)
    cassette = Cassette.load(**config)
    with routing.routed(cassette, run_name):
        yield cassette
    if save:
        cassette._save()


class CaseRecorder:
    def __init__(self, cassette_path: Path, mode: str, script_digest: str | None = None,
                 configure: Callable[[Any], None] | None = None) -> None:
        if mode not in RECORD_MODES:
            raise HarnessError(f"--record-mode must be one of {', '.join(RECORD_MODES)}, got {mode!r}")
        self.path = cassette_path
        self.mode = mode
        self.script_digest = script_digest  # of the case's emulate: list, kept in the cassette
        self.staging = cassette_path.with_name(f".{cassette_path.name}.recording")
        self.label: str | None = None  # set while a judge runs: its recorded requests are marked
        self.configure = configure  # the project's pytest_rag_core_configure_cassette hook, given the VCR
        # False for a live run: what it records is observed, never written (it would be discarded)
        self.keep = True
        self._checked = False  # the committed cassette was found readable (or not to be read) by ``check``
        # what ``check`` (or a recording keeping the cassette's interactions) read of the committed
        # cassette: vcrpy loads it, or the staging copy of it, from this instead of the file
        self._read: dict[str, Any] | None = None
        self.large: list[LargeValue] = []  # the recorded file's values a recording warns about
        self.ended = threading.Event()  # set by ``end``: the run was given up
        self._writing = threading.Lock()  # the staging file is written, or removed by ``end``, not both at once

    @property
    def will_record(self) -> bool:
        return records(self.mode, self.path.exists())

    def check(self) -> None:
        """The committed cassette, if this run reads it, must be one: a CassetteFileError names the
        file, line and column otherwise. A recording that replaces it does not read it, so one that
        does not parse is recorded again: ``rewrite`` starts afresh, and ``all`` keeps what it held
        beyond this run only when it can be read (see ``_starts_from_committed``)."""
        if self._checked or not self.path.exists():
            return
        if not self.will_record or self.mode == "new_episodes":  # replayed, or added to
            self._read = cassette_format.read_cassette(self.path)
        self._checked = True

    def _starts_from_committed(self) -> bool:
        """Whether the recording goes into a copy of the committed cassette: ``new_episodes`` adds to
        it; ``all`` (as vcrpy's) keeps the interactions this run does not record again, if it reads."""
        if not self.path.exists() or self.mode not in ("new_episodes", "all"):
            return False
        if self.mode == "all":
            try:
                self._read = cassette_format.read_cassette(self.path)
            except CassetteFileError:
                return False  # nothing in it can be kept: recorded afresh, as under rewrite
        return True

    def _strict_bodies(self) -> bool:
        return self.mode == "new_episodes"

    def _before_record_request(self, request: Any) -> Any:
        scrubber = detector()
        request.uri = scrubber.scrub_url(request.uri)
        for name in [n for n in request.headers if scrubber.scrub_header(n)]:
            del request.headers[name]
        for name, value in list(request.headers.items()):
            if isinstance(value, bytes):  # botocore sends header values as bytes; YAML keeps text
                request.headers[name] = value.decode("latin-1")
        if self.label is not None:
            request.headers[LABEL_HEADER] = self.label  # in the cassette only: the request was sent without it
        return request

    def _configured(self, recorder: Any) -> None:
        """The project's hook adapts the VCR; its filters run first, the harness's scrubbing
        after them (always), and the harness keeps its persister and matching."""
        ours = (recorder.before_record_request, recorder.before_record_response, recorder.persister,
                recorder.record_mode, recorder.match_on)
        self.configure(recorder)
        theirs_request, theirs_response = recorder.before_record_request, recorder.before_record_response
        recorder.persister, recorder.record_mode, recorder.match_on = ours[2:]
        if theirs_request is not ours[0]:
            recorder.before_record_request = lambda request: _then(theirs_request, ours[0], request)
        if theirs_response is not ours[1]:
            recorder.before_record_response = lambda response: _then(theirs_response, ours[1], response)

    def _body_matcher(self, first: Any, second: Any) -> None:
        if self._strict_bodies() and json_body(first.body) != json_body(second.body):
            raise AssertionError("request bodies differ")

    def commit(self) -> None:
        """The case succeeded: its recording replaces the cassette (one atomic rename)."""
        if self.staging.exists():
            os.replace(self.staging, self.path)

    def discard(self) -> None:
        self.staging.unlink(missing_ok=True)

    def end(self) -> None:
        """The run was given up (it overran its time limit, and its thread may still be going):
        nothing it records is written from now on, and its staging file goes. Its cassette
        refuses further requests (``stuck.watch_requests``)."""
        with self._writing:
            self.ended.set()
            self.discard()

    @contextmanager
    def use(self, sdk_version: str, emulator: ScriptedProvider | None = None,
            conditions: Conditions | None = None) -> Iterator[Replay]:
        """The cassette around one subject's run: replayed, or recorded live, or (``emulator``
        given and the mode records) recorded with the emulator answering in-process, under
        ``conditions`` if given."""
        try:
            self.check()
        except CassetteFileError as exc:
            raise CassetteFileError(f"{exc}; fix it, or record it again with --record-mode=rewrite", exc.text) from None
        recording = self.will_record
        target = self._staged() if recording else self.path
        recorder, persister = self._vcr(target)
        replay = Replay()
        try:
            with _opened(recorder, target, self.path.stem, save=self.keep) as cassette:
                replay.recorded_with = dict(cassette.get_metadata("recorded_with", {}))
                already = len(cassette.data)
                if recording:
                    self._stamp(cassette, sdk_version, emulator)
                transient = observe_traffic(cassette, replay, emulator)
                # a project's own request filter may not give the same request twice: it runs as vcrpy runs it
                if not recording and _filters_are_ours(recorder, self._before_record_request):
                    _filter_each_request_once(cassette)
                if recording and emulator is not None:
                    answer_in_process(cassette, emulator, conditions)
                stuck.watch_requests(self, cassette)  # for a run with a time limit: its requests in flight
                try:
                    yield replay
                finally:
                    drop_retried_away(cassette, replay, transient)
                    if not recording:
                        replay.unused = len(cassette) - len(cassette.play_counts)
                    replay.recorded = [(r.method, r.path, int(resp["status"]["code"]))
                                       for r, resp in cassette.data[already:]]
            self._raise_what_was_not_written(persister)
        except SecretInCassetteError as exc:
            self.discard()
            raise HarnessError(_refusal(self.path, exc)) from None
        except BaseException:
            self.discard()
            raise

    def _staged(self) -> Path:
        """The staging file a recording goes into: a copy of the committed cassette when the mode
        keeps what it holds, else nothing yet (``_starts_from_committed``)."""
        self.discard()  # left over from a killed run
        if self._starts_from_committed():
            shutil.copyfile(self.path, self.staging)  # new interactions are added to a copy
        return self.staging

    def _vcr(self, target: Path) -> tuple[Any, AtomicPersister]:
        """vcrpy configured for this case, loading ``target`` (the cassette, or the staging copy of
        it a recording adds to): its mode, matching, scrubbing, serializer and persister, then the
        project's hook."""
        import vcr

        recorder = vcr.VCR(
            record_mode="once" if self.mode == "rewrite" else self.mode,
            match_on=["method", "path", "json_body"],
            before_record_request=self._before_record_request,
            before_record_response=_clean_response,
            decode_compressed_response=True,
        )
        recorder.register_serializer("rag_core", cassette_format)
        # the cassette (or its copy) is loaded as it was read, once: vcrpy's load takes it over
        read, self._read = self._read, None
        persister = AtomicPersister(self.ended, self._writing, (target, read) if read is not None else None)
        recorder.register_persister(persister)
        recorder.register_matcher("json_body", self._body_matcher)
        if self.configure is not None:
            self._configured(recorder)
        return recorder, persister

    def _stamp(self, cassette: Any, sdk_version: str, emulator: ScriptedProvider | None) -> None:
        """What the recording is made with, in the cassette: target, SDK, date, script digest."""
        meta = cassette.get_metadata("recorded_with", {})
        meta.clear()
        meta.update({"target": EMULATOR_TARGET if emulator is not None else "live provider API",
                     "sdk": sdk_version, "date": date.today().isoformat()})
        if emulator is not None and self.script_digest:
            meta["script"] = self.script_digest

    def _raise_what_was_not_written(self, persister: AtomicPersister) -> None:
        """Once vcrpy has exited: the credential refusal or the write failure its persister kept."""
        if persister.refused is not None:
            raise persister.refused
        self.large = persister.large
        if persister.failed is not None:
            cause = persister.failed
            raise HarnessError(f"{shown(self.path)}: the recording could not be written ({type(cause).__name__}: "
                               f"{cause}); the committed cassette and golden are unchanged")


def _refusal(path: Path, exc: SecretInCassetteError) -> str:
    return (f"{shown(path)}: refusing to write the recording: it still contains what looks like a credential:\n  "
            + "\n  ".join(str(f) for f in exc.findings[:20])
            + "\nThe committed cassette and golden are unchanged. Headers, query parameters and URL passwords are "
            "scrubbed automatically (add header names with the rag_core_scrub_headers ini option); remove the "
            "credential from the case input or tool output it came from.")


def require_key(provider: str) -> None:
    """Recording live needs the provider's key in the environment; say so before anything runs."""
    variables = KEY_VARIABLES[provider]
    if not any(os.environ.get(variable) for variable in variables):
        raise HarnessError(
            f"recording needs a provider: set {variables[0]} to record against the live API, "
            "or pass --emulator to record against the built-in emulator"
        )
