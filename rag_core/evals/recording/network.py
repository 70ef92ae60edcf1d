"""The network guard: while a case runs, nothing leaves this machine (live recording apart).

The HTTP clients vcrpy patches (httpx, httpx2, requests/urllib3, aiohttp, http.client, boto3,
tornado, httplib2) never reach a socket during a case: the cassette or the in-process emulator
answers them. Whatever does reach one is a client the harness cannot record: a library with its
own transport, a gRPC channel, code run at the subject's import. The guard refuses those at the
socket layer (connecting, sending datagrams, resolving names that are not loopback) and keeps
each attempt, so the case fails naming the host and the client even when the library swallows the
error and carries on. Loopback stays open: a local database or search service is part of the
machine, not of the network.

Each attempt is charged to the case whose code made it, found the way the case's cassette is
(``run_binding.py``): the case's thread and what inherits its context (a coroutine it hands to
an event loop another thread runs, a job it submits to a thread pool), and the threads it
starts. A thread the subject starts is guarded for its whole life, also after its case has
ended: its late attempts are kept apart (``late_attempts``) for the session summary, with the
requests the router refused because their run had ended (``refuse_late``, from ``routing.py``).
Code no case can be told from (a thread started outside every case) is guarded by the one case
open; with several open (``--concurrency``), the attempt is charged to each, naming
``--concurrency 1``. The socket functions are patched once per process and stay patched;
outside a case they pass every call through.
"""

from __future__ import annotations

from collections import Counter

import _socket
import ipaddress
import socket
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, NoReturn

from rag_core.evals.recording import run_binding
from rag_core.evals.common.errors import HarnessError

# frames of these packages are the harness and the test runner, not the code under test
_HARNESS_PACKAGES = {"rag_core", "pytest", "_pytest", "pluggy", "xdist", "execnet", "vcr"}


class NetworkBlockedError(HarnessError, ConnectionError):
    """A connection the guard refused. A ConnectionError too, so a library that handles network
    failures handles this one the way it would handle an unreachable host."""


@dataclass(frozen=True)
class BlockedAttempt:
    what: str  # "connection to", "name resolution of", ...
    address: str
    client: str  # the library that opened the socket (its innermost frame outside the standard library)
    caller: str  # the outermost code under test on the stack, for finding where the call came from
    case: str | None = None  # the case whose guard was on, or whose thread this is
    among: int = 0  # made by code no case can be told from, while this many cases were guarded at once

    def __str__(self) -> str:
        origin = f" (called from {self.caller})" if self.caller and self.caller != self.client else ""
        shared = (f", from a thread no case can be told from while {self.among} cases ran at once (run with "
                  "--concurrency 1 to tell which)" if self.among > 1 else "")
        return f"{self.what} {self.address} by {self.client}{origin}{shared}"


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


def _package(frame: Any) -> str:
    return str(frame.f_globals.get("__name__") or "?")


def _who(skip_module: str, interceptors: tuple[str, ...] = ()) -> tuple[str, str]:
    """(client, caller): the innermost module outside the standard library and this guard (the
    library that opened the socket; when the innermost frames are of ``interceptors``, modules
    that took a request from its library, the library below them), and the outermost module of
    the code under test (the first one inside the harness's call, or in a thread the subject
    started, the outermost one)."""
    stdlib = sys.stdlib_module_names
    names = []
    frame = sys._getframe(2)
    while frame is not None:
        names.append(_package(frame))
        frame = frame.f_back
    while names and names[0].startswith(interceptors):
        del names[0]
    outside = [n for n in names if n != skip_module and n.split(".", 1)[0] not in stdlib and n != "__main__"]
    client = outside[0] if outside else "the standard library's socket module"
    harness = [i for i, n in enumerate(names) if n.startswith("rag_core.evals") and n != skip_module]
    below = names[:harness[0]] if harness else names  # frames the harness called, innermost first
    subject = [n for n in below if n != skip_module and n.split(".", 1)[0] not in stdlib | _HARNESS_PACKAGES]
    return client, subject[-1] if subject else ""


@dataclass(eq=False)
class _Scope:
    """One case's guard: the attempts refused in its code, while it is open (and its run has
    not ended)."""

    case: str | None
    attempts: list[BlockedAttempt] = field(default_factory=list)
    open: bool = True
    run: run_binding.Run | None = None

    @property
    def taking(self) -> bool:
        """Whether an attempt charged to it now is the case's own, not a late one."""
        return self.open and not (self.run is not None and self.run.ended)


