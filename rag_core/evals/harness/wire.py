"""What provider traffic says, read from the wire formats themselves (no agent needed).

Everything a golden pins (system prompt, user messages, tool definitions, tool calls, the final
text, token usage) is visible in the HTTP requests and responses a case exchanges, whatever
code sent them: a rag_core agent, another framework, or a hand-written SDK loop. This module
reads them for the APIs the harness knows, named from method and path:

==================  ==================================================
openai-responses    ``POST …/responses``
openai-chat         ``POST …/chat/completions``
openai-embeddings   ``POST …/embeddings``
gemini              ``POST …/models/<m>:generateContent`` and ``:streamGenerateContent``
gemini-embeddings   ``POST …/models/<m>:batchEmbedContents`` and ``:embedContent``
cohere-chat         ``POST /v2/chat``
cohere-embed        ``POST /v2/embed`` and ``/v1/embed``
cohere-rerank       ``POST /v2/rerank`` and ``/v1/rerank``
==================  ==================================================

Streams (server-sent events) are assembled into the message they deliver. A field the wire
does not carry is absent, never guessed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

_SYSTEM_ROLES = ("system", "developer")
CHAT_APIS = ("openai-responses", "openai-chat", "gemini", "cohere-chat")


@dataclass(frozen=True)
class Exchange:
    """One request and its answer, as they crossed the wire (bodies parsed when JSON)."""

    method: str
    path: str
    request: Any
    status: int
    response: Any  # parsed JSON, or the raw text of a stream

    @property
    def api(self) -> str | None:
        return api_of(self.method, self.path)


def api_of(method: str, path: str) -> str | None:
    """The API a request belongs to, or None for traffic the harness does not read."""
    if method.upper() != "POST":
        return None
    path = path.split("?", 1)[0].rstrip("/")
    if path.endswith("/chat/completions"):
        return "openai-chat"
    if path.endswith("/responses"):
        return "openai-responses"
    if path.endswith("/embeddings"):
        return "openai-embeddings"
    if ":generateContent" in path or ":streamGenerateContent" in path:
        return "gemini"
    if path.endswith((":batchEmbedContents", ":embedContent")):
        return "gemini-embeddings"
    if path.endswith("/v2/chat"):
        return "cohere-chat"
    for name in ("embed", "rerank"):
        if path.endswith((f"/v1/{name}", f"/v2/{name}")):
            return f"cohere-{name}"
    return None


def _leading_system(items: list[Any]) -> list[Any]:
    leading = []
    for item in items:
        if not (isinstance(item, dict) and item.get("role") in _SYSTEM_ROLES):
            break
        leading.append(item)
    return leading


def prompt_prefix(body: dict[str, Any]) -> dict[str, Any]:
    """The system prompt and tool definitions of one request body, exactly as sent (what stays
    the same from one round to the next, and what providers cache)."""
    if "input" in body:  # Responses
        system: Any = {"instructions": body.get("instructions"),
                       "input": _leading_system(body["input"] if isinstance(body["input"], list) else [])}
    elif "messages" in body:  # Chat Completions, Cohere v2
        system = _leading_system(body["messages"])
    elif "contents" in body:  # Gemini
        system = body.get("systemInstruction", body.get("system_instruction"))
    else:
        system = None
    return {"system": system, "tools": body.get("tools")}


# --- text of a message, whatever shape its content takes ---------------------------------------

def _text(content: Any) -> str | None:
    """A message's text: a string, or the text parts of a list joined (None when it has none)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = content.get("parts", [content])
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        texts += [p for p in content if isinstance(p, str)]
        return "".join(texts) if texts else None
    return None


def _arguments(raw: Any) -> Any:
    """Tool-call arguments as data: the JSON string OpenAI sends is parsed; the text is kept when
    it is not JSON (a model's malformed call stays visible as it was)."""
    if isinstance(raw, str):
        try:
            return json.loads(raw) if raw else {}
        except ValueError:
            return raw
    return raw if raw is not None else {}


# --- requests -----------------------------------------------------------------------------------

def system_prompt(body: dict[str, Any]) -> str | None:
    """The system prompt of a chat request: instructions plus the leading system/developer
    messages (Responses), the leading system/developer messages (Chat, Cohere), or
    ``systemInstruction`` (Gemini). Several system messages are joined by a blank line."""
    prefix = prompt_prefix(body)["system"]
    if isinstance(prefix, dict) and "input" in prefix:
        parts = [prefix["instructions"]] if prefix["instructions"] else []
        parts += [_text(m.get("content")) for m in prefix["input"]]
    elif isinstance(prefix, list):
        parts = [_text(m.get("content")) for m in prefix]
    else:
        parts = [_text(prefix)]
    parts = [p for p in parts if p]
    return "\n\n".join(parts) if parts else None


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    items = body.get("input", body.get("messages", body.get("contents")))
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    return [m for m in items or [] if isinstance(m, dict)]


