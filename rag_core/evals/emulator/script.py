"""What the emulator should answer: a script of model turns, one per provider round."""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator


class ScriptedToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str | None = None  # sent verbatim instead of ``arguments`` (e.g. malformed JSON)

    def arguments_text(self) -> str:
        if self.raw_arguments is not None:
            return self.raw_arguments
        return json.dumps(self.arguments, ensure_ascii=False, separators=(",", ":"))


class ScriptedTurn(BaseModel):
    """One model reply: tool calls to make, or a text answer (or both)."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = None
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)


class ScriptedError(BaseModel):
    """A provider error reply, for error cases."""

    model_config = ConfigDict(extra="forbid")

    status: int
    message: str
    type: str = "invalid_request_error"
    code: str | None = None


# the methods a scripted endpoint may name
HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")


class ScriptedEndpoint(BaseModel):
    """The answer to an endpoint the emulator does not serve (a call an SDK or framework makes
    around its model calls): every request to it gets this answer, and none uses up a turn."""

    model_config = ConfigDict(extra="forbid")

    endpoint: str = Field(description="the method and path it answers, e.g. 'GET /v1/files/file-abc' (no query)")
    body: Any = Field(default_factory=dict, description="the JSON body of the answer")
    status: int = Field(200, ge=100, le=599)

    @field_validator("endpoint")
    @classmethod
    def _method_and_path(cls, value: str) -> str:
        method, _, path = value.strip().partition(" ")
        path = path.strip()
        if method.upper() not in HTTP_METHODS or not path.startswith("/") or "?" in path or " " in path:
            raise ValueError(f"{value!r} is not a method and a path, e.g. 'GET /v1/files/file-abc' (without a query)")
        return f"{method.upper()} {path}"

    def answers(self, method: str, path: str) -> bool:
        return self.endpoint == f"{method.upper()} {path}"


class DeterministicIds:
    """Ids that look like the provider's but depend only on a seed and a counter."""

    def __init__(self, seed: str) -> None:
        self._seed = seed
        self._count = 0

    def next(self, prefix: str, length: int = 48) -> str:
        self._count += 1
        digest = hashlib.sha256(f"{self._seed}:{self._count}".encode()).hexdigest()
        return f"{prefix}_{digest[:length]}"


def estimate_tokens(text: str) -> int:
    """A deterministic stand-in for a tokenizer: about four characters per token."""
    return max(1, math.ceil(len(text) / 4))


def text_pieces(text: str) -> list[str]:
    """Split text the way streamed deltas arrive: word by word, whitespace attached."""
    return re.findall(r"\s*\S+|\s+$", text) or [text]


def _kind(turn: Any) -> str:
    """An entry with an ``endpoint`` answers that endpoint, one with a ``status`` is an error
    reply, any other a model turn: each is checked as the one it is, so a bad ``status`` is named
    as such (not as an unknown field of a turn)."""
    if isinstance(turn, ScriptedEndpoint) or (isinstance(turn, dict) and "endpoint" in turn):
        return "ScriptedEndpoint"
    if isinstance(turn, ScriptedError) or (isinstance(turn, dict) and "status" in turn):
        return "ScriptedError"
    return "ScriptedTurn"


# the tags of a script entry's kinds, which error locations leave out
SCRIPT_TAGS = ("ScriptedTurn", "ScriptedError", "ScriptedEndpoint")
# one entry of an ``emulate:`` script (tagged by class name)
ScriptEntry = Annotated[Annotated[ScriptedTurn, Tag("ScriptedTurn")] | Annotated[ScriptedError, Tag("ScriptedError")]
                        | Annotated[ScriptedEndpoint, Tag("ScriptedEndpoint")], Discriminator(_kind)]
