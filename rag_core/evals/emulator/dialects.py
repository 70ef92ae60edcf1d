"""How each model API's answer to a scripted turn is written: one dialect per API name
(``rag_core.providers.api_of``), from each provider family's module
(``rag_core.evals.emulator.<family>``, its ``DIALECTS``), as the wire reading is keyed
(``wire/traffic.py``)."""

from __future__ import annotations

import functools
import importlib
import json
from typing import Any, Callable

from rag_core.evals.emulator.script import DeterministicIds, ScriptedError, ScriptedTurn
from rag_core.providers import FAMILIES

# status, content type, body, headers
Answer = tuple[int, str, bytes, dict[str, str]]
# the answer to one scripted turn (or scripted error) of a request to ``path``
Dialect = Callable[[ScriptedTurn | ScriptedError, str, dict[str, Any], DeterministicIds], Answer]

SSE = "text/event-stream; charset=utf-8"


@functools.cache
def dialects() -> dict[str, Dialect]:
    found: dict[str, Dialect] = {}
    for family in FAMILIES:
        found |= importlib.import_module(f"rag_core.evals.emulator.{family}").DIALECTS
    return found


def json_answer(payload: Any, headers: dict[str, str], status: int = 200) -> Answer:
    return status, "application/json", json.dumps(payload, ensure_ascii=False).encode(), headers


def error_answer(turn: ScriptedError, headers: dict[str, str]) -> Answer:
    """A scripted error in the shape most APIs share (OpenAI's ``{"error": {...}}``)."""
    error = {"error": {"message": turn.message, "type": turn.type, "param": None, "code": turn.code}}
    return turn.status, "application/json", json.dumps(error).encode(), headers


def request_id(ids: DeterministicIds) -> dict[str, str]:
    return {"x-request-id": ids.next("req", 32)}
