"""One request and its answer as they crossed the wire, what a model answer delivered, and how
one API's traffic is read (``ApiReading``: each API family's module gives one per API it owns)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from rag_core.providers import api_of


@dataclass(frozen=True)
class Exchange:
    """One request and its answer, as they crossed the wire (bodies parsed when JSON)."""

    method: str
    path: str
    request: Any
    status: int
    response: Any  # parsed JSON, the raw text of a server-sent event stream, or the bytes of a binary one

    @property
    def api(self) -> str | None:
        return api_of(self.method, self.path)


@dataclass
class Answer:
    """What one model response delivered."""

    text: str | None
    tool_calls: list[dict[str, Any]]
    usage: dict[str, int]


Body = dict[str, Any]


@dataclass(frozen=True)
class ModelCall:
    """How a model call's request reads: what each golden field is, in this API's shape."""

    prompt_prefix: Callable[[Body], dict[str, Any]]  # the system prompt and tools exactly as sent
    system_prompt: Callable[[Body], str | None]
    last_user_message: Callable[[Body], str | None]
    tools: Callable[[Body], list[dict[str, Any]]]  # neutral shape (``parts.neutral_tool``)
    tool_outputs: Callable[[Body], list[str]]  # the tool results the request carries back, as text
    answer: Callable[[Any], Answer | None]  # from the JSON answer
    stream: Callable[[list[Any]], Answer | None] | None = None  # from a server-sent event stream's payloads
    binary_stream: Callable[[bytes], Answer | None] | None = None  # from a binary stream (AWS event stream)
    json_lists: bool = False  # a JSON answer may be a list (of a stream's chunks), not only an object


@dataclass(frozen=True)
class ApiReading:
    """How one API's traffic is read."""

    call: ModelCall | None = None  # None: not a model call (embeddings, rerank)
    price: tuple[str, str] | None = None  # (genai-prices provider, its API flavour); None: not priced
    # its request body checked against the SDK's own request types: (path, body) -> raises; None: not checked
    validate: Callable[[str, Body], None] | None = None
