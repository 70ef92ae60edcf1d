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

import http
import json
import os
import shutil
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, NamedTuple

from rag_core.evals.atomic import write_atomic
from rag_core.evals.credentials import detector
from rag_core.evals.recording import cassette_format, routing, stuck
from rag_core.evals.common.errors import CassetteFileError, HarnessError, SecretInCassetteError
from rag_core.evals.common.modes import RECORD_MODES, records
from rag_core.evals.recording.network import is_loopback
from rag_core.evals.recording.provider_env import KEY_VARIABLES
from rag_core.evals.wire.exchange import Exchange
from rag_core.evals.wire.traffic import binary_stream_apis
from rag_core.evals.emulator.conditions import REFUSED_HEADER, Conditions
from rag_core.evals.emulator.provider import Reply, ScriptedProvider
from rag_core.evals.recording.throttling import RETRYABLE, Pushback, retried_away, retry_after
from rag_core.evals.common.paths import shown
from rag_core.evals.common.value_sizes import LargeValue, large_values
from rag_core.providers import api_of


# what a client reads from a response beyond its body: botocore reads an error's type from
# x-amzn-errortype (without it a recorded ThrottlingException replays as a bare ClientError)
KEPT_RESPONSE_HEADERS = {"content-type", "x-request-id", "request-id", "openai-version", "x-debug-trace-id",
                         "x-amzn-errortype", "x-amzn-requestid"}
EMULATOR_TARGET = cassette_format.EMULATOR_TARGET  # recorded_with.target of a cassette the emulator answered
# marks the recorded requests made while ``CaseRecorder.label`` is set (a judge's: its metric)
LABEL_HEADER = "rag-core-judge"


def _json(body: Any) -> Any:
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    try:
        return json.loads(body) if body else None
    except ValueError:
        return body


def _exchange(request: Any, response: dict[str, Any]) -> Exchange:
    body, status = response.get("body", {}).get("string"), int(response["status"]["code"])
    if status < 400 and api_of(request.method, request.path) in binary_stream_apis():
        # by its API, as the SDK reads it: recordings made elsewhere keep no content type
        raw = body if isinstance(body, bytes) else (body or "").encode("utf-8")
        return Exchange(request.method, request.path, _json(request.body), status, raw)
    stream = "event-stream" in cassette_format.content_type(response.get("headers", {}))
    if stream and isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    return Exchange(request.method, request.path, _json(request.body), status, body if stream else _json(body))


def _vcr_response(reply: Reply) -> dict[str, Any]:
    """An emulator reply as vcrpy hands a response to the client stubs it patches."""
    headers = {"content-type": [reply.content_type], "content-length": [str(len(reply.body))]}
    headers.update({name: [value] for name, value in reply.headers.items()})
    return {"status": {"code": reply.status, "message": http.HTTPStatus(reply.status).phrase},
            "headers": headers, "body": {"string": reply.body}}


def _answer_in_process(cassette: Any, emulator: ScriptedProvider, conditions: Conditions | None) -> None:
    """Let the emulator answer every request the cassette cannot play, as vcrpy would play a
    recorded one, and record the answer (through the cassette's own filters and scrubbing);
    ``conditions`` (latency, capacity) apply to each answer as a provider's load would."""
    can_play, play = cassette.can_play_response_for, cassette.play_response

    def answers(request: Any) -> bool:
        return bool(can_play(request)) or not is_loopback(request.host)

    def answer(request: Any) -> Any:
        if can_play(request):  # new_episodes: an interaction the cassette already holds
            return play(request)
        if conditions is None:
            reply = emulator.reply(request.method, request.path, request.body, request.headers)
        else:
            with conditions.admitted() as refusal:
                reply = refusal or emulator.reply(request.method, request.path, request.body, request.headers)
        response = _vcr_response(reply)
        cassette.append(request, response)
        return response

    cassette.can_play_response_for = answers
    cassette.play_response = answer


def _then(first: Callable[[Any], Any], then: Callable[[Any], Any], item: Any) -> Any:
    """Two vcrpy filters in a row; a filter that returns None drops the interaction."""
    item = first(item)
    return None if item is None else then(item)


def _clean_response(response: dict[str, Any]) -> dict[str, Any]:
    response["headers"] = {k: v for k, v in response.get("headers", {}).items() if k.lower() in KEPT_RESPONSE_HEADERS}
    return response


