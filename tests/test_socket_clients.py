"""Clients that speak HTTP over their own sockets (DSPy's lm15 transports) go through the
cassette like the HTTP libraries vcrpy patches: recorded live (here: against a loopback server),
then replayed with the server gone, sync and async."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import vcr

from rag_core.evals.recording import socket_clients

transports = pytest.importorskip("dspy._vendor.lm15.transports")


class _Provider(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        sent = json.loads(self.rfile.read(int(self.headers["content-length"])))
        body = json.dumps({"echo": sent["input"]}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def provider():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Provider)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1/echo"
    server.shutdown()
    server.server_close()


def _request(url: str, text: str):
    return transports.TransportRequest("POST", url, [("content-type", "application/json")],
                                       json.dumps({"input": text}).encode())


def _sync_send(url: str, text: str) -> tuple[int, bytes]:
    with transports.StdlibTransport() as transport, transport.stream(_request(url, text)) as response:
        return response.status, response.read()


def _async_send(url: str, text: str) -> tuple[int, bytes]:
    async def send() -> tuple[int, bytes]:
        async with transports.StdlibAsyncTransport() as transport, transport.stream(_request(url, text)) as response:
            return response.status, await response.read()

    return asyncio.run(send())


@pytest.mark.parametrize("send", [_sync_send, _async_send], ids=["sync", "async"])
def test_recorded_live_then_replayed_without_the_server(tmp_path, provider, send):
    cassette_path = str(tmp_path / "socket_client.yaml")
    with vcr.use_cassette(cassette_path, record_mode="all", match_on=["method", "path", "body"]) as cassette:
        with socket_clients.patched(cassette):
            assert send(provider, "pad thai") == (200, b'{"echo": "pad thai"}')
    assert len(cassette.data) == 1
    with vcr.use_cassette(cassette_path, record_mode="none", match_on=["method", "path", "body"]) as cassette:
        with socket_clients.patched(cassette):
            # the server still answers, so only the cassette's play count proves where it came from
            assert send(provider, "pad thai") == (200, b'{"echo": "pad thai"}')
        assert cassette.all_played


def test_a_request_the_cassette_does_not_hold_is_vcrpys_own_error(tmp_path, provider):
    from vcr.errors import CannotOverwriteExistingCassetteException

    cassette_path = str(tmp_path / "socket_client.yaml")
    with vcr.use_cassette(cassette_path, record_mode="all") as cassette, socket_clients.patched(cassette):
        _sync_send(provider, "pad thai")
    with vcr.use_cassette(cassette_path, record_mode="none", match_on=["method", "path", "body"]) as cassette:
        with socket_clients.patched(cassette), pytest.raises(CannotOverwriteExistingCassetteException):
            _sync_send(provider, "tom kha gai")


def test_outside_a_cassette_the_client_is_its_own(provider):
    assert _sync_send(provider, "green curry") == (200, b'{"echo": "green curry"}')
    assert transports.StdlibTransport.stream.__module__.endswith("lm15.transports._sync")


def test_a_transport_another_run_is_still_importing_is_left_for_a_later_cassette(monkeypatch):
    """Runs at once: one run's cassette opened while a run beside it was importing DSPy, and
    patching read the half-imported module (AttributeError: partially initialized module
    'dspy._vendor.lm15.transports._sync' has no attribute 'StdlibTransport')."""
    import sys

    package = "dspy._vendor.lm15"
    module = sys.modules[f"{package}.transports._sync"]
    monkeypatch.setattr(module.__spec__, "_initializing", True, raising=False)
    monkeypatch.delattr(module, "StdlibTransport")  # what a half-imported module lacks
    assert list(socket_clients.stubs(object())) == []
    monkeypatch.undo()
    assert [name for name, _ in socket_clients.stubs(object())].count(package) == 2  # sync and async, once imported
