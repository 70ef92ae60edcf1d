"""``rag-core view``: the report served from 127.0.0.1 to a browser, until stopped.

The page is one file that needs nothing else. The server answers ``/<record name>.html`` with
that run's report (what a history point links to, built when asked for: ``html.HistoryPages``;
404 when the folder has no such record) and every other path with the page itself. It listens
on loopback only, and reads no file but the run records of its folder.

Loopback alone does not keep other sites out: a page on any site can rebind its own host name to
127.0.0.1 (DNS rebinding) and read what the server answers, as the same origin. What that request
carries is its own host name in ``Host:``, so the server answers only requests whose ``Host:`` is
its own address, ``127.0.0.1:<port>`` or ``localhost:<port>`` (421 Misdirected Request otherwise).
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable
from urllib.parse import unquote, urlsplit

from rag_core.evals.runs.schema import RecordError
from rag_core.evals.runs.store import is_record_name


HOST = "127.0.0.1"


def own_hosts(port: int) -> frozenset[str]:
    """The ``Host:`` values a browser sends for this server's own URLs (lower case); on port 80 it
    leaves the port out."""
    names = (HOST, "localhost")
    return frozenset(f"{name}:{port}" for name in names) | (frozenset(names) if port == 80 else frozenset())


class ReportServer:
    def __init__(self, html: str, port: int = 0, pages: Callable[[str], str | None] | None = None) -> None:
        page = html.encode("utf-8")
        allowed: frozenset[str] = frozenset()  # set once the port is known

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                host = (self.headers.get("Host") or "").strip().lower()
                if host not in allowed:
                    return self._answer(421, f"this server answers requests for {HOST}:{port_served} or "
                                             f"localhost:{port_served} only, not for Host {host!r}\n".encode(),
                                        "text/plain; charset=utf-8")
                name = unquote(urlsplit(self.path).path).lstrip("/")
                body = page
                stem = name.removesuffix(".html")
                if pages is not None and name != stem and is_record_name(f"{stem}.json"):
                    try:
                        other = pages(name)
                    except RecordError as exc:  # a record that cannot be read: said, not a traceback
                        other, missing = None, str(exc)
                    else:
                        missing = f"no run record named {stem}"
                    if other is None:
                        return self._answer(404, f"{missing}\n".encode(), "text/plain; charset=utf-8")
                    body = other.encode("utf-8")
                self._answer(200, body, "text/html; charset=utf-8")

            def _answer(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:  # quiet: the terminal shows the URL only
                pass

        self.server = ThreadingHTTPServer((HOST, port), Handler)
        port_served = self.server.server_address[1]
        allowed = own_hosts(port_served)
        self.thread = threading.Thread(target=self.server.serve_forever, name="rag-core-view", daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
