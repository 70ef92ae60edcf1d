"""OpenAI Responses API adapter (``POST /v1/responses``).

Stateless by default: every round replays the whole conversation, with tool calls as
``function_call`` items (with their item ids) and their results as ``function_call_output``
items. Reasoning items (id, summary, and ``encrypted_content`` when ``include`` asks for it)
are kept on the assistant message and sent back just before the function calls they preceded,
so a reasoning model keeps its context between rounds even with ``store=False`` (zero data
retention). With ``use_previous_response_id=True`` the server keeps the conversation instead
and each round sends only what is new since the last response.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator

from rag_core.errors import ModelProviderError
from rag_core.messages import Message, ModelResponse, ToolCall, Usage
from rag_core.models.base import ReasoningDelta, StreamPart, TextDelta, get_field
from rag_core.models.openai_base import OpenAIModel
from rag_core.models.structured import responses_text_format

if TYPE_CHECKING:
    from pydantic import BaseModel

    from rag_core.tools.function import Function


# provider_data key of an assistant message: [{"item": <reasoning item as sent back>, "before_call": call_id}]
REASONING_ITEMS = "reasoning_items"


def responses_tool(fn: Function) -> dict[str, Any]:
    tool: dict[str, Any] = {"type": "function", "name": fn.name}
    if fn.description is not None:
        tool["description"] = fn.description
    tool["parameters"] = fn.parameters
    tool["strict"] = fn.strict
    return tool


def responses_input(messages: list[Message], system_role: str = "developer") -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            items.append({"role": system_role, "content": m.content or ""})
        elif m.role == "user":
            items.append({"role": "user", "content": m.content or ""})
        elif m.role == "assistant":
            if m.content:
                items.append({"role": "assistant", "content": m.content})
            reasoning = m.provider_data.get(REASONING_ITEMS) or []
            for call in m.tool_calls:
                # reasoning that came right before this call in the response goes back right before it
                items += [dict(r["item"]) for r in reasoning if r.get("before_call") == call.id]
                item: dict[str, Any] = {"type": "function_call", "call_id": call.id, "name": call.name,
                                        "arguments": call.arguments}
                if call.provider_data.get("item_id"):
                    item["id"] = call.provider_data["item_id"]
                items.append(item)
        elif m.role == "tool":
            items.append({"type": "function_call_output", "call_id": m.tool_call_id, "output": m.content or ""})
    return items


@dataclass(kw_only=True)
class OpenAIResponses(OpenAIModel):
    max_output_tokens: int | None = None
    use_previous_response_id: bool = False
    include: list[str] | None = None  # e.g. ["reasoning.encrypted_content"] (with store=False)

    def build_request(
        self, messages: list[Message], tools: list[Function], *, stream: bool = False,
        output_schema: type[BaseModel] | None = None,
    ) -> dict[str, Any]:
        previous_id: str | None = None
        if self.use_previous_response_id:
            previous_id, messages = _split_at_last_response(messages)
        body: dict[str, Any] = {"model": self.id, "input": responses_input(messages, self.system_role)}
        if tools:
            body["tools"] = [responses_tool(f) for f in tools]
        if previous_id is not None:
            body["previous_response_id"] = previous_id
        self._common_options(body, bool(tools), ("temperature", "top_p", "max_output_tokens", "store", "include"))
        if self.reasoning_effort is not None:
            body["reasoning"] = {"effort": self.reasoning_effort}
        if output_schema is not None:
            body["text"] = {"format": responses_text_format(output_schema)}
        if stream:
            body["stream"] = True
        body.update(self.request_params)
        return body

    path = "/responses"

    @staticmethod
    def _parse(reply: Any) -> ModelResponse:
        return parse_response(reply)

    @staticmethod
    def _accumulator() -> ResponsesStreamAccumulator:
        return ResponsesStreamAccumulator()


def _split_at_last_response(messages: list[Message]) -> tuple[str | None, list[Message]]:
    """For server-side chaining: the last response id, and the messages after it.

    The system message is always kept: the developer instructions are not inherited
    through ``previous_response_id``.
    """
    for index in range(len(messages) - 1, -1, -1):
        response_id = messages[index].provider_data.get("response_id")
        if messages[index].role == "assistant" and response_id:
            system = [m for m in messages[:index] if m.role == "system"]
            return response_id, system + messages[index + 1 :]
    return None, messages


# ---------------------------------------------------------------------- parsing

def parse_usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    input_details = get_field(usage, "input_tokens_details") or {}
    output_details = get_field(usage, "output_tokens_details") or {}
    return Usage(
        input_tokens=get_field(usage, "input_tokens", 0) or 0,
        output_tokens=get_field(usage, "output_tokens", 0) or 0,
        total_tokens=get_field(usage, "total_tokens", 0) or 0,
        cached_tokens=get_field(input_details, "cached_tokens", 0) or 0,
        reasoning_tokens=get_field(output_details, "reasoning_tokens", 0) or 0,
    )


def parse_response(response: Any) -> ModelResponse:
    """Parse a Responses API ``Response`` (SDK object or plain dict) into a ModelResponse."""
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    reasoning_items: list[dict[str, Any]] = []  # each tied to the function call that follows it
    waiting: list[dict[str, Any]] = []
    for item in get_field(response, "output") or []:
        kind = get_field(item, "type")
        if kind == "message":
            for part in get_field(item, "content") or []:
                part_type = get_field(part, "type")
                if part_type == "output_text":
                    texts.append(get_field(part, "text") or "")
                elif part_type == "refusal":
                    texts.append(get_field(part, "refusal") or "")
        elif kind == "function_call":
            call_id = get_field(item, "call_id")
            calls.append(
                ToolCall(
                    id=call_id,
                    name=get_field(item, "name"),
                    arguments=get_field(item, "arguments") or "",
                    provider_data={"item_id": get_field(item, "id")},
                )
            )
            reasoning_items += [{"item": r, "before_call": call_id} for r in waiting]
            waiting = []
        elif kind == "reasoning":
            summaries = get_field(item, "summary") or []
            for summary in summaries:
                reasoning.append(get_field(summary, "text") or "")
            kept: dict[str, Any] = {"type": "reasoning", "id": get_field(item, "id"),
                                    "summary": [{"type": "summary_text", "text": get_field(s, "text") or ""} for s in summaries]}
            if get_field(item, "encrypted_content"):
                kept["encrypted_content"] = get_field(item, "encrypted_content")
            waiting.append(kept)
    response_id = get_field(response, "id")
    data: dict[str, Any] = {"response_id": response_id} if response_id else {}
    if reasoning_items:  # reasoning before a final text answer is not needed again: only before calls
        data[REASONING_ITEMS] = reasoning_items
    return ModelResponse(
        content="".join(texts) if texts else None,
        tool_calls=calls,
        usage=parse_usage(get_field(response, "usage")),
        response_id=response_id,
        model=get_field(response, "model"),
        reasoning="\n\n".join(reasoning) if reasoning else None,
        provider_data=data,
    )


class ResponsesStreamAccumulator:
    """Turns the SSE event sequence into deltas, and the final event into a ModelResponse."""

    def __init__(self) -> None:
        self._final: ModelResponse | None = None

    def feed(self, event: Any) -> Iterator[StreamPart]:
        kind = get_field(event, "type")
        if kind == "response.output_text.delta":
            yield TextDelta(get_field(event, "delta") or "")
        elif kind == "response.reasoning_summary_text.delta":
            yield ReasoningDelta(get_field(event, "delta") or "")
        elif kind in ("response.completed", "response.incomplete"):
            self._final = parse_response(get_field(event, "response"))
        elif kind == "response.failed":
            error = get_field(get_field(event, "response"), "error")
            raise ModelProviderError(
                str(get_field(error, "message") or "response failed"), provider="openai"
            )
        elif kind == "error":
            raise ModelProviderError(str(get_field(event, "message") or "stream error"), provider="openai")

    def result(self) -> ModelResponse:
        if self._final is None:
            raise ModelProviderError(
                "the stream ended without a response.completed event", provider="openai"
            )
        return self._final
