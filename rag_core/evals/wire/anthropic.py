"""Anthropic's Messages API on the wire (``…/v1/messages``)."""

from __future__ import annotations

from typing import Any

from rag_core.evals.wire import parts
from rag_core.evals.wire.exchange import Answer, ApiReading, Body, ModelCall
from rag_core.evals.wire.sdk_types import validate_params


def _messages(body: Body) -> list[dict[str, Any]]:
    return parts.dict_items(body.get("messages"))


def prefix(body: Body) -> dict[str, Any]:
    return {"system": body["system"] if "system" in body else parts.leading_system(body.get("messages") or []),
            "tools": body.get("tools")}


def system_prompt(body: Body) -> str | None:
    """``system``: a string, or text blocks."""
    return parts.joined([parts.text_of(body.get("system"))])


def tool_outputs(body: Body) -> list[str]:
    """The ``tool_result`` blocks' text, in order."""
    found: list[str] = []
    for message in _messages(body):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                text = parts.text_of(block.get("content"))
                found += [text] if text is not None else []
    return found


def answer(message: dict[str, Any]) -> Answer:
    """A Message: text blocks joined, ``tool_use`` blocks as tool calls (a server tool's
    ``server_tool_use`` ran at Anthropic and is not one, as Responses' web_search_call is not);
    input counts cache writes and reads, which ``input_tokens`` leaves out."""
    texts, calls = [], []
    for block in message.get("content") or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == "tool_use":
            calls.append({"name": block.get("name"), "arguments": parts.arguments(block.get("input"))})
    usage = message.get("usage") or {}
    inputs = parts.total(usage.get("input_tokens"), usage.get("cache_creation_input_tokens"),
                         usage.get("cache_read_input_tokens"))
    return Answer("".join(texts) if texts else None, calls, parts.summed_usage(inputs, usage.get("output_tokens")))


def stream(events: list[Any]) -> Answer | None:
    """The Message a stream delivers: ``message_start`` gives its frame, each content block is
    opened by ``content_block_start`` and grown by its deltas (text, a tool's input as partial
    JSON, thinking), ``message_delta`` brings the final usage, whose counts are running totals:
    they replace the earlier ones, and a count it leaves out keeps its earlier value."""
    message: dict[str, Any] | None = None
    blocks: dict[int, dict[str, Any]] = {}
    inputs: dict[int, str] = {}
    for event in events:
        kind = event.get("type")
        if kind == "message_start":
            message = dict(event.get("message") or {})
            message["usage"] = dict(message.get("usage") or {})
            blocks = dict(enumerate(message.get("content") or []))
        elif kind == "content_block_start":
            index = event.get("index")
            blocks[len(blocks) if index is None else index] = dict(event.get("content_block") or {})
        elif kind == "content_block_delta":
            _grow(blocks.setdefault(event.get("index") or 0, {}), event.get("delta") or {}, inputs,
                  event.get("index") or 0)
        elif kind == "message_delta" and message is not None:
            message["usage"].update({k: v for k, v in (event.get("usage") or {}).items() if v is not None})
    if message is None:
        return None
    for index, raw in inputs.items():
        if raw:
            blocks[index]["input"] = parts.arguments(raw)
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return answer(message)


def _grow(block: dict[str, Any], delta: dict[str, Any], inputs: dict[int, str], index: int) -> None:
    """One content block grown by one delta (a tool's input is gathered as text, parsed at the end)."""
    if delta.get("type") == "text_delta" and block.get("type", "text") == "text":
        block["text"] = block.get("text", "") + (delta.get("text") or "")
    elif delta.get("type") == "input_json_delta":
        inputs[index] = inputs.get(index, "") + (delta.get("partial_json") or "")
    elif delta.get("type") == "thinking_delta" and block.get("type") == "thinking":
        block["thinking"] = block.get("thinking", "") + (delta.get("thinking") or "")


def validate_body(body: Body) -> None:
    from anthropic.types import message_create_params as p

    validate_params(p.MessageCreateParamsStreaming if body.get("stream") else p.MessageCreateParamsNonStreaming, body)


READINGS = {
    "anthropic-messages": ApiReading(
        ModelCall(prefix, system_prompt, lambda body: parts.last_user_text(_messages(body)),
                  lambda body: parts.listed_tools(body.get("tools")), tool_outputs, answer, stream),
        price=("anthropic", "default"), validate=lambda _, body: validate_body(body)),
}
