"""Cohere's APIs on the wire: chat (``/v2/chat``: Chat Completions' shape of messages and tools, with
``document`` parts in tool results), embed (``/v2/embed``, ``/v1/embed``), rerank (``/v2/rerank``,
``/v1/rerank``)."""

from __future__ import annotations

from typing import Any

from rag_core.evals.wire import openai, parts
from rag_core.evals.wire.exchange import Answer, ApiReading, ModelCall


def chat_answer(response: dict[str, Any]) -> Answer:
    message = response.get("message") or {}
    calls = [{"name": c["function"].get("name"), "arguments": parts.arguments(c["function"].get("arguments"))}
             for c in message.get("tool_calls") or [] if isinstance(c.get("function"), dict)]
    tokens = (response.get("usage") or {}).get("tokens") or {}
    return Answer(parts.text_of(message.get("content")), calls,
                  parts.summed_usage(tokens.get("input_tokens"), tokens.get("output_tokens")))


def chat_stream(events: list[Any]) -> Answer:
    """The message a Cohere v2 chat stream delivers: content parts from ``content-start`` /
    ``content-delta``, tool calls from ``tool-call-start`` / ``tool-call-delta``, usage from
    ``message-end``."""
    content: dict[int, dict[str, Any]] = {}
    calls: dict[int, dict[str, Any]] = {}
    usage = None
    for event in events:
        kind, index = event.get("type"), event.get("index") or 0
        message = ((event.get("delta") or {}).get("message") or {})
        if kind == "content-start":
            part = message.get("content") or {}
            kind_of_part = part.get("type") or "text"
            content[index] = {"type": "text", "text": part.get("text") or ""} if kind_of_part == "text" else {
                "type": kind_of_part}  # a reasoning model's thinking is not the answer
        elif kind == "content-delta":
            part = content.setdefault(index, {"type": "text", "text": ""})
            if "text" in part:
                part["text"] += (message.get("content") or {}).get("text") or ""
        elif kind == "tool-call-start":
            start = message.get("tool_calls") or {}
            function = start.get("function") or {}
            calls[index] = {"function": {"name": function.get("name"), "arguments": function.get("arguments") or ""}}
        elif kind == "tool-call-delta":
            call = calls.setdefault(index, {"function": {"name": None, "arguments": ""}})
            function = (message.get("tool_calls") or {}).get("function") or {}
            call["function"]["name"] = function.get("name") or call["function"]["name"]
            call["function"]["arguments"] += function.get("arguments") or ""
        elif kind == "message-end":
            usage = (event.get("delta") or {}).get("usage") or usage
    return chat_answer({"message": {"content": [content[i] for i in sorted(content)],
                                    "tool_calls": [calls[i] for i in sorted(calls)]},
                        "usage": usage})


READINGS = {
    "cohere-chat": ApiReading(
        ModelCall(openai.chat_prefix, openai.chat_system_prompt,
                  lambda body: parts.last_user_text(parts.dict_items(body.get("messages"))), openai.chat_tools,
                  openai.chat_tool_outputs, chat_answer, chat_stream),
        price=("cohere", "default")),
    "cohere-embed": ApiReading(price=("cohere", "embeddings")),
    "cohere-rerank": ApiReading(),
}
