"""Cases whose subject is any Python callable (``target: "package.module:callable"``).

The harness cannot look inside such code, and does not need to: it records or replays the
callable's provider traffic like a rag_core agent's, and every golden field is read from that
traffic (``wire.py``). The callable is written as a program writes it: its clients built the
way its framework's docs build them (at import or per call), with the endpoints and keys the
environment names. It takes the turn's input (and, if it has a second parameter, a
:class:`TargetContext`) and is one of:

- a function returning the answer;
- an ``async def`` function (awaited on one event loop that lives as long as the process, so a
  module-level async client works in every case);
- a generator or async generator yielding the answer's text in pieces (a stream), joined.

The answer is text (any ``str``, subclasses included), an object with a text ``content`` (Agno's
and rag_core's run outputs), or None to let the last model response's text stand for it.
Anything else is an error naming its type: a golden cannot hold an answer it cannot show.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from rag_core.evals.common.imports import import_named
from rag_core.evals.common.errors import CaseFileError
from rag_core.evals.recording.provider_env import KEY_VARIABLES, forget_answers
from rag_core.providers.cohere import COHERE
from rag_core.providers.gemini import GEMINI
from rag_core.providers.openai import OPENAI

# where each SDK sends requests when its environment names no other endpoint
# the providers a target may ask the context for: its endpoint, its key
_PROVIDERS = {provider.name: provider for provider in (OPENAI, COHERE, GEMINI)}
DEFAULT_BASE_URLS = {name: provider.default_base_url for name, provider in _PROVIDERS.items()}


@dataclass
class TargetContext:
    """What a target may need besides its input; a target written as its framework's docs write
    it needs none of it."""

    turn: int  # 0-based index of the turn being run
    turns: int
    clock: datetime  # the case's frozen clock: use it instead of now() in anything sent
    stream: bool  # the case's stream variant (a target may ignore it)
    emulated: bool  # recording against the emulator, or replaying such a recording
    fixtures: Path  # the project's fixtures folder (corpora)
    state: dict[str, Any] = field(default_factory=dict)  # kept from one turn of the case to the next

    def base_url(self, provider: str) -> str:
        """The endpoint the environment names for ``openai`` (with ``/v1``), ``gemini`` or
        ``cohere``, else the provider's default: the harness never changes it."""
        return os.environ.get(_PROVIDERS[provider].endpoint_variables[0]) or DEFAULT_BASE_URLS[provider]

    def api_key(self, provider: str) -> str:
        """The key the environment holds for ``openai``, ``gemini`` or ``cohere`` (a dummy one
        while the case runs, when the environment has none)."""
        return next(os.environ[v] for v in KEY_VARIABLES[provider] if os.environ.get(v))


def load_target(spec: str, where: str) -> Callable[..., Any]:
    target = import_named(spec, where)
    # a framework the target imported keeps no answers: each run of the case asks its model
    # (before the first run calls the target: runs at once import it at once)
    forget_answers()
    if not callable(target):
        raise CaseFileError(f"{where}: {spec} is a {type(target).__name__}, not a callable")
    return target


def takes_context(target: Callable[..., Any]) -> bool:
    """Whether the callable asks for the context: a second positional parameter that is required,
    or is named ``context``/``ctx``, or ``*args``. An optional second parameter of another name
    (``history=None``) is the program's own and is left to its default."""
    try:
        parameters = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):  # a builtin or C callable without a signature: give it both
        return True
    if any(p.kind is p.VAR_POSITIONAL for p in parameters[:2]):
        return True
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) < 2:
        return False
    second = positional[1]
    return second.default is second.empty or second.name in ("context", "ctx")


_LOOP: asyncio.AbstractEventLoop | None = None


def _event_loop() -> asyncio.AbstractEventLoop:
    """The one loop async targets run on: a module-level async client binds itself to the loop
    it first ran on, so a loop per case would break it in the next case."""
    global _LOOP
    if _LOOP is None or _LOOP.is_closed():
        _LOOP = asyncio.new_event_loop()
    return _LOOP


_LOOP_THREAD: threading.Thread | None = None
_LOOP_LOCK = threading.Lock()


def start_shared_loop() -> None:
    """Run the one loop in a thread of its own, for live runs in threads (``--concurrency``) to
    share: their coroutines interleave on it, each with its caller's context (through which the
    run's cassette is found). Started by the session's main thread before any case runs, so the
    loop's thread belongs to no case."""
    global _LOOP_THREAD
    with _LOOP_LOCK:
        loop = _event_loop()
        if _LOOP_THREAD is None or not _LOOP_THREAD.is_alive():
            _LOOP_THREAD = threading.Thread(target=loop.run_forever, name="rag-core-target-loop", daemon=True)
            _LOOP_THREAD.start()


def _run(coroutine: Any) -> Any:
    """``coroutine`` run to its end on the one loop: in its own thread when live runs share it,
    else in the calling thread, as the program's own ``run_until_complete`` would."""
    if _LOOP_THREAD is None or not _LOOP_THREAD.is_alive():
        if threading.current_thread() is threading.main_thread():
            return _event_loop().run_until_complete(coroutine)
        start_shared_loop()
    return asyncio.run_coroutine_threadsafe(coroutine, _event_loop()).result()


async def _collect(stream: Any) -> list[Any]:
    return [piece async for piece in stream]


def settle(returned: Any) -> Any:
    """What a call of the target comes to: a coroutine awaited, a stream's pieces joined."""
    if inspect.iscoroutine(returned):
        returned = _run(returned)
    if inspect.isasyncgen(returned):
        return _joined(_run(_collect(returned)))
    if inspect.isgenerator(returned):
        return _joined(list(returned))
    return returned


def _joined(pieces: list[Any]) -> str:
    for index, piece in enumerate(pieces):
        if piece is not None and not isinstance(piece, str):
            raise CaseFileError(f"the target's stream yielded a {type(piece).__name__} (piece #{index + 1}): a "
                                "stream target yields the answer's text in pieces (str)")
    return "".join(str(piece) for piece in pieces if piece is not None)


def answer_text(returned: Any) -> str | None:
    """The answer a target returned, as plain text: a string (of any str subclass), or an
    object's text ``content``; None when it returned none."""
    if returned is None:
        return None
    if isinstance(returned, str):
        return str(returned)
    content = getattr(returned, "content", None)
    if isinstance(content, str):
        return str(content)
    raise CaseFileError(f"the target returned a {type(returned).__name__}, not text: return a str, an object with a "
                        "str content, or None (the last model response's text then stands for the answer)")