def last_user_message(body: dict[str, Any]) -> str | None:
    """The text of the request's last user message (a tool result is not a user message, even
    where Gemini sends it with role ``user``)."""
    for message in reversed(_messages(body)):
        if message.get("role") != "user":
            continue
        parts = message.get("parts")
        if parts is not None and not any(isinstance(p, dict) and "text" in p for p in parts):
            continue  # Gemini's functionResponse turn
        text = _text(parts if parts is not None else message.get("content"))
        if text is not None:
            return text
    return None


def tool_outputs(body: dict[str, Any]) -> list[str]:
    """The tool results a request carries back to the model, in order, as text (Responses
    ``function_call_output``, Chat ``tool`` messages, Gemini ``functionResponse`` parts): the
    context a model answered from, whatever searched it."""
    found: list[Any] = []
    for message in _messages(body):
        if message.get("type") == "function_call_output":
            found += [message["output"]] if message.get("output") is not None else []
        elif message.get("role") == "tool":
            text = _text(message.get("content"))
            found += [text] if text is not None else []
        else:
            found += [part["functionResponse"].get("response") for part in message.get("parts") or []
                      if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict)]
    return [output if isinstance(output, str) else json.dumps(output, ensure_ascii=False) for output in found]


def neutral_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool definition in one provider-neutral shape: name, description, parameters."""
    spec = tool.get("function", tool) if isinstance(tool.get("function"), dict) else tool
    parameters = next((spec[k] for k in ("parameters", "parameters_json_schema", "parametersJsonSchema", "input_schema")
                       if k in spec), None)
    out: dict[str, Any] = {"name": spec.get("name")}
    if spec.get("description") is not None:
        out["description"] = spec["description"]
    if parameters is not None:
        out["parameters"] = parameters
    return out


def _json_schema_types(node: Any) -> Any:
    """Gemini's own ``parameters`` schema spells types in capitals (``STRING``, ``OBJECT``); in
    the neutral shape they are JSON Schema's, so one tool reads the same whichever field sent it."""
    if isinstance(node, list):
        return [_json_schema_types(item) for item in node]
    if not isinstance(node, dict):
        return node
    return {key: value.lower() if key == "type" and isinstance(value, str) else _json_schema_types(value)
            for key, value in node.items()}


def tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The function tools a chat request offers, neutral shape, in the order sent (Gemini's
    ``functionDeclarations`` groups are flattened; built-in tools such as web search are kept
    under their type)."""
    found = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        declarations = tool.get("functionDeclarations", tool.get("function_declarations"))
        if declarations is not None:
            found += [_json_schema_types(neutral_tool(d)) for d in declarations]
        elif tool.get("type", "function") == "function":
            found.append(neutral_tool(tool))
        else:
            found.append({"type": tool["type"]})
    return found


# --- responses ----------------------------------------------------------------------------------

@dataclass
class Answer:
    """What one model response delivered."""

    text: str | None
    tool_calls: list[dict[str, Any]]
    usage: dict[str, int]


def _events(stream: str) -> list[Any]:
    """The JSON payloads of a server-sent event stream (``[DONE]`` and comments skipped)."""
    payloads = []
    for block in stream.replace("\r\n", "\n").split("\n\n"):
        data = "\n".join(line[5:].lstrip() for line in block.split("\n") if line.startswith("data:"))
        if data and data != "[DONE]":
            try:
                payloads.append(json.loads(data))
            except ValueError:
                pass
    return payloads


def _responses_answer(response: dict[str, Any]) -> Answer:
    texts, calls = [], []
    for item in response.get("output") or []:
        if item.get("type") == "message":
            texts += [p.get("text", "") for p in item.get("content") or [] if p.get("type") == "output_text"]
        elif item.get("type") == "function_call":
            calls.append({"name": item.get("name"), "arguments": _arguments(item.get("arguments"))})
    usage = response.get("usage") or {}
    return Answer("".join(texts) if texts else None, calls,
                  _usage(usage.get("input_tokens"), usage.get("output_tokens"), usage.get("total_tokens")))


def _chat_answer(response: dict[str, Any]) -> Answer:
    choices = response.get("choices") or [{}]
    message = choices[0].get("message") or {}
    calls = [{"name": c["function"].get("name"), "arguments": _arguments(c["function"].get("arguments"))}
             for c in message.get("tool_calls") or [] if isinstance(c.get("function"), dict)]
    usage = response.get("usage") or {}
    return Answer(_text(message.get("content")), calls,
                  _usage(usage.get("prompt_tokens"), usage.get("completion_tokens"), usage.get("total_tokens")))


def _chat_stream(chunks: list[Any]) -> dict[str, Any]:
    """The completion a Chat Completions stream delivers, assembled from its deltas."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
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
    message = {"content": "".join(text) if text else None, "tool_calls": [calls[i] for i in sorted(calls)]}
    return {"choices": [{"message": message}], "usage": usage}


