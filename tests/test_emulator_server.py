"""The emulator's HTTP server answers each request in one write, with Nagle's algorithm off.

Written as headers then body on a kept-alive connection with Nagle on, the body waited for the
client's delayed ACK of the headers: about 40 ms per request, which made every SDK call against
``rag-core emulator serve`` slow. What is checked here is how the reply is written, not a time.
"""

from __future__ import annotations

import http.client
import json
import socket
import socketserver

from rag_core.evals.emulator.server import EmulatorServer


def test_each_reply_is_one_write_on_a_no_delay_socket(monkeypatch):
    writes: list[tuple[bytes, int]] = []
    write = socketserver._SocketWriter.write

    def recorded(self, data):  # the handler's wfile: every write it makes, and the socket's TCP_NODELAY then
        writes.append((bytes(data), self._sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)))
        return write(self, data)

    monkeypatch.setattr(socketserver._SocketWriter, "write", recorded)
    server = EmulatorServer()
    try:
        connection = http.client.HTTPConnection(server.url.removeprefix("http://"), timeout=10)
        body = json.dumps({"model": "gpt-5.2", "messages": [{"role": "user", "content": "hi"}]})
        answers = []
        for text in ("first", "second"):  # one kept-alive connection, as an SDK's client keeps it
            server.load([{"text": text}], seed="one-write")
            connection.request("POST", "/v1/chat/completions", body, {"content-type": "application/json"})
            response = connection.getresponse()
            assert response.status == 200
            answers.append(json.loads(response.read())["choices"][0]["message"]["content"])
        connection.close()
    finally:
        server.close()
    assert answers == ["first", "second"]
    assert len(writes) == 2, [data[:60] for data, _ in writes]  # headers and body together, per reply
    for data, no_delay in writes:
        head, _, payload = data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200") and json.loads(payload)["object"] == "chat.completion"
        assert no_delay
