"""OpenAI's APIs on the wire (Azure OpenAI's deployments too): Responses (``…/responses``), Chat
Completions (``…/chat/completions``), embeddings (``…/embeddings``)."""

from __future__ import annotations

from typing import Any

from rag_core.evals.wire import parts
from rag_core.evals.wire.exchange import Answer, ApiReading, Body, ModelCall
from rag_core.evals.wire.sdk_types import validate_params


# --- Responses -----------------------------------------------------------------------------------

def _input(body: Body) -> list[dict[str, Any]]:
    return parts.dict_items(body.get("input"))


def responses_prefix(body: Body) -> dict[str, Any]:
    items = body["input"] if isinstance(body.get("input"), list) else []
    return {"system": {"instructions": body.get("instructions"), "input": parts.leading_system(items)},
            "tools": body.get("tools")}


def responses_system_prompt(body: Body) -> str | None:
    """``instructions`` and the leading system or developer input items."""
    prefix = responses_prefix(body)["system"]
    return parts.joined([prefix["instructions"], *(parts.text_of(m.get("content")) for m in prefix["input"])])


def responses_tool_outputs(body: Body) -> list[str]:
    """The ``function_call_output`` items' outputs (of an output given as parts, its text)."""
    found = []
    for item in _input(body):
        if item.get("type") == "function_call_output":
            output = item.get("output")
            text = parts.text_of(output) if isinstance(output, list) else output
            found += [parts.dumped(text)] if text is not None else []
    return found


def responses_answer(response: dict[str, Any]) -> Answer:
    texts, calls = [], []
    for item in response.get("output") or []:
        if item.get("type") == "message":
            texts += [p.get("text", "") for p in item.get("content") or [] if p.get("type") == "output_text"]
        elif item.get("type") == "function_call":
            calls.append({"name": item.get("name"), "arguments": parts.arguments(item.get("arguments"))})
    usage = response.get("usage") or {}
    return Answer("".join(texts) if texts else None, calls,
                  parts.usage(usage.get("input_tokens"), usage.get("output_tokens"), usage.get("total_tokens")))


def responses_stream(events: list[Any]) -> Answer | None:
    done = [e["response"] for e in events if e.get("type") in ("response.completed", "response.incomplete")]
    return responses_answer(done[-1]) if done else None


def validate_responses_body(body: Body) -> None:
    from openai.types.responses import response_create_params as p

    validate_params(p.ResponseCreateParamsStreaming if body.get("stream") else p.ResponseCreateParamsNonStreaming, body)


# --- Chat Completions ---------------------------------------------------------------------------

def _messages(body: Body) -> list[dict[str, Any]]:
    return parts.dict_items(body.get("messages"))


def chat_tool_list(body: Body) -> Any:
    """The tool definitions as sent, the deprecated ``functions`` where no ``tools`` are."""
    return body.get("tools") if "tools" in body or "functions" not in body else body["functions"]


def chat_prefix(body: Body) -> dict[str, Any]:
    return {"system": parts.leading_system(body.get("messages") or []), "tools": chat_tool_list(body)}


def chat_system_prompt(body: Body) -> str | None:
    """The leading system or developer messages (several are joined by a blank line)."""
    return parts.joined([parts.text_of(m.get("content")) for m in chat_prefix(body)["system"]])


def chat_tools(body: Body) -> list[dict[str, Any]]:
    """``tools``, then the deprecated ``functions``."""
    return parts.listed_tools(body.get("tools"), body.get("functions"))


def tool_message_outputs(content: Any) -> list[str]:
    """What one ``tool`` message carries: its text (text parts joined), then each Cohere
    ``document`` part's data."""
    found = []
    text = parts.text_of(content)
    if text is not None:
        found.append(text)
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and part.get("type") == "document" and isinstance(part.get("document"), dict):
            data = part["document"].get("data")
            if data is not None:
                found.append(parts.dumped(data))
    return found


def chat_tool_outputs(body: Body) -> list[str]:
    """The ``tool`` messages (and the deprecated ``function`` messages), in order."""
    return [output for message in _messages(body) if message.get("role") in ("tool", "function")
            for output in tool_message_outputs(message.get("content"))]


def chat_answer(response: dict[str, Any]) -> Answer:
    """A Chat Completions answer: ``message.tool_calls``, or the deprecated ``message.function_call``."""
    choices = response.get("choices") or [{}]
    message = choices[0].get("message") or {}
    functions = [c["function"] for c in message.get("tool_calls") or [] if isinstance(c.get("function"), dict)]
    if isinstance(message.get("function_call"), dict):
        functions.append(message["function_call"])
    calls = [{"name": f.get("name"), "arguments": parts.arguments(f.get("arguments"))} for f in functions]
    usage = response.get("usage") or {}
    return Answer(parts.text_of(message.get("content")), calls,
                  parts.usage(usage.get("prompt_tokens"), usage.get("completion_tokens"), usage.get("total_tokens")))


def chat_stream(chunks: list[Any]) -> Answer:
    """The completion a Chat Completions stream delivers, assembled from its deltas (``tool_calls``
    by index, and the deprecated ``function_call``)."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    function_call: dict[str, Any] | None = None
    usage = None
    for chunk in chunks:
        usage = chunk.get("usage") or usage
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content"):
                text.append(delta["content"])
            for part in delta.get("tool_calls") or []:
                call = calls.setdefault(part.get("index", len(calls)), {"function": {"name": None, "arguments": ""}})
                function = part.get("function") or {}
                call["function"]["name"] = function.get("name") or call["function"]["name"]
                call["function"]["arguments"] += function.get("arguments") or ""
            if isinstance(delta.get("function_call"), dict):
                function_call = function_call or {"name": None, "arguments": ""}
                function_call["name"] = delta["function_call"].get("name") or function_call["name"]
                function_call["arguments"] += delta["function_call"].get("arguments") or ""
    message: dict[str, Any] = {"content": "".join(text) if text else None,
                               "tool_calls": [calls[i] for i in sorted(calls)]}
    if function_call is not None:
        message["function_call"] = function_call
    return chat_answer({"choices": [{"message": message}], "usage": usage})


def validate_chat_body(body: Body) -> None:
    from openai.types.chat import completion_create_params as p

    validate_params(p.CompletionCreateParamsStreaming if body.get("stream") else p.CompletionCreateParamsNonStreaming, body)


READINGS = {
    "openai-responses": ApiReading(
        ModelCall(responses_prefix, responses_system_prompt, lambda body: parts.last_user_text(_input(body)),
                  lambda body: parts.listed_tools(body.get("tools")), responses_tool_outputs,
                  responses_answer, responses_stream),
        price=("openai", "responses"), validate=lambda _, body: validate_responses_body(body)),
    "openai-chat": ApiReading(
        ModelCall(chat_prefix, chat_system_prompt, lambda body: parts.last_user_text(_messages(body)), chat_tools,
                  chat_tool_outputs, chat_answer, chat_stream),
        price=("openai", "chat"), validate=lambda _, body: validate_chat_body(body)),
    # the SDK builds embedding bodies itself, not rag_core: not checked
    "openai-embeddings": ApiReading(price=("openai", "embeddings")),
}