def _gemini_answer(chunks: list[Any]) -> Answer:
    texts, calls = [], []
    usage: dict[str, Any] = {}
    for chunk in chunks:
        usage = chunk.get("usageMetadata") or usage
        for candidate in (chunk.get("candidates") or [])[:1]:
            for part in (candidate.get("content") or {}).get("parts") or []:
                if part.get("thought"):
                    continue
                if "text" in part:
                    texts.append(part["text"])
                if "functionCall" in part:
                    call = part["functionCall"]
                    calls.append({"name": call.get("name"), "arguments": call.get("args") or {}})
    return Answer("".join(texts) if texts else None, calls,
                  _usage(usage.get("promptTokenCount"), usage.get("candidatesTokenCount"), usage.get("totalTokenCount")))


def _cohere_answer(response: dict[str, Any]) -> Answer:
    message = response.get("message") or {}
    calls = [{"name": c["function"].get("name"), "arguments": _arguments(c["function"].get("arguments"))}
             for c in message.get("tool_calls") or [] if isinstance(c.get("function"), dict)]
    tokens = (response.get("usage") or {}).get("tokens") or {}
    inputs, outputs = tokens.get("input_tokens"), tokens.get("output_tokens")
    total = int(inputs + outputs) if inputs is not None and outputs is not None else None
    return Answer(_text(message.get("content")), calls, _usage(inputs, outputs, total))


def _usage(inputs: Any, outputs: Any, total: Any) -> dict[str, int]:
    named = {"input_tokens": inputs, "output_tokens": outputs, "total_tokens": total}
    return {k: int(v) for k, v in named.items() if v is not None}


def answer(exchange: Exchange) -> Answer | None:
    """What a chat response delivered (text, tool calls, usage); None for other traffic and for
    error answers."""
    api, body = exchange.api, exchange.response
    if api not in CHAT_APIS or exchange.status >= 400 or body is None:
        return None
    if isinstance(body, str):  # a stream
        events = _events(body)
        if api == "openai-responses":
            done = [e["response"] for e in events if e.get("type") in ("response.completed", "response.incomplete")]
            return _responses_answer(done[-1]) if done else None
        if api == "openai-chat":
            return _chat_answer(_chat_stream(events))
        if api == "gemini":
            return _gemini_answer(events)
        return None
    if not isinstance(body, (dict, list)):
        return None
    if api == "openai-responses":
        return _responses_answer(body)
    if api == "openai-chat":
        return _chat_answer(body)
    if api == "gemini":
        return _gemini_answer(body if isinstance(body, list) else [body])
    return _cohere_answer(body)


# --- a whole case -------------------------------------------------------------------------------

def observe(exchanges: list[Exchange], turn_starts: list[int]) -> dict[str, Any]:
    """The golden fields a case's traffic determines. ``turn_starts`` is the index of the first
    exchange of each turn, so each turn's user message is read from its first chat request."""
    chats = [(i, e) for i, e in enumerate(exchanges) if e.api in CHAT_APIS and isinstance(e.request, dict)]
    first = chats[0][1].request if chats else {}
    user_messages = []
    for turn, start in enumerate(turn_starts):
        end = turn_starts[turn + 1] if turn + 1 < len(turn_starts) else len(exchanges)
        request = next((e.request for i, e in chats if start <= i < end), None)
        if request is not None:
            user_messages.append(last_user_message(request))
    parsed = [answer(e) for _, e in chats]
    answers = [a for a in parsed if a is not None]
    usage: dict[str, int] = {}
    for a in answers:
        for key, value in a.usage.items():
            usage[key] = usage.get(key, 0) + value
    last = parsed[-1] if parsed else None
    return {
        "apis": [e.api or f"{e.method} {e.path}" for e in exchanges],
        "system_prompt": system_prompt(first) if chats else None,
        "user_messages": user_messages,
        "tools": tools(first),
        "requests": [e.request for e in exchanges],
        "chat_requests": [e.request for _, e in chats],
        "tool_calls": {"calls": [c for a in answers for c in a.tool_calls]},
        "final_text": last.text if last is not None else None,
        "usage": usage,
        # what the last model request carried back from tools: a target's retrieved context
        "tool_outputs": tool_outputs(chats[-1][1].request) if chats else [],
    }
