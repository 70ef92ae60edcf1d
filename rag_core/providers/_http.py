"""The HTTP clients the provider SDKs' connections share (OpenAI and Anthropic build theirs the
same way: the Stainless SDKs' ``DefaultHttpxClient`` over httpx2).

Building a client loads the CA bundle (about 20 ms); models are cheap to create (tests build one
per case), so every model built without ``http_client`` shares one client and its connection
pool per SDK. The cache is keyed by the SDK module itself, in case it is ever re-imported.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any


@functools.cache
def shared_tls_context() -> Any:
    import ssl

    import certifi

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