class _Guard:
    """The process's one guard: the socket patches and the scopes open."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.installed = False
        self.scopes: list[_Scope] = []  # open now, innermost last
        self.late: list[BlockedAttempt] = []

    def charged(self) -> list[_Scope]:
        """The scopes an attempt of the calling code is charged to: its run's (bound to its
        context, else the one it was started in, open or not: a thread outlives the case that
        started it); none for a run not guarded (recording live); for code no run can be told
        from, the open ones. Under the lock."""
        for binding in (run_binding.bound(), run_binding.started_in(threading.current_thread())):
            if binding is not None and binding.guard is not None:
                return [binding.guard]
        if run_binding.bound() is not None:
            return []
        return [scope for scope in self.scopes if scope.taking]

    def refuse(self, what: str, address: Any) -> None:
        with self.lock:
            scopes = self.charged()
        if not scopes:
            return
        client, caller = _who(__name__)
        attempts = [BlockedAttempt(what, _address(address), client, caller, scope.case,
                                   len(scopes) if len(scopes) > 1 else 0) for scope in scopes]
        with self.lock:
            for scope, attempt in zip(scopes, attempts):
                (scope.attempts if scope.taking else self.late).append(attempt)
        raise NetworkBlockedError(f"network access blocked during the case: {attempts[0]}")

    def refuse_late(self, case: str, method: str, url: str) -> NoReturn:
        client, caller = _who(__name__, _INTERCEPTORS)
        attempt = BlockedAttempt(method, url, client, caller, case)
        with self.lock:
            self.late.append(attempt)
        raise NetworkBlockedError(f"network access blocked: case {case} has ended, and {attempt} was sent by code "
                                  "it left running")

    def install(self) -> None:
        with self.lock:
            if self.installed:
                return
            self.installed = True
        run_binding.install()  # who started each thread, and each pool job's run
        resolvers = {name: getattr(socket, name) for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex")}
        guard = self

        def guarded(original: Any, what: str, address_of: Callable[[tuple[Any, ...]], Any]) -> Any:
            """``original`` (a socket method), refusing first what would leave the machine."""
            def method(sock: socket.socket, *args: Any) -> Any:
                address = address_of(args)
                if address is not None and sock.family != getattr(socket, "AF_UNIX", None) and not is_loopback(
                        _host(address)):
                    guard.refuse(what, address)
                return original(sock, *args)

            return method

        def guards(cls: type) -> dict[str, Any]:
            """The guarded methods of a socket class: where each finds the address it sends to."""
            return {
                "connect": guarded(cls.connect, "connection to", lambda args: args[0]),
                "connect_ex": guarded(cls.connect_ex, "connection to", lambda args: args[0]),
                "sendto": guarded(cls.sendto, "datagram to", lambda args: args[-1]),
                "sendmsg": guarded(cls.sendmsg, "message to", lambda args: args[3] if len(args) >= 4 else None),
            }

        def resolver(name: str) -> Any:
            original = resolvers[name]

            def resolve(host: Any, *args: Any, **kwargs: Any) -> Any:
                if host is not None and not is_loopback(host):
                    guard.refuse("name resolution of", host)
                return original(host, *args, **kwargs)

            return resolve

        for name, method in guards(socket.socket).items():
            setattr(socket.socket, name, method)
        # code that makes its sockets from the C module directly (``_socket.socket()``) gets a
        # subclass with the same guards (the C type itself cannot be patched)
        _socket.socket = type("GuardedSocket", (_socket.socket,), guards(_socket.socket))  # type: ignore[misc]
        for name in resolvers:
            setattr(socket, name, resolver(name))


_GUARD = _Guard()
# the modules between a client and the router when a request is refused there: vcrpy's stubs,
# the harness's own socket-level stubs, the router
_INTERCEPTORS = ("vcr", "rag_core.evals.recording.")


def _host(address: Any) -> Any:
    return address[0] if isinstance(address, tuple) else address


def _address(address: Any) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        return f"{address[0]}:{address[1]}"
    return str(address.decode("ascii", "replace") if isinstance(address, bytes) else address)


@contextmanager
def network_blocked(case: str | None = None) -> Iterator[list[BlockedAttempt]]:
    """Refuse everything that would leave this machine until the block ends (and, for the threads
    started inside it, for their whole life); yields the list the refused attempts are added to."""
    _GUARD.install()
    scope = _Scope(case)
    with _GUARD.lock:
        _GUARD.scopes.append(scope)
    try:
        with run_binding.running(case, guard=scope) as scope.run:
            yield scope.attempts
    finally:
        with _GUARD.lock:  # by identity: two scopes may be equal
            del _GUARD.scopes[next(i for i, s in enumerate(_GUARD.scopes) if s is scope)]
            scope.open = False


def refuse_late(case: str, method: str, url: str) -> NoReturn:
    """Refuse a request sent by code of case ``case`` after its run had ended (``routing.py``),
    keeping it for the session's summary beside the guard's late attempts."""
    _GUARD.refuse_late(case, method, url)


def late_attempts() -> list[BlockedAttempt]:
    """Attempts refused in code a case left running (a thread it started, a job it submitted),
    after that case had ended (taken, not copied)."""
    with _GUARD.lock:
        taken, _GUARD.late[:] = list(_GUARD.late), []
    return taken


def blocked_message(blocked: list[BlockedAttempt]) -> str:
    """Why a run that reached for the network is not trusted (it made calls no cassette holds)."""
    counted = Counter(str(attempt) for attempt in blocked)
    listed = "; ".join(f"{what} (×{n})" if n > 1 else what for what, n in list(counted.items())[:5])
    if len(counted) > 5:
        listed += f"; and {len(counted) - 5} more"
    return (f"it reached for the network, which is closed while a case runs: {listed}. Only the HTTP clients the "
            "harness intercepts are recorded and replayed (httpx, httpx2, requests/urllib3, aiohttp, http.client, "
            "boto3, tornado, httplib2, and DSPy's own transports); call the provider through one of them")
