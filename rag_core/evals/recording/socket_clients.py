"""Cassette stubs for HTTP clients that vcrpy does not patch: clients that speak HTTP over their
own sockets.

vcrpy intercepts a request inside the HTTP library (httpx, aiohttp, urllib3, requests, …). A
client that writes HTTP/1.1 on a socket itself has no such layer, so its traffic would reach the
network guard and the case could not be pinned. For each such client known here, its one
"send a request, get a response" method is patched for the duration of a cassette, the way vcrpy
patches the libraries it knows: the request goes to the cassette (played, answered by the
in-process emulator, or, recording live, sent by the client's own method and appended).

Known clients:
- lm15's stdlib transports: DSPy's default engine (``dspy._vendor.lm15``) and the ``lm15``
  package itself. Only modules already imported are patched (never imported here): the case's
  target is imported before its cassette opens, so a program that configures DSPy at module
  level, as DSPy's docs do, is covered; one that first imports DSPy while the case runs is not,
  and the network guard names it.
"""

from __future__ import annotations

import http
import sys
from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from unittest import mock

# the modules of lm15's transports, under each name lm15 is installed as
LM15_PACKAGES = ("dspy._vendor.lm15", "lm15")


def _vcr_request(method: str, url: str, headers: list[tuple[str, str]], body: bytes) -> Any:
    from vcr.request import Request

    return Request(method, url, body or None, dict(headers))


def _cassette_response(cassette: Any, request: Any) -> dict[str, Any] | None:
    """The cassette's response to ``request`` (played or emulated), or None when the request must
    be sent (recording live); raises vcrpy's own error when the cassette cannot take it."""
    from vcr.errors import CannotOverwriteExistingCassetteException

    if cassette.can_play_response_for(request):
        return cassette.play_response(request)
    if cassette.write_protected:
        raise CannotOverwriteExistingCassetteException(cassette=cassette, failed_request=request)
    return None


def _headers(response: dict[str, Any]) -> list[tuple[str, str]]:
    return [(name, value) for name, values in response.get("headers", {}).items()
            for value in (values if isinstance(values, list) else [values])]


def _body(response: dict[str, Any]) -> bytes:
    body = response.get("body", {}).get("string", b"")
    return body.encode("utf-8") if isinstance(body, str) else body


def _recorded(status: int, reason: str, headers: list[tuple[str, str]], body: bytes) -> dict[str, Any]:
    joined: dict[str, list[str]] = {}
    for name, value in headers:
        joined.setdefault(name, []).append(value)
    return {"status": {"code": status, "message": reason}, "headers": joined, "body": {"string": body}}


def _reason(response: dict[str, Any]) -> str:
    status = response["status"]
    if status.get("message"):
        return status["message"]
    try:
        return http.HTTPStatus(int(status["code"])).phrase
    except ValueError:  # a status code the standard library does not name
        return ""


def _imported(name: str) -> Any:
    """The module, once its import has ended (None before, and while another thread, a run
    beside this one, is still importing it: its attributes may not be there yet)."""
    module = sys.modules.get(name)
    return None if getattr(getattr(module, "__spec__", None), "_initializing", False) else module


def _lm15_stubs(cassette: Any, package: str) -> list[Any]:
    """Patches of one lm15 installation's sync ``stream`` and async ``_do_stream`` (none until
    its transports are all imported: they are patched when a later run's cassette opens)."""
    names = [f"{package}.transports.{name}" for name in ("_sync", "_async", "_types")]
    if any(name in sys.modules and _imported(name) is None for name in names):
        return []
    sync, asynchronous, types = map(_imported, names)
    if types is None:
        return []
    patches = []
    if sync is not None:
        patches.append(_lm15_sync_patch(cassette, sync.StdlibTransport, types))
    if asynchronous is not None:
        patches.append(_lm15_async_patch(cassette, asynchronous.StdlibAsyncTransport, types))
    return patches


def _lm15_sync_patch(cassette: Any, transport_class: Any, types: Any) -> Any:
    """The sync transport's ``stream``, through the cassette."""
    send = transport_class.stream

    def stream(transport: Any, request: Any) -> Any:
        vcr_request = _vcr_request(request.method, request.url, request.headers, request.body)
        response = _cassette_response(cassette, vcr_request)
        if response is None:  # recording live: the client's own request, kept whole
            with send(transport, request) as live:
                body = b"".join(live)
                response = _recorded(live.status, live.reason, list(live.headers), body)
            cassette.append(vcr_request, response)
        return _lm15_response(types, response)

    return mock.patch.object(transport_class, "stream", stream)


def _lm15_async_patch(cassette: Any, transport_class: Any, types: Any) -> Any:
    """The async transport's ``_do_stream``, through the cassette."""
    send = transport_class._do_stream

    async def do_stream(transport: Any, request: Any) -> Any:
        vcr_request = _vcr_request(request.method, request.url, request.headers, request.body)
        response = _cassette_response(cassette, vcr_request)
        if response is None:
            live = await send(transport, request)
            try:
                body = b"".join([chunk async for chunk in live])
            finally:
                await live.aclose()
            response = _recorded(live.status, live.reason, list(live.headers), body)
            cassette.append(vcr_request, response)
        return _lm15_async_response(types, response)

    return mock.patch.object(transport_class, "_do_stream", do_stream)


def _lm15_response(types: Any, response: dict[str, Any]) -> Any:
    """A cassette's response as lm15's sync transport returns one."""
    def release(body_consumed: bool) -> None:
        return None

    return types.TransportResponse(status=int(response["status"]["code"]), reason=_reason(response),
                                   headers=_headers(response), http_version="HTTP/1.1",
                                   chunks=iter([_body(response)]), release=release)


def _lm15_async_response(types: Any, response: dict[str, Any]) -> Any:
    """A cassette's response as lm15's async transport returns one."""
    async def chunks() -> AsyncIterator[bytes]:
        yield _body(response)

    async def release(body_consumed: bool) -> None:
        return None

    return types.AsyncTransportResponse(status=int(response["status"]["code"]), reason=_reason(response),
                                        headers=_headers(response), http_version="HTTP/1.1",
                                        chunks=chunks(), release=release)


def stubs(cassette: Any, exclude: Iterable[str] = ()) -> Iterator[tuple[str, Any]]:
    """(package, patch) for each known socket-level client imported by now, but those in ``exclude``."""
    for package in LM15_PACKAGES:
        if package not in exclude:
            for patch in _lm15_stubs(cassette, package):
                yield package, patch


@contextmanager
def patched(cassette: Any) -> Iterator[None]:
    """Route the known socket-level clients' requests through ``cassette`` while it is open."""
    with ExitStack() as stack:
        for _, patch in stubs(cassette):
            stack.enter_context(patch)
        yield
