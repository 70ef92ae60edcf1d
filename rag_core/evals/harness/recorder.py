"""vcrpy set up for one case: record modes, scrubbing, matching, and what replay reveals.

Replay plays interactions in order by method and path; request bodies are then compared
separately, so a run whose requests changed still completes and is reported *stale*
(with the body diff) instead of dying on the first request. When recording new episodes,
bodies must match too, so changed requests get recorded.

Recording never touches the committed cassette: vcrpy records into a staging file beside it
(a copy of the cassette when the mode keeps old interactions), and only ``commit()`` (called
when the whole case succeeded) renames the staging file over the cassette. Any failure, a
credential refusal, a provider error, a crash, leaves the cassette as it was.
"""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import socket
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Iterator

from rag_core.evals.atomic import write_atomic
from rag_core.evals.credentials import detector
from rag_core.evals.harness import cassette_format
from rag_core.evals.harness.errors import HarnessError, SecretInCassetteError
from rag_core.evals.harness.modes import RECORD_MODES
from rag_core.evals.harness.provider_env import DUMMY_KEY
from rag_core.evals.harness.wire import Exchange
from rag_core.evals.harness.paths import shown


KEPT_RESPONSE_HEADERS = {"content-type", "x-request-id", "request-id", "openai-version", "x-debug-trace-id"}
DEFAULT_HOSTS = {"/v1/": "https://api.openai.com", "/v1beta/": "https://generativelanguage.googleapis.com",
                 "/v2/": "https://api.cohere.com"}
KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY"}
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
    body = response.get("body", {}).get("string")
    stream = "event-stream" in cassette_format.content_type(response.get("headers", {}))
    if stream and isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    return Exchange(request.method, request.path, _json(request.body), int(response["status"]["code"]),
                    body if stream else _json(body))


def _clean_response(response: dict[str, Any]) -> dict[str, Any]:
    response["headers"] = {k: v for k, v in response.get("headers", {}).items() if k.lower() in KEPT_RESPONSE_HEADERS}
    return response


@dataclass
class Replay:
    """What the cassette saw during a case."""

    # (path, body sent now, body recorded) for every replayed request, in order
    pairs: list[tuple[str, Any, Any]] = field(default_factory=list)
    unused: int = 0
    # (method, path, status) of every interaction recorded in this run
    recorded: list[tuple[str, str, int]] = field(default_factory=list)
    # what the cassette says it was recorded with (target, sdk, date, script digest)
    recorded_with: dict[str, Any] = field(default_factory=dict)
    # every request and answer of the run, recorded or replayed, in the order sent
    exchanges: list[Exchange] = field(default_factory=list)


class _AtomicPersister:
    """vcrpy's filesystem persister, writing the (staging) file atomically.

    A credential refusal is kept, not raised: vcrpy saves inside its context manager's exit,
    and an exception there leaves its HTTP-client patches in a state where the next cassette
    records nothing. The recorder raises the refusal once vcrpy has exited cleanly."""

    def __init__(self) -> None:
        self.refused: SecretInCassetteError | None = None

    def load_cassette(self, cassette_path: Any, serializer: Any) -> Any:
        from vcr.persisters.filesystem import FilesystemPersister

        return FilesystemPersister.load_cassette(cassette_path, serializer)

    def save_cassette(self, cassette_path: Any, cassette_dict: Any, serializer: Any) -> None:
        from vcr.serialize import serialize

        try:
            text = serialize(cassette_dict, serializer)
        except SecretInCassetteError as exc:
            self.refused = exc
            return
        write_atomic(Path(cassette_path), text)


