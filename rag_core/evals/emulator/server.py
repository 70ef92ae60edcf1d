"""The provider emulator as an HTTP server on 127.0.0.1, for recording cassettes without keys.

For recording by hand (``rag-core emulator serve``) and for tests that point an SDK at it. The
harness itself does not use it: while it records against the emulator, the cassette hands each
request to a ``ScriptedProvider`` in-process, so programs keep their own endpoints.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Sequence

from rag_core.evals.emulator.provider import ScriptedProvider


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    # Each reply goes out in one write (``_reply``), with Nagle's algorithm off: a reply written as
    # headers then body, with Nagle on, waited on a kept-alive connection for the client's delayed
    # ACK of the headers before the body left (about 40 ms per request with httpx and openai).
    disable_nagle_algorithm = True

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        self._answer("POST")

    # what SDKs call besides model calls: model lists (GET), and endpoints the emulator refuses by name
    def do_GET(self) -> None:  # noqa: N802
        self._answer("GET")

    def do_DELETE(self) -> None:  # noqa: N802
        self._answer("DELETE")

    def do_PUT(self) -> None:  # noqa: N802
        self._answer("PUT")

    def do_PATCH(self) -> None:  # noqa: N802
        self._answer("PATCH")

    def _answer(self, method: str) -> None:
        try:
            length = int(self.headers.get("content-length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            self._reply(413 if length > MAX_BODY else 400, "application/json",
                        b'{"error": {"message": "the body must have a content-length of at most 64 MiB"}}', {})
            self.close_connection = True
            return
        body = self.rfile.read(length)
        provider = self.server.provider
        if provider is None:
            reply_status, content_type, payload, headers = 503, "application/json", b'{"error": {"message": "no script loaded"}}', {}
        else:
            try:
                # the query (alt=sse) is not needed
                reply = provider.reply(method, self.path.split("?")[0], body, dict(self.headers.items()))
            except Exception as exc:  # noqa: BLE001 (a fault of the emulator, answered, never a script's end)
                message = json.dumps(f"the emulator failed: {type(exc).__name__}: {exc}")
                reply_status, content_type, payload, headers = 500, "application/json", (
                    '{"error": {"message": %s, "type": "emulator_error"}}' % message).encode(), {}
            else:
                reply_status, content_type, payload, headers = reply.status, reply.content_type, reply.body, reply.headers
        self._reply(reply_status, content_type, payload, headers)

    def _reply(self, status: int, content_type: str, payload: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(payload)))
        for key, value in headers.items():
            self.send_header(key, value)
        self._headers_buffer.append(b"\r\n" + payload)  # end_headers, with the body in the same write
        self.flush_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


# How often the serving loop looks for a stop request. ``close`` waits for the loop to look,
# and socketserver's default (0.5 s) made every recording session, and every test starting an
# emulator, wait up to half a second at its end.
POLL_SECONDS = 0.02


MAX_BODY = 64 * 1024 * 1024  # a request body larger than this is refused unread


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # socketserver's 5 reset connections under 200 concurrent requests
    provider: ScriptedProvider | None = None


class EmulatorServer:
    """Serves on loopback only; ``port=0`` takes a free port."""

    def __init__(self, port: int = 0) -> None:
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(POLL_SECONDS,),
                                        name="rag-core-emulator", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def load(self, turns: Sequence[Any], seed: str, then: Any = None) -> ScriptedProvider:
        """Serve ``turns`` (one per provider call) from now on, then ``then`` for every further
        call if given; ids derive from ``seed``."""
        provider = ScriptedProvider(list(turns), seed=seed, then=then)
        self._server.provider = provider
        return provider

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
