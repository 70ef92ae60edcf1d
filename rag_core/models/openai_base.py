"""What the OpenAI adapters share: settings, and transport through the official SDK.

A subclass supplies the pure parts: ``build_request``, which SDK resource to call,
how to parse a reply and how to accumulate a stream.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterator, Protocol

from rag_core.messages import ModelResponse
from rag_core.providers.openai import OpenAIConnection, openai_sdk, translate_error
from rag_core.models.base import PostingModel, StreamPart


class StreamAccumulator(Protocol):
    def feed(self, event: Any) -> Iterator[StreamPart]: ...
    def result(self) -> ModelResponse: ...


@dataclass(kw_only=True)
class OpenAIModel(PostingModel, OpenAIConnection):
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
    def _parse(reply: Any) -> ModelResponse: ...

    @staticmethod
    @abstractmethod
    def _accumulator() -> StreamAccumulator: ...

    def _post(self, request: dict[str, Any], asynchronous: bool = False) -> Any:
        """Send ``request`` as built, through the SDK client (its headers, auth, retries, timeouts
        and error types), and get the reply as plain JSON.

        The resource's ``create`` would first re-walk the body through the SDK's TypedDict
        transform (more than half of a whole agent run); our body is built by a pure function and
        checked against the SDK's types in tests, so it is sent as it is: the same JSON value, in
        build_request's key order, as the same bytes on every SDK release (``_send``).
        Replies and stream events stay plain JSON (``object``): building the SDK's models for
        every stream event cost more than the rest of a streamed run, and our parsers read both
        forms (``get_field``)."""
        openai = openai_sdk()
        client, stream_type = (self.async_client(), openai.AsyncStream) if asynchronous else (self.client(), openai.Stream)
        return self._send(client, self.path, request, stream=bool(request.get("stream")), stream_cls=stream_type[object])

    def _translate(self, exc: Exception) -> Exception:
        return translate_error(exc)

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