class CaseRecorder:
    def __init__(self, cassette_path: Path, mode: str, emulator_url: str | None, script_digest: str | None = None) -> None:
        if mode not in RECORD_MODES:
            raise HarnessError(f"--record-mode must be one of {', '.join(RECORD_MODES)}, got {mode!r}")
        self.path = cassette_path
        self.mode = mode
        self.emulator_url = emulator_url
        self.script_digest = script_digest  # of the case's emulate: list, kept in the cassette
        self.staging = cassette_path.with_name(f".{cassette_path.name}.recording")
        self.label: str | None = None  # set while a judge runs: its recorded requests are marked

    @property
    def will_record(self) -> bool:
        exists = self.path.exists()
        return self.mode in ("all", "rewrite", "new_episodes") or (self.mode == "once" and not exists)

    def _strict_bodies(self) -> bool:
        return self.mode == "new_episodes"

    def _before_record_request(self, request: Any) -> Any:
        if self.emulator_url and request.uri.startswith(self.emulator_url):
            path = request.uri[len(self.emulator_url):]
            host = next((h for p, h in DEFAULT_HOSTS.items() if path.startswith(p)), "https://api.openai.com")
            request.uri = host + path
        scrubber = detector()
        request.uri = scrubber.scrub_url(request.uri)
        for name in [n for n in request.headers if scrubber.scrub_header(n)]:
            del request.headers[name]
        if self.label is not None:
            request.headers[LABEL_HEADER] = self.label  # in the cassette only: the request was sent without it
        return request

    def _body_matcher(self, first: Any, second: Any) -> None:
        if self._strict_bodies() and _json(first.body) != _json(second.body):
            raise AssertionError("request bodies differ")

    def commit(self) -> None:
        """The case succeeded: its recording replaces the cassette (one atomic rename)."""
        if self.staging.exists():
            os.replace(self.staging, self.path)

    def discard(self) -> None:
        self.staging.unlink(missing_ok=True)

    @contextmanager
    def use(self, sdk_version: str) -> Iterator[Replay]:
        import vcr

        if self.path.exists():
            cassette_format.read_cassette(self.path)  # a corrupt cassette is an error naming the file
        recording = self.will_record
        mode = "once" if self.mode == "rewrite" else self.mode
        target = self.path
        if recording:
            self.discard()  # left over from a killed run
            if self.mode != "rewrite" and self.path.exists():
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
        persister = _AtomicPersister()
        recorder.register_persister(persister)
        recorder.register_matcher("json_body", self._body_matcher)
        replay = Replay()
        try:
            with recorder.use_cassette(str(target), serializer="rag_core") as cassette:
                replay.recorded_with = dict(cassette.get_metadata("recorded_with", {}))
                already = len(cassette.data)
                if recording:
                    meta = cassette.get_metadata("recorded_with", {})
                    meta.clear()
                    meta.update({"target": "rag-core provider emulator" if self.emulator_url else "live provider API",
                                 "sdk": sdk_version, "date": date.today().isoformat()})
                    if self.emulator_url and self.script_digest:
                        meta["script"] = self.script_digest
                original, original_append = cassette.play_response, cassette.append

                def play_response(request: Any) -> Any:
                    before = dict(cassette.play_counts)
                    response = original(request)
                    index = next(i for i, n in cassette.play_counts.items() if n != before.get(i, 0))
                    replay.pairs.append((request.path, _json(request.body), _json(cassette.requests[index].body)))
                    replay.exchanges.append(_exchange(request, response))
                    return response

                def append(request: Any, response: Any) -> None:
                    count = len(cassette.data)
                    original_append(request, response)
                    if len(cassette.data) > count:
                        replay.exchanges.append(_exchange(*cassette.data[-1]))

                # observe each replayed request (and what it was paired with) and each recorded one
                cassette.play_response = play_response
                cassette.append = append
                try:
                    yield replay
                finally:
                    if not recording:
                        replay.unused = len(cassette) - len(cassette.play_counts)
                    replay.recorded = [(r.method, r.path, int(resp["status"]["code"]))
                                       for r, resp in cassette.data[already:]]
            if persister.refused is not None:
                raise persister.refused
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


def is_loopback(host: Any) -> bool:
    """An address on this machine: a loopback IP (127.0.0.0/8, ::1), ``localhost``, or a unix
    socket path. A host name that merely starts with ``127.`` is a name like any other."""
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    if host.startswith("/") or host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _host(address: Any) -> Any:
    return address[0] if isinstance(address, tuple) else address


@contextmanager
def network_blocked() -> Iterator[None]:
    """Refuse everything that would leave this machine (the emulator and a local database stay
    reachable): connecting, sending datagrams, and resolving names that are not loopback."""
    originals = {name: getattr(socket.socket, name) for name in ("connect", "connect_ex", "sendto", "sendmsg")}
    original_getaddrinfo = socket.getaddrinfo

    def guard(sock: socket.socket, address: Any, what: str) -> None:
        if address is not None and sock.family != getattr(socket, "AF_UNIX", None) and not is_loopback(_host(address)):
            raise HarnessError(f"network access blocked during replay: {what} {address!r}")

    def connect(sock: socket.socket, address: Any) -> Any:
        guard(sock, address, "connection to")
        return originals["connect"](sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> Any:
        guard(sock, address, "connection to")
        return originals["connect_ex"](sock, address)

    def sendto(sock: socket.socket, data: Any, *args: Any) -> Any:
        guard(sock, args[-1], "datagram to")
        return originals["sendto"](sock, data, *args)

    def sendmsg(sock: socket.socket, buffers: Any, *args: Any) -> Any:
        guard(sock, args[2] if len(args) >= 3 else None, "message to")
        return originals["sendmsg"](sock, buffers, *args)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host is not None and not is_loopback(host):
            raise HarnessError(f"network access blocked during replay: name resolution of {host!r}")
        return original_getaddrinfo(host, *args, **kwargs)

    for name, replacement in (("connect", connect), ("connect_ex", connect_ex), ("sendto", sendto), ("sendmsg", sendmsg)):
        setattr(socket.socket, name, replacement)
    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(socket.socket, name, original)
        socket.getaddrinfo = original_getaddrinfo  # type: ignore[assignment]


def api_key(provider: str, recording: bool, emulator: bool) -> str:
    """The key models get: a real one only when recording live; a dummy otherwise (never saved)."""
    if recording and not emulator:
        variable = KEY_VARIABLES[provider]
        key = os.environ.get(variable)
        if not key:
            raise HarnessError(
                f"recording needs a provider: set {variable} to record against the live API, "
                "or pass --emulator to record against the built-in emulator"
            )
        return key
    return DUMMY_KEY