def _drop_retried_away(cassette: Any, replay: Replay, transient: list[tuple[int, int]]) -> None:
    """Keep out of the cassette and the run's exchanges each provider pushback (a 429 or 5xx from
    the provider, or the emulator's conditions) that the client sent again with success: a
    replay would make the client wait and retry for nothing, and the golden would pin weather."""
    if not transient:
        return
    first = transient[0][0]
    new = cassette.data[first:]
    flags = retried_away([((r.method, r.path, r.body), int(resp["status"]["code"])) for r, resp in new])
    dropped = [(at, exchange) for at, exchange in transient if flags[at - first]]
    for at, exchange in sorted(dropped, reverse=True):
        del cassette.data[at]
        del replay.exchanges[exchange]


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


class Pair(NamedTuple):
    """A replayed request: the body sent now and the body of the recording it was paired with."""

    path: str
    sent: Any
    recorded: Any


@dataclass
class Replay:
    """What the cassette saw during a case."""

    pairs: list[Pair] = field(default_factory=list)  # every replayed request, in order
    unused: int = 0
    # (method, path, status) of every interaction recorded in this run
    recorded: list[tuple[str, str, int]] = field(default_factory=list)
    # what the cassette says it was recorded with (target, sdk, date, script digest)
    recorded_with: dict[str, Any] = field(default_factory=dict)
    # every request and answer of the run, recorded or replayed, in the order sent
    exchanges: list[Exchange] = field(default_factory=list)
    # every retryable answer recorded in this run (a 429 the client retried with success included)
    pushbacks: list[Pushback] = field(default_factory=list)


class _Measured:
    """``cassette_format`` as vcrpy's serializer, keeping the values of what it writes that are
    large enough for the recording to warn about."""

    def __init__(self) -> None:
        self.large: list[LargeValue] = []

    def serialize(self, data: dict[str, Any]) -> str:
        out = cassette_format.encoded(data)
        self.large = large_values(out)
        return cassette_format.written(out)


