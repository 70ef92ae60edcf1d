"""The HTTP clients the provider SDKs' connections share, and the bytes of the bodies they post.

OpenAI and Anthropic build theirs the same way: the Stainless SDKs' own ``DefaultHttpxClient``,
over the HTTP library that SDK release is built on (httpx2 from openai 3.x and anthropic 1.0 on,
httpx before), so the client always follows the installed SDK.

Building a client loads the CA bundle (about 20 ms); models are cheap to create (tests build one
per case), so every model built without ``http_client`` shares one client and its connection
pool per SDK. The cache is keyed by the SDK module itself, in case it is ever re-imported.
"""

from __future__ import annotations

import functools
import inspect
import json
from typing import Any

from rag_core._optional import require


def json_bytes(body: Any) -> bytes:
    """The bytes a posted JSON body goes out as, whichever SDK release and HTTP library send it.

    Given a dict, openai 3.x serializes it itself while 1.x hands it to httpx, whose encoding
    changed in 0.28 (before: ``", "`` separators and ASCII escapes), so the same program would
    send other bytes beside an older httpx. These are the bytes current SDKs write: compact,
    UTF-8, no NaN."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def post_json(client: Any, path: str, body: dict[str, Any], **options: Any) -> Any:
    """``client.post`` (a Stainless SDK client: openai, anthropic) of ``body`` as ``json_bytes``,
    the reply as plain JSON (``cast_to=object``); ``options`` are ``post``'s other arguments."""
    return client.post(path, cast_to=object, **{_raw_body_parameter(type(client)): json_bytes(body)}, **options)


@functools.cache
def _raw_body_parameter(client_type: type) -> str:
    """Where a client's ``post`` takes raw bytes: ``content`` where it has one (openai 2.x, whose
    ``body`` warns about bytes, and anthropic, whose ``body`` refuses them); before, ``body``
    sends bytes as they are (openai 1.x)."""
    return "content" if "content" in inspect.signature(client_type.post).parameters else "body"


@functools.cache
def shared_tls_context() -> Any:
    import ssl

    certifi = require("certifi", extra="agent", feature="the TLS context of rag_core's provider clients")
    return ssl.create_default_context(cafile=certifi.where())


_SHARED_CLIENTS: dict[str, tuple[int, Any]] = {}


def shared_http_client(sdk: Any) -> Any:
    """The one process-wide sync client of ``sdk`` (the openai or anthropic module)."""
    name = sdk.__name__
    kept = _SHARED_CLIENTS.get(name)
    if kept is None or kept[0] != id(sdk):
        kept = _SHARED_CLIENTS[name] = (id(sdk), sdk.DefaultHttpxClient(verify=shared_tls_context()))
    return kept[1]


def is_async_client(client: Any) -> bool:
    """An async HTTP client, by what it does (its ``send`` is a coroutine function), not by its
    class name: an SDK's own ``DefaultAsyncHttpxClient`` and any subclass count."""
    return inspect.iscoroutinefunction(getattr(type(client), "send", None))


def http_client_for(sdk: Any, given: Any, asynchronous: bool) -> Any:
    """The HTTP client an SDK client of ``sdk`` is built with: the caller's ``given`` one when it
    is of the kind wanted, else the process's shared sync client, or for an async client a new
    one (an async connection pool belongs to one event loop) that shares the TLS context."""
    if given is not None and is_async_client(given) == asynchronous:
        return given
    if asynchronous:
        return sdk.DefaultAsyncHttpxClient(verify=shared_tls_context())
    return shared_http_client(sdk)
