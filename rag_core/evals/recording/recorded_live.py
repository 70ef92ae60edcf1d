"""What a failed recording that went to the live API adds to its message: that it went live, and
how to record against the emulator or which key to set.

A recording without ``--emulator`` goes to the provider a program names, with the user's key,
or, where none is set, with the dummy key every case's environment gets (``provider_env``). A
newcomer who forgot ``--emulator`` then sees the SDK's ``APIConnectionError: Connection error.``
or an HTTP 401, neither of which says that the recording went live nor what to do instead. Which
provider was asked is read from the failed request (its host) or from the requests the recording
made; a program whose SDK raised before any request names no provider, and the note then names
the keys by example.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

from rag_core.providers import PROVIDERS, Provider, api_of, provider_of_api

# the exception classes, by name, of a connection that was never made (httpx, httpcore, the
# OpenAI/Anthropic SDKs, requests, urllib3, aiohttp); matched by name, none of them is imported
_CONNECTION_FAILURES = frozenset({"ConnectError", "APIConnectionError", "ConnectionError", "NewConnectionError",
                                  "ConnectTimeout", "ClientConnectorError", "ServerDisconnectedError"})
_REFUSED_KEY = (401, 403)


def _chain(error: BaseException | None) -> Iterable[BaseException]:
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ or error.__context__


def _could_not_connect(error: BaseException | None) -> bool:
    return any(isinstance(each, (ConnectionError, socket.gaierror)) or any(
        kind.__name__ in _CONNECTION_FAILURES for kind in type(each).__mro__) for each in _chain(error))


def _hosts_of(provider: Provider, environ: Mapping[str, str]) -> set[str]:
    urls = [environ.get(variable, "") for variable in provider.endpoint_variables] + [provider.default_base_url]
    return {urlsplit(url).hostname or "" for url in urls if "://" in url} - {""}


def _failed_host(error: BaseException | None) -> str | None:
    """The host of the request an exception in the chain carries (httpx's and requests' alike)."""
    for each in _chain(error):
        try:
            request = getattr(each, "request", None)
        except Exception:  # httpx raises when an error has no request attached
            request = None
        url = getattr(request, "url", None)
        host = getattr(url, "host", None) or (urlsplit(url).hostname if isinstance(url, str) else None)
        if host:
            return str(host)
    return None


def _asked(error: BaseException | None, recorded: Iterable[tuple[str, str, int]],
           environ: Mapping[str, str]) -> tuple[list[Provider], str | None]:
    """The providers the recording asked (from its requests and the failed one), and the host it
    could not reach, if any."""
    host = _failed_host(error)
    asked = [provider for provider in PROVIDERS if host is not None and host in _hosts_of(provider, environ)]
    for method, path, _ in recorded:
        api = api_of(method, path)
        if api is not None:
            asked.append(provider_of_api(api))
    return list({provider.name: provider for provider in asked}.values()), host


def _has_key(provider: Provider, environ: Mapping[str, str]) -> bool:
    return any(environ.get(variable) for variable in provider.key_variables)


def note(error: BaseException | None, recorded: list[tuple[str, str, int]], environ: Mapping[str, str],
         emulator_command: str, scripted: bool) -> str:
    """The sentence a failed live recording's message ends with ('' when it failed for another
    reason). ``recorded``: (method, path, status) of its requests; ``environ``: the user's own
    environment (without the case's dummy keys); ``emulator_command``: the same recording against
    the emulator; ``scripted``: whether the case has an ``emulate:`` script for it."""
    asked, host = _asked(error, recorded, environ)
    keyless = [provider for provider in asked if not _has_key(provider, environ)]
    no_key_at_all = not asked and not any(_has_key(provider, environ) for provider in PROVIDERS)
    refused = any(status in _REFUSED_KEY for _, _, status in recorded)
    unreachable = _could_not_connect(error)
    if not (keyless or no_key_at_all or unreachable or refused):
        return ""
    what: list[str] = []
    if unreachable:
        what.append(f"it could not connect to {host}" if host else "it could not connect to the provider")
    elif refused:
        what.append("the provider refused the key")
    if keyless:
        variables = " / ".join(provider.key_variables[0] for provider in keyless)
        what.append(f"{variables} is not set (a dummy key was sent)")
    elif no_key_at_all:
        what.append("no provider key is set (e.g. OPENAI_API_KEY)")
    if keyless:
        key = f"Set {keyless[0].key_variables[0]} to record against the live API"
    elif no_key_at_all:
        key = "Set the provider's key to record against the live API"
    elif refused:
        key = "Check the key"
    else:
        key = f"Check that the network reaches {host or 'the provider'}"
    emulator = ("or record against the built-in emulator" if scripted else
                "or script the model's answers under emulate: in the case file and record against the built-in emulator")
    return f". This recorded live (without --emulator): {' and '.join(what)}. {key}, {emulator}: {emulator_command}"
