"""Model: the seam between the agent loop and a provider.

An adapter does three separate things, kept apart so that goldens can pin the first
without a network:

* ``build_request`` – a pure function of (messages, tools, stream) to the exact JSON body;
* ``invoke`` / ``ainvoke`` – send that body through the provider's official SDK;
* ``invoke_stream`` / ``ainvoke_stream`` – the same, streaming: yields TextDelta pieces
  as they arrive and finally a StreamDone carrying the parsed ModelResponse.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, AsyncIterator, ClassVar, Iterator

from rag_core.errors import ModelProviderError
from rag_core.messages import Message, ModelResponse

if TYPE_CHECKING:
    from pydantic import BaseModel

    from rag_core.tools.function import Function


@dataclass
class TextDelta:
    text: str


@dataclass
class ReasoningDelta:
    text: str


@dataclass
class StreamDone:
    response: ModelResponse


StreamPart = TextDelta | ReasoningDelta | StreamDone


class Model(ABC):
    provider: ClassVar[str]
    id: str

    @abstractmethod
    def build_request(
        self, messages: list[Message], tools: list[Function], *, stream: bool = False,
        output_schema: type[BaseModel] | None = None,
    ) -> dict[str, Any]:
        """The exact JSON body of the provider call. Pure: no clock, no network, no randomness.
        With ``output_schema`` the body asks for an answer that is a JSON instance of that model."""

    def get_system_message_for_model(self, tools: list[Function]) -> str | None:
        """Text this provider's Agno model adds at the end of an agent's built system message
        (Agno's hook of the same name); None adds nothing."""
        return None

    @abstractmethod
    def invoke(self, request: dict[str, Any]) -> ModelResponse: ...

    @abstractmethod
    async def ainvoke(self, request: dict[str, Any]) -> ModelResponse: ...

    @abstractmethod
    def invoke_stream(self, request: dict[str, Any]) -> Iterator[StreamPart]: ...

    @abstractmethod
    def ainvoke_stream(self, request: dict[str, Any]) -> AsyncIterator[StreamPart]: ...


class PostingModel(Model):
    """A model whose SDK client posts the built body as it is (``_post``) and hands back plain
    JSON: the four ways of sending are the same for every such provider, only these differ."""

    @abstractmethod
    def _post(self, request: dict[str, Any], asynchronous: bool = False) -> Any:
        """The reply (or, for a streaming body, the stream of events); awaitable when asynchronous."""

    @abstractmethod
    def _parse(self, reply: Any) -> ModelResponse: ...

    @abstractmethod
    def _accumulator(self) -> Any:
        """A fresh stream accumulator: ``feed(event)`` yields StreamParts, ``result()`` the response."""

    @abstractmethod
    def _translate(self, exc: Exception) -> Exception:
        """The provider's SDK error as a ModelProviderError (anything else as it is)."""

    def invoke(self, request: dict[str, Any]) -> ModelResponse:
        try:
            reply = self._post(request)
        except Exception as exc:
            raise self._translate(exc) from exc
        return self._parse(reply)

    async def ainvoke(self, request: dict[str, Any]) -> ModelResponse:
        try:
            reply = await self._post(request, asynchronous=True)
        except Exception as exc:
            raise self._translate(exc) from exc
        return self._parse(reply)

    def invoke_stream(self, request: dict[str, Any]) -> Iterator[StreamPart]:
        accumulator = self._accumulator()
        try:
            for event in self._post(request):
                yield from accumulator.feed(event)
        except ModelProviderError:
            raise
        except Exception as exc:
            raise self._translate(exc) from exc
        yield StreamDone(accumulator.result())

    async def ainvoke_stream(self, request: dict[str, Any]) -> AsyncIterator[StreamPart]:
        accumulator = self._accumulator()
        try:
            async for event in await self._post(request, asynchronous=True):
                for part in accumulator.feed(event):
                    yield part
        except ModelProviderError:
            raise
        except Exception as exc:
            raise self._translate(exc) from exc
        yield StreamDone(accumulator.result())


def get_field(obj: Any, name: str, default: Any = None) -> Any:
    """Read a field from an SDK object or from the equivalent plain dict.

    Parsers accept both so that they run on SDK objects in production and on raw JSON
    (recordings, emulator replies) in tests.
    """
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)
