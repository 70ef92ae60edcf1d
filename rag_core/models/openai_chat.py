"""OpenAI Chat Completions adapter (``POST /v1/chat/completions``).

Tools go out in the nested ``{"type": "function", "function": {...}}`` shape; streaming
asks for ``stream_options.include_usage`` so the final chunk carries token usage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator

from rag_core.errors import ModelProviderError
from rag_core.messages import Message, ModelResponse, ToolCall, Usage
from rag_core.models.base import StreamPart, TextDelta, get_field
from rag_core.models.openai_base import OpenAIModel
from rag_core.models.structured import chat_response_format

if TYPE_CHECKING:
    from pydantic import BaseModel

    from rag_core.tools.function import Function


def chat_tool(fn: Function) -> dict[str, Any]:
    function: dict[str, Any] = {"name": fn.name}
    if fn.description is not None:
        function["description"] = fn.description
    function["parameters"] = fn.parameters
    function["strict"] = fn.strict
    return {"type": "function", "function": function}


def chat_messages(messages: list[Message], system_role: str = "developer") -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            out.append({"role": system_role, "content": m.content or ""})
        elif m.role == "user":
            out.append({"role": "user", "content": m.content or ""})
        elif m.role == "assistant":
            item: dict[str, Any] = {"role": "assistant", "content": m.content}
            if m.tool_calls:
                item["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in m.tool_calls
                ]
            out.append(item)
        elif m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content or ""})
    return out


@dataclass(kw_only=True)
class OpenAIChat(OpenAIModel):
    max_completion_tokens: int | None = None

    def build_request(
        self, messages: list[Message], tools: list[Function], *, stream: bool = False,
        output_schema: type[BaseModel] | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.id, "messages": chat_messages(messages, self.system_role)}
        if tools:
            body["tools"] = [chat_tool(f) for f in tools]
        self._common_options(
            body, bool(tools), ("temperature", "top_p", "max_completion_tokens", "reasoning_effort", "store")
        )
        if output_schema is not None:
            body["response_format"] = chat_response_format(output_schema)
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        body.update(self.request_params)
        return body

    path = "/chat/completions"

    @staticmethod
    def _parse(reply: Any) -> ModelResponse:
        return parse_completion(reply)

    @staticmethod
    def _accumulator() -> ChatStreamAccumulator:
        return ChatStreamAccumulator()


def parse_chat_usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    prompt_details = get_field(usage, "prompt_tokens_details") or {}
    completion_details = get_field(usage, "completion_tokens_details") or {}
    return Usage(
        input_tokens=get_field(usage, "prompt_tokens", 0) or 0,
        output_tokens=get_field(usage, "completion_tokens", 0) or 0,
        total_tokens=get_field(usage, "total_tokens", 0) or 0,
        cached_tokens=get_field(prompt_details, "cached_tokens", 0) or 0,
        reasoning_tokens=get_field(completion_details, "reasoning_tokens", 0) or 0,
    )


def parse_completion(completion: Any) -> ModelResponse:
    """Parse a ``ChatCompletion`` (SDK object or plain dict) into a ModelResponse."""
    choices = get_field(completion, "choices") or []
    if not choices:
        raise ModelProviderError("the completion has no choices", provider="openai")
    message = get_field(choices[0], "message")
    calls = [
        ToolCall(
            id=get_field(c, "id"),
            name=get_field(get_field(c, "function"), "name"),
            arguments=get_field(get_field(c, "function"), "arguments") or "",
        )
        for c in get_field(message, "tool_calls") or []
    ]
    return ModelResponse(
        content=get_field(message, "content") or get_field(message, "refusal"),
        tool_calls=calls,
        usage=parse_chat_usage(get_field(completion, "usage")),
        response_id=get_field(completion, "id"),
        model=get_field(completion, "model"),
    )


class ChatStreamAccumulator:
    """Assembles streamed chunks: text deltas, tool-call fragments by index, the usage chunk."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._calls: dict[int, dict[str, str]] = {}
        self._usage = Usage()
        self._id: str | None = None
        self._model: str | None = None

    def feed(self, chunk: Any) -> Iterator[StreamPart]:
        self._id = self._id or get_field(chunk, "id")
        self._model = self._model or get_field(chunk, "model")
        usage = get_field(chunk, "usage")
        if usage is not None:
            self._usage = parse_chat_usage(usage)
        for choice in get_field(chunk, "choices") or []:
            delta = get_field(choice, "delta")
            if delta is None:
                continue
            text = get_field(delta, "content")
            if text:
                self._text.append(text)
                yield TextDelta(text)
            for fragment in get_field(delta, "tool_calls") or []:
                slot = self._calls.setdefault(get_field(fragment, "index", 0), {"id": "", "name": "", "arguments": ""})
                if get_field(fragment, "id"):
                    slot["id"] = get_field(fragment, "id")
                function = get_field(fragment, "function")
                if function is not None:
                    slot["name"] += get_field(function, "name") or ""
                    slot["arguments"] += get_field(function, "arguments") or ""

    def result(self) -> ModelResponse:
        calls = [
            ToolCall(id=slot["id"], name=slot["name"], arguments=slot["arguments"])
            for _, slot in sorted(self._calls.items())
        ]
        return ModelResponse(
            content="".join(self._text) if self._text else None,
            tool_calls=calls,
            usage=self._usage,
            response_id=self._id,
            model=self._model,
        )
