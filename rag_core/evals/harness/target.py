"""Cases whose subject is any Python callable (``target: "package.module:callable"``).

The harness cannot look inside such code, and does not need to: it records or replays the
callable's provider traffic like a rag_core agent's, and every golden field is read from that
traffic (``wire.py``). The callable gets the turn's input and a :class:`TargetContext`, and
returns the answer: a string, an object with a string ``content`` (Agno's and rag_core's run
outputs), or None to let the last model response's text stand for it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from rag_core.evals.harness.build import import_named
from rag_core.evals.harness.errors import CaseFileError
from rag_core.evals.harness.provider_env import DUMMY_KEY, ENDPOINTS, KEYS

# where each SDK sends requests when nothing overrides it (replay matches on these paths)
DEFAULT_BASE_URLS = {"openai": "https://api.openai.com/v1", "cohere": "https://api.cohere.com",
                     "gemini": "https://generativelanguage.googleapis.com"}
_ENDPOINT_OF = dict(zip(("openai", "cohere", "gemini"), ENDPOINTS))
_KEYS_OF = dict(zip(("openai", "cohere", "gemini"), KEYS))


@dataclass
class TargetContext:
    """What a target may need besides its input. The provider SDKs' own environment variables
    already point at the emulator (recording with ``--emulator``) or the defaults (replay), so
    code that builds clients without arguments needs none of this; code that passes
    ``base_url``/``api_key`` explicitly reads them here."""

    turn: int  # 0-based index of the turn being run
    turns: int
    clock: datetime  # the case's frozen clock: use it instead of now() in anything sent
    stream: bool  # the case's stream variant (a target may ignore it)
    emulated: bool  # recording against the emulator, or replaying such a recording
    fixtures: Path  # the project's fixtures folder (corpora)
    state: dict[str, Any] = field(default_factory=dict)  # kept from one turn of the case to the next

    def base_url(self, provider: str) -> str:
        """The endpoint for ``openai`` (with ``/v1``), ``gemini`` or ``cohere`` during this run."""
        return os.environ.get(_ENDPOINT_OF[provider]) or DEFAULT_BASE_URLS[provider]

    def api_key(self, provider: str) -> str:
        """The key for ``openai``, ``gemini`` or ``cohere`` during this run: a dummy unless recording live."""
        return next((os.environ[v] for v in _KEYS_OF[provider] if os.environ.get(v)), DUMMY_KEY)


def load_target(spec: str, where: str) -> Callable[..., Any]:
    target = import_named(spec, where)
    if not callable(target):
        raise CaseFileError(f"{where}: {spec} is a {type(target).__name__}, not a callable")
    return target


def answer_text(returned: Any) -> str | None:
    """The answer a target returned: a string, or an object's string ``content``."""
    if returned is None or isinstance(returned, str):
        return returned
    content = getattr(returned, "content", None)
    return content if isinstance(content, str) else None
