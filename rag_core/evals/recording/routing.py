"""One set of HTTP-library patches for the whole process, each request handed to its run's cassette.

vcrpy patches the HTTP libraries for one cassette at a time, process-wide: two cassettes open at
once in two threads would take each other's requests. Live runs (``--concurrency``) play many
cases and repeats at once, so the libraries are patched once, for a router that vcrpy's stubs
hold in place of a cassette; each request belongs to its run, or to none, and goes to the
cassette of the run it belongs to:

1. the cassette bound to the calling context (``run_binding.py``: the run's thread, and what
   inherits its context: ``asyncio`` tasks, ``asyncio.to_thread``, and each job submitted to a
   thread pool, which runs as the run that submitted it: a pool the runs share,
   ``run_in_executor`` included);
2. else the cassette of the run whose thread started the calling thread (a client's own worker
   thread; not a pool's worker, which serves whoever submits);
3. a request of a run that has ended (its cassette closed, or the harness gave up on it) is
   late: it belongs to that run still, so no other run's cassette answers or records it. It is
   refused as the network guard refuses (loopback apart, which goes where it was sent) and kept
   for the session's summary, naming the run's case and the request (``network.late_attempts``);
4. a request of no run (a framework's thread pool from before the run) goes to the only cassette
   open (one run at a time: exactly vcrpy's own behaviour);
5. else nothing: with several runs open, a request no run can be told from is an error naming
   ``--concurrency``, never a guess that would record it into another case's cassette.

A run's thread is bound to "no cassette" until its cassette opens, so what the run does before
(importing a target, building its clients) is not taken for another run's traffic: it reaches
the network guard, as it does when runs go one at a time. A run's cassette is a run of its own,
begun inside the case's run (``run_binding.running``): it ends when the cassette closes, or when
the case's run is ended before (a time limit), and from then on its cassette takes no request.

The patches stay in place, in every thread, while any cassette is open: vcrpy's own habit of
putting the real classes back around each connection it builds (``force_reset``, process-wide)
is switched off (see ``_without_resets``). Replaying golden cases one after another, the plugin
keeps them in place between cases too (``keep_installed``, until ``release``): building and
entering vcrpy's patchers for a dozen HTTP libraries cost about 0.7 ms a case, a tenth of a
replayed case's own work. Between the cases no cassette is open, so a request goes where it was
sent, as without patches; patches built for other ``custom_patches`` or ``skip_patchers`` (the
project's cassette hook may set them per case) are rebuilt for the cassette that opens.
"""

from __future__ import annotations

import threading
import types
from contextlib import ExitStack, contextmanager
from typing import Any, Iterator, NoReturn
from unittest import mock

from rag_core.evals.recording import network, run_binding
from rag_core.evals.common.errors import HarnessError


class AmbiguousRequestError(HarnessError):
    """A request made while several runs were open, from code no run can be told from."""


class _Passthrough:
    """The cassette of a thread that belongs to a run whose cassette is not open: nothing is
    played or recorded, the request goes where it was sent (the network guard decides)."""

    _path = "(no cassette)"
    write_protected = False
    record_mode = "all"

    def can_play_response_for(self, request: Any) -> bool:
        return False

    def filter_request(self, request: Any) -> None:
        return None

    def append(self, request: Any, response: Any) -> None:
        return None


NO_CASSETTE = _Passthrough()


class _Late(_Passthrough):
    """The cassette of code whose run has ended: no cassette plays or records what it sends. A
    request that would leave the machine is refused (and kept for the session's summary), one to
    loopback goes where it was sent, as the network guard lets it."""

    _path = "(a run that has ended)"

    def __init__(self, run: run_binding.Run) -> None:
        self.run = run

    def can_play_response_for(self, request: Any) -> bool:
        if network.is_loopback(request.host):
            return False
        self.play_response(request)

    def play_response(self, request: Any) -> NoReturn:
        from rag_core.evals.credentials import detector

        network.refuse_late(self.run.name, request.method, detector().scrub_url(request.uri))


class _Routes:
    def __init__(self) -> None:
        self.lock = threading.RLock()  # the router reads the routes while patches are built
        self.open: list[tuple[Any, run_binding.Run]] = []  # cassettes open now and their runs, in the order they opened
        self.stack: ExitStack | None = None  # the installed patches, while any cassette is open (or kept)
        self.built_for: tuple[Any, ...] | None = None  # what of a cassette the installed patches were built for
        self.keep = False  # patches stay installed once the last cassette closes, until ``release``
        self.socket_packages: set[str] = set()  # lm15 installations patched so far

    def cassette(self) -> Any:
        binding = run_binding.of_caller()
        ended = run_binding.late(binding)
        if ended is not None:
            return _Late(ended)
        own = binding.cassette if binding is not None else None
        if own is NO_CASSETTE:
            return own
        with self.lock:
            taking = [cassette for cassette, run in self.open if not run.ended]
            if own is not None:
                if any(c is own for c in taking):
                    return own
                # its cassette has closed (its run is ending): the request is still that run's
                return _Late(binding.run) if binding.run is not None else NO_CASSETTE
            # a run's code before its cassette is bound (replayed one at a time), or no run's
            if len(taking) == 1:
                return taking[0]
            if not taking:
                return NO_CASSETTE
            count = len(taking)
        raise AmbiguousRequestError(
            f"a request was made from a thread that no run can be told from while {count} runs were open "
            "(the program hands its requests to a thread it shares between runs); run with --concurrency 1")


