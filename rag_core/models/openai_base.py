"""What the OpenAI adapters share: settings, and transport through the official SDK.

A subclass supplies the pure parts: ``build_request``, which SDK resource to call,
how to parse a reply and how to accumulate a stream.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, ClassVar, Iterator, Protocol

from rag_core.errors import ModelProviderError
from rag_core.messages import ModelResponse
from rag_core.models._openai_client import OpenAIConnection, translate_error
from rag_core.models.base import Model, StreamDone, StreamPart


# the request options every SDK resource passes: authenticate with the bearer key
_BEARER_AUTH: dict[str, Any] = {"security": {"bearer_auth": True}}


class StreamAccumulator(Protocol):
    def feed(self, event: Any) -> Iterator[StreamPart]: ...
    def result(self) -> ModelResponse: ...


@dataclass(kw_only=True)
class OpenAIModel(Model, OpenAIConnection):
    provider: ClassVar[str] = "openai"

    id: str = "gpt-5.2"
    temperature: float | None = None
    top_p: float | None = None
    reasoning_effort: str | None = None
    parallel_tool_calls: bool | None = None
    tool_choice: str | dict[str, Any] | None = None
    store: bool | None = None
    system_role: str = "developer"
    request_params: dict[str, Any] = field(default_factory=dict)

    # where the SDK posts this API's requests (its resource's ``create`` posts there too)
    path: ClassVar[str]

    @staticmethod
    @abstractmethod
    def _reply_types() -> tuple[type, type]:
        """The SDK's types of a reply and of a stream event, which it parses the answer into."""

    @staticmethod
    @abstractmethod
    def _parse(reply: Any) -> ModelResponse: ...

    @staticmethod
    @abstractmethod
    def _accumulator() -> StreamAccumulator: ...

    def _post(self, client: Any, request: dict[str, Any], stream_type: Any) -> Any:
        """Send ``request`` as built, through the SDK client (its headers, auth, retries, timeouts
        and error types). The resource's ``create`` would first re-walk the body through the SDK's
        TypedDict transform, more than half of a whole agent run; our body is already built by a
        pure function and checked against the SDK's types in tests, and the transform leaves such
        a body unchanged, so the bytes on the wire are the same."""
        reply_type, event_type = self._reply_types()
        return client.post(self.path, body=request, options=_BEARER_AUTH, cast_to=reply_type,
                           stream=bool(request.get("stream")), stream_cls=stream_type[event_type])

    def invoke(self, request: dict[str, Any]) -> ModelResponse:
        import openai

        try:
            reply = self._post(self.client(), request, openai.Stream)
        except Exception as exc:
            raise translate_error(exc) from exc
        return self._parse(reply)

    async def ainvoke(self, request: dict[str, Any]) -> ModelResponse:
        import openai

        try:
            reply = await self._post(self.async_client(), request, openai.AsyncStream)
        except Exception as exc:
            raise translate_error(exc) from exc
        return self._parse(reply)

    def invoke_stream(self, request: dict[str, Any]) -> Iterator[StreamPart]:
        import openai

        accumulator = self._accumulator()
        try:
            for event in self._post(self.client(), request, openai.Stream):
                yield from accumulator.feed(event)
        except ModelProviderError:
            raise
        except Exception as exc:
            raise translate_error(exc) from exc
        yield StreamDone(accumulator.result())

    async def ainvoke_stream(self, request: dict[str, Any]) -> AsyncIterator[StreamPart]:
        import openai

        accumulator = self._accumulator()
        try:
            async for event in await self._post(self.async_client(), request, openai.AsyncStream):
                for part in accumulator.feed(event):
                    yield part
        except ModelProviderError:
            raise
        except Exception as exc:
            raise translate_error(exc) from exc
        yield StreamDone(accumulator.result())

    def _common_options(self, body: dict[str, Any], has_tools: bool, keys: tuple[str, ...]) -> None:
        """Add the options that are set, in a fixed order, to ``body``."""
        if has_tools:
            if self.tool_choice is not None:
                body["tool_choice"] = self.tool_choice
            if self.parallel_tool_calls is not None:
                body["parallel_tool_calls"] = self.parallel_tool_calls
        for key in keys:
            value = getattr(self, key)
            if value is not None:
                body[key] = value
