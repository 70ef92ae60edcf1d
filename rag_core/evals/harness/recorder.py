"""vcrpy set up for one case: record modes, scrubbing, matching, and what replay reveals.

Replay plays interactions in order by method and path; request bodies are then compared
separately, so a run whose requests changed still completes and is reported *stale*
(with the body diff) instead of dying on the first request. When recording new episodes,
bodies must match too, so changed requests get recorded.
"""

from __future__ import annotations

import json
import os
import socket
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Iterator

from rag_core.evals.harness import cassette_format
from rag_core.evals.harness.errors import HarnessError
from rag_core.evals.harness.modes import RECORD_MODES


# request headers that carry credentials, or vary by machine and retry
SCRUBBED_REQUEST_HEADERS = [
    "authorization", "api-key", "x-api-key", "x-goog-api-key", "cookie",
    "openai-organization", "openai-project", "x-stainless-retry-count", "x-stainless-read-timeout",
    "x-stainless-os", "x-stainless-arch", "x-stainless-runtime", "x-stainless-runtime-version",
    "x-stainless-async", "x-stainless-lang", "content-length", "host",
]
SCRUBBED_QUERY_PARAMETERS = ["key", "api_key", "apikey", "api-key", "access_token", "token"]
KEPT_RESPONSE_HEADERS = {"content-type", "x-request-id", "request-id", "openai-version", "x-debug-trace-id"}
DEFAULT_HOSTS = {"/v1/": "https://api.openai.com", "/v1beta/": "https://generativelanguage.googleapis.com",
                 "/v2/": "https://api.cohere.com"}
KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY"}


def _json(body: Any) -> Any:
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    try:
        return json.loads(body) if body else None
    except ValueError:
        return body


def _clean_response(response: dict[str, Any]) -> dict[str, Any]:
    response["headers"] = {k: v for k, v in response.get("headers", {}).items() if k.lower() in KEPT_RESPONSE_HEADERS}
    return response


@dataclass
class Replay:
    """What the cassette saw during a case."""

    # (path, body sent now, body recorded) for every replayed request, in order
    pairs: list[tuple[str, Any, Any]] = field(default_factory=list)
    unused: int = 0
    recording: bool = False


class CaseRecorder:
    def __init__(self, cassette_path: Path, mode: str, emulator_url: str | None) -> None:
        if mode not in RECORD_MODES:
            raise HarnessError(f"--record-mode must be one of {', '.join(RECORD_MODES)}, got {mode!r}")
        self.path = cassette_path
        self.mode = mode
        self.emulator_url = emulator_url

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
        return request

    def _body_matcher(self, first: Any, second: Any) -> None:
        if self._strict_bodies() and _json(first.body) != _json(second.body):
            raise AssertionError("request bodies differ")

    @contextmanager
    def use(self, sdk_version: str) -> Iterator[Replay]:
        import vcr

        if self.path.exists():
            cassette_format.read_cassette(self.path)  # a corrupt cassette is an error naming the file
        mode = self.mode
        if mode == "rewrite":
            self.path.unlink(missing_ok=True)
            mode = "once"
        recorder = vcr.VCR(
            record_mode=mode,
            match_on=["method", "path", "json_body"],
            filter_headers=SCRUBBED_REQUEST_HEADERS,
            filter_query_parameters=SCRUBBED_QUERY_PARAMETERS,
            before_record_request=self._before_record_request,
            before_record_response=_clean_response,
            decode_compressed_response=True,
        )
        recorder.register_serializer("rag_core", cassette_format)
        recorder.register_matcher("json_body", self._body_matcher)
        replay = Replay(recording=self.will_record)
        with recorder.use_cassette(str(self.path), serializer="rag_core") as cassette:
            if replay.recording:
                target = "rag-core provider emulator" if self.emulator_url else "live provider API"
                meta = cassette.get_metadata("recorded_with", {})
                meta.clear()
                meta.update({"target": target, "sdk": sdk_version, "date": date.today().isoformat()})
            original = cassette.play_response

            def play_response(request: Any) -> Any:
                before = dict(cassette.play_counts)
                response = original(request)
                index = next(i for i, n in cassette.play_counts.items() if n != before.get(i, 0))
                replay.pairs.append((request.path, _json(request.body), _json(cassette.requests[index].body)))
                return response

            cassette.play_response = play_response  # observe each replayed request and what it was paired with
            try:
                yield replay
            finally:
                if not replay.recording:
                    replay.unused = len(cassette) - len(cassette.play_counts)


@contextmanager
def network_blocked() -> Iterator[None]:
    """Refuse every connection that is not to this machine (the emulator, a local database)."""
    original = socket.socket.connect

    def guarded(sock: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and not (host.startswith("127.") or host in ("localhost", "::1") or host.startswith("/")):
            raise HarnessError(f"network access blocked during replay: connection to {address!r}")
        return original(sock, address)

    socket.socket.connect = guarded  # type: ignore[method-assign]
    try:
        yield
    finally:
        socket.socket.connect = original  # type: ignore[method-assign]


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
    return "rag-core-replay-key"