class _AtomicPersister:
    """vcrpy's filesystem persister, writing the (staging) file atomically.

    Nothing it meets is raised inside vcrpy: vcrpy saves inside its context manager's exit, and
    an exception there leaves its HTTP-client patches in place, so the next case would record
    into a cassette committed with part of its interactions. A credential refusal, or a write
    that fails (a full disk, a file too large, an unwritable folder), is kept and raised by the
    recorder once vcrpy has exited cleanly. A run given up (``CaseRecorder.end``) writes nothing."""

    def __init__(self, ended: threading.Event, writing: threading.Lock) -> None:
        self.refused: SecretInCassetteError | None = None
        self.failed: Exception | None = None
        self.large: list[LargeValue] = []  # the values of the file it wrote that a recording warns about
        self.ended, self.writing = ended, writing

    def load_cassette(self, cassette_path: Any, serializer: Any) -> Any:
        from vcr.persisters.filesystem import FilesystemPersister

        return FilesystemPersister.load_cassette(cassette_path, serializer)

    def save_cassette(self, cassette_path: Any, cassette_dict: Any, serializer: Any) -> None:
        from vcr.serialize import serialize

        measured = _Measured()  # the harness's serializer (``_opened`` names it), measuring what it writes
        try:
            with self.writing:
                if not self.ended.is_set():
                    write_atomic(Path(cassette_path), serialize(cassette_dict, measured))
                    self.large = measured.large
        except SecretInCassetteError as exc:
            self.refused = exc
        except Exception as exc:  # noqa: BLE001 (anything: see the class docstring)
            self.failed = exc


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
            cassette_format.read_cassette(self.path)
        self._checked = True

    def _starts_from_committed(self) -> bool:
        """Whether the recording goes into a copy of the committed cassette: ``new_episodes`` adds to
        it; ``all`` (as vcrpy's) keeps the interactions this run does not record again, if it reads."""
        if not self.path.exists() or self.mode not in ("new_episodes", "all"):
            return False
        if self.mode == "all":
            try:
                cassette_format.read_cassette(self.path)
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
        if self._strict_bodies() and _json(first.body) != _json(second.body):
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
        import vcr

        try:
            self.check()
        except CassetteFileError as exc:
            raise CassetteFileError(f"{exc}; fix it, or record it again with --record-mode=rewrite", exc.text) from None
        recording = self.will_record
        mode = "once" if self.mode == "rewrite" else self.mode
        target = self.path
        if recording:
            self.discard()  # left over from a killed run
            if self._starts_from_committed():
                shutil.copyfile(self.path, self.staging)  # new interactions are added to a copy
            target = self.staging
        recorder = vcr.VCR(
            record_mode=mode,
            match_on=["method", "path", "json_body"],
            before_record_request=self._before_record_request,
            before_record_response=_clean_response,
            decode_compressed_response=True,
        )
        recorder.register_serializer("rag_core", cassette_format)
        persister = _AtomicPersister(self.ended, self._writing)
        recorder.register_persister(persister)
        recorder.register_matcher("json_body", self._body_matcher)
        if self.configure is not None:
            self._configured(recorder)
        replay = Replay()
        try:
            with _opened(recorder, target, self.path.stem, save=self.keep) as cassette:
                replay.recorded_with = dict(cassette.get_metadata("recorded_with", {}))
                already = len(cassette.data)
                if recording:
                    meta = cassette.get_metadata("recorded_with", {})
                    meta.clear()
                    meta.update({"target": EMULATOR_TARGET if emulator is not None else "live provider API",
                                 "sdk": sdk_version, "date": date.today().isoformat()})
                    if emulator is not None and self.script_digest:
                        meta["script"] = self.script_digest
                original, original_append = cassette.play_response, cassette.append

                def play_response(request: Any) -> Any:
                    before = dict(cassette.play_counts)
                    response = original(request)
                    index = next(i for i, n in cassette.play_counts.items() if n != before.get(i, 0))
                    replay.pairs.append(Pair(request.path, _json(request.body), _json(cassette.requests[index].body)))
                    replay.exchanges.append(_exchange(request, response))
                    return response

                # recorded answers the client retried away may be dropped: (cassette index, exchange index)
                transient: list[tuple[int, int]] = []

                def append(request: Any, response: Any) -> None:
                    count = len(cassette.data)
                    status, headers = int(response["status"]["code"]), dict(response.get("headers") or {})
                    original_append(request, response)
                    if len(cassette.data) > count:
                        replay.exchanges.append(_exchange(*cassette.data[-1]))
                        if status in RETRYABLE:
                            replay.pushbacks.append(Pushback(request.method, request.path, status,
                                                             retry_after(headers, datetime.now(timezone.utc))))
                            # the provider's weather, not a scripted answer (a case may script a 429)
                            if emulator is None or REFUSED_HEADER in headers:
                                transient.append((len(cassette.data) - 1, len(replay.exchanges) - 1))

                # observe each replayed request (and what it was paired with) and each recorded one
                cassette.play_response = play_response
                # a project's own request filter may not give the same request twice: it runs as vcrpy runs it
                if not recording and _filters_are_ours(recorder, self._before_record_request):
                    _filter_each_request_once(cassette)
                cassette.append = append
                if recording and emulator is not None:
                    _answer_in_process(cassette, emulator, conditions)
                stuck.watch_requests(self, cassette)  # for a run with a time limit: its requests in flight
                try:
                    yield replay
                finally:
                    _drop_retried_away(cassette, replay, transient)
                    if not recording:
                        replay.unused = len(cassette) - len(cassette.play_counts)
                    replay.recorded = [(r.method, r.path, int(resp["status"]["code"]))
                                       for r, resp in cassette.data[already:]]
            if persister.refused is not None:
                raise persister.refused
            self.large = persister.large
            if persister.failed is not None:
                cause = persister.failed
                raise HarnessError(f"{shown(self.path)}: the recording could not be written ({type(cause).__name__}: "
                                   f"{cause}); the committed cassette and golden are unchanged")
        except SecretInCassetteError as exc:
            self.discard()
            raise HarnessError(
                f"{shown(self.path)}: refusing to write the recording: it still contains what looks like a "
                "credential:\n  " + "\n  ".join(str(f) for f in exc.findings[:20])
                + "\nThe committed cassette and golden are unchanged. Headers, query parameters and URL passwords "
                "are scrubbed automatically (add header names with the rag_core_scrub_headers ini option); remove "
                "the credential from the case input or tool output it came from."
            ) from None
        except BaseException:
            self.discard()
            raise


def require_key(provider: str) -> None:
    """Recording live needs the provider's key in the environment; say so before anything runs."""
    variables = KEY_VARIABLES[provider]
    if not any(os.environ.get(variable) for variable in variables):
        raise HarnessError(
            f"recording needs a provider: set {variables[0]} to record against the live API, "
            "or pass --emulator to record against the built-in emulator"
        )