_ROUTES = _Routes()


class _Router:
    """What vcrpy's stubs hold as their cassette: every attribute is the routed cassette's."""

    def __getattr__(self, name: str) -> Any:
        return getattr(_ROUTES.cassette(), name)

    def __len__(self) -> int:
        return len(_ROUTES.cassette())

    def __contains__(self, request: Any) -> bool:
        return request in _ROUTES.cassette()


ROUTER = _Router()


@contextmanager
def _no_reset() -> Iterator[None]:
    yield


def _without_resets(stack: ExitStack) -> None:
    """vcrpy puts the real classes back, for the whole process, while a stub connection builds
    the real one it wraps, and while it sends a request live (``vcr.patch.force_reset``): made
    for one cassette in one thread. With runs at once, a run that opens a connection in another
    thread meanwhile gets a real one (urllib3's pool reads its connection class then), or makes
    its request through an unpatched httpx transport: a request that reaches the network guard,
    or, recording live, the provider, unrecorded. So, while the router's patches are in place,
    nothing is put back. The one class that needed it is http.client's HTTPSConnection, whose
    ``__init__`` finds its own class by its module's name for it (``super(HTTPSConnection,
    self)``), which is the stub then: it gets an ``__init__`` that names its class itself."""
    import vcr.patch

    stack.enter_context(mock.patch.object(vcr.patch, "force_reset", _no_reset))
    real = vcr.patch._HTTPSConnection
    stack.enter_context(mock.patch.object(real, "__init__", _naming_itself(real, real.__init__)))


def _naming_itself(cls: type, init: Any) -> Any:
    """``init``, with the name of ``cls`` in its module bound to ``cls`` whatever the module holds
    under that name (the rest of the module as it is now)."""
    names = {**init.__globals__, cls.__name__: cls}
    rebound = types.FunctionType(init.__code__, names, init.__name__, init.__defaults__, init.__closure__)
    rebound.__kwdefaults__ = init.__kwdefaults__
    rebound.__qualname__, rebound.__doc__ = init.__qualname__, init.__doc__
    return rebound


def _built_for(cassette: Any) -> tuple[Any, ...]:
    """What vcrpy's patchers read of the cassette they are built for, besides its path (which
    only names the stub classes)."""
    return (tuple(getattr(cassette, "custom_patches", ())), tuple(getattr(cassette, "skip_patchers", ())))


def _install(stack: ExitStack) -> None:
    from vcr.patch import CassettePatcherBuilder

    run_binding.install()
    _without_resets(stack)
    for patcher in CassettePatcherBuilder(ROUTER).build():
        stack.enter_context(patcher)


def _patch_socket_clients(stack: ExitStack) -> None:
    """The socket-level clients imported by now (a target imported since the first run opened
    its cassette included)."""
    from rag_core.evals.recording import socket_clients

    for package, patch in socket_clients.stubs(ROUTER, exclude=_ROUTES.socket_packages):
        _ROUTES.socket_packages.add(package)
        stack.enter_context(patch)


@contextmanager
def routed(cassette: Any, name: str) -> Iterator[Any]:
    """Route the calling context's requests (and its threads') to ``cassette`` while open: a run
    of its own, inside the calling code's run (named ``name`` if there is none), that ends when
    the cassette closes."""
    with run_binding.running(None if run_binding.current_run() is not None else name, cassette=cassette) as run:
        try:
            with _ROUTES.lock:
                _ROUTES.open.append((cassette, run))  # first: building vcrpy's patches reads the cassette's path
                if len(_ROUTES.open) == 1 and _ROUTES.built_for != _built_for(cassette):
                    _uninstall()  # kept from an earlier run, built for other patches
                if _ROUTES.stack is None:
                    _ROUTES.stack, _ROUTES.built_for = ExitStack(), _built_for(cassette)
                    _install(_ROUTES.stack)
                _patch_socket_clients(_ROUTES.stack)
        except BaseException:
            _close(cassette)
            raise
        try:
            yield cassette
        finally:
            run.end()  # first: what its code sends from now on is late, not another run's
            _close(cassette)


def _close(cassette: Any) -> None:
    """The cassette is no longer open; with the last one, the patches are undone (unless kept)."""
    with _ROUTES.lock:
        del _ROUTES.open[next(i for i, (c, _) in enumerate(_ROUTES.open) if c is cassette)]
        if not _ROUTES.open and not _ROUTES.keep:
            _uninstall()


def _uninstall() -> None:
    if _ROUTES.stack is not None:
        stack, _ROUTES.stack, _ROUTES.built_for = _ROUTES.stack, None, None
        _ROUTES.socket_packages.clear()
        stack.close()


def keep_installed() -> None:
    """Leave the patches in place when the last cassette closes, for the next run to use, until
    ``release`` (golden cases replayed one after another)."""
    with _ROUTES.lock:
        _ROUTES.keep = True


def release() -> None:
    """Patches are undone with the last cassette again, and now if none is open."""
    with _ROUTES.lock:
        _ROUTES.keep = False
        if not _ROUTES.open:
            _uninstall()


@contextmanager
def own_run(name: str) -> Iterator[run_binding.Run]:
    """Begin a run of the case ``name`` in the calling thread: until its cassette opens, its
    requests are no other run's (see the module docstring); once the block ends, or the run is
    ended before (``Run.end``), they are late."""
    with run_binding.running(name, fresh=True, cassette=NO_CASSETTE) as run:
        yield run
