"""What provider traffic says, read from the wire formats themselves (no agent needed).

Everything a golden pins (system prompt, user messages, tool definitions, tool calls, the final
text, token usage) is visible in the HTTP requests and responses a case exchanges, whatever
code sent them: a rag_core agent, another framework, or a hand-written SDK loop. This module
reads them for the APIs the harness knows, named from method and path:

=======================  ==================================================
openai-responses         ``POST …/responses``
openai-chat              ``POST …/chat/completions``
openai-embeddings        ``POST …/embeddings``
gemini                   ``POST …/models/<m>:generateContent``
gemini-stream            ``POST …/models/<m>:streamGenerateContent``
gemini-embeddings        ``POST …/models/<m>:batchEmbedContents`` and ``:embedContent``
cohere-chat              ``POST /v2/chat``
cohere-embed             ``POST /v2/embed`` and ``/v1/embed``
cohere-rerank            ``POST /v2/rerank`` and ``/v1/rerank``
anthropic-messages       ``POST …/v1/messages``
bedrock-converse         ``POST …/model/<modelId>/converse``
bedrock-converse-stream  ``POST …/model/<modelId>/converse-stream``
=======================  ==================================================

Streams are assembled into the message they deliver: server-sent events, and Bedrock's
ConverseStream, which answers in AWS's binary event-stream encoding. That one is read by its API
(the path), as botocore reads it, whether or not the recording kept its content type. A field the
wire does not carry is absent, never guessed.

Token usage is read the same way for every API: ``input_tokens`` counts every token the model
was given (cached or not, tool-use prompts included), ``output_tokens`` every token it produced
(reasoning and thinking included), ``total_tokens`` what the provider reports as the total, or
their sum where it reports none.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator, NamedTuple

from rag_core._optional import require
from rag_core.providers import CHAT_APIS, api_of

_SYSTEM_ROLES = ("system", "developer")
# APIs whose successful answer is binary, kept as the bytes recorded: named by the path, since
# the content type is not always recorded
BINARY_STREAM_APIS = ("bedrock-converse-stream",)
# the ``toolUse`` type of a tool Bedrock runs itself; a tool call marked with it ran at the provider
SERVER_TOOL_USE = "server_tool_use"


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


def _leading_system(items: list[Any]) -> list[Any]:
    leading = []
    for item in items:
        if not (isinstance(item, dict) and item.get("role") in _SYSTEM_ROLES):
            break
        leading.append(item)
    return leading


def _declared_tools(body: dict[str, Any]) -> Any:
    """The tool definitions as sent: ``tools``, or ``toolConfig.tools`` on Bedrock."""
    if "tools" in body:
        return body["tools"]
    config = body.get("toolConfig")
    return config.get("tools") if isinstance(config, dict) else None


def _tool_list(body: dict[str, Any]) -> Any:
    """The tool definitions as sent, the deprecated ``functions`` of Chat Completions included."""
    declared = _declared_tools(body)
    return declared if declared is not None or "functions" not in body else body["functions"]


def prompt_prefix(body: dict[str, Any]) -> dict[str, Any]:
    """The system prompt and tool definitions of one request body, exactly as sent (what stays
    the same from one round to the next, and what providers cache)."""
    if "input" in body:  # Responses
        system: Any = {"instructions": body.get("instructions"),
                       "input": _leading_system(body["input"] if isinstance(body["input"], list) else [])}
    elif "contents" in body:  # Gemini
        system = body.get("systemInstruction", body.get("system_instruction"))
    elif "system" in body:  # Anthropic Messages, Bedrock Converse
        system = body["system"]
    elif "messages" in body:  # Chat Completions, Cohere v2
        system = _leading_system(body["messages"])
    else:
        system = None
    return {"system": system, "tools": _tool_list(body)}


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


def _dumped(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


# --- requests -----------------------------------------------------------------------------------

def system_prompt(body: dict[str, Any]) -> str | None:
    """The system prompt of a chat request: instructions plus the leading system/developer
    messages (Responses), the leading system/developer messages (Chat, Cohere),
    ``systemInstruction`` (Gemini) or ``system`` (Anthropic: a string or text blocks; Bedrock:
    text blocks). Several system messages are joined by a blank line."""
    prefix = prompt_prefix(body)["system"]
    if isinstance(prefix, dict) and "input" in prefix:
        parts = [prefix["instructions"]] if prefix["instructions"] else []
        parts += [_text(m.get("content")) for m in prefix["input"]]
    elif isinstance(prefix, list) and "system" not in body:
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
    where Gemini, Anthropic and Bedrock send it with role ``user``)."""
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


def _tool_message_outputs(content: Any) -> list[str]:
    """What one Chat or Cohere ``tool`` message carries: its text (text parts joined), then each
    Cohere ``document`` part's data."""
    found = []
    text = _text(content)
    if text is not None:
        found.append(text)
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and part.get("type") == "document" and isinstance(part.get("document"), dict):
            data = part["document"].get("data")
            if data is not None:
                found.append(_dumped(data))
    return found


def _block_outputs(message: dict[str, Any]) -> list[str]:
    """The tool results among a message's content blocks: Anthropic ``tool_result`` blocks (their
    text) and Bedrock ``toolResult`` blocks (their text and JSON parts)."""
    found: list[str] = []
    content = message.get("content")
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result":
            text = _text(block.get("content"))
            found += [text] if text is not None else []
        elif isinstance(block.get("toolResult"), dict):
            pieces = [p["text"] if isinstance(p.get("text"), str) else json.dumps(p["json"], ensure_ascii=False)
                      for p in block["toolResult"].get("content") or []
                      if isinstance(p, dict) and (isinstance(p.get("text"), str) or "json" in p)]
            found += ["".join(pieces)] if pieces else []
    return found


def tool_outputs(body: dict[str, Any]) -> list[str]:
    """The tool results a request carries back to the model, in order, as text (Responses
    ``function_call_output``, Chat and Cohere ``tool`` messages, Chat's deprecated ``function``
    messages, Gemini ``functionResponse`` parts, Anthropic ``tool_result`` blocks, Bedrock
    ``toolResult`` blocks): the context a model answered from, whatever searched it. Of content
    given as a list of parts the text parts are read (an image or a file is not context text, and
    its base64 data is no use in a golden); a Cohere ``document`` part gives its data."""
    found: list[str] = []
    for message in _messages(body):
        if message.get("type") == "function_call_output":
            output = message.get("output")
            text = _text(output) if isinstance(output, list) else output
            found += [_dumped(text)] if text is not None else []
        elif message.get("role") in ("tool", "function"):  # "function": Chat's deprecated function results
            found += _tool_message_outputs(message.get("content"))
        elif message.get("parts") is not None:
            found += [_dumped(part["functionResponse"].get("response")) for part in message.get("parts") or []
                      if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict)]
        else:
            found += _block_outputs(message)
    return found


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


def _camel(name: str) -> str:
    """``google_search`` → ``googleSearch``: Gemini's REST API takes both spellings."""
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)


def _neutral_tools(tool: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry of a request's tools, neutral shape (a Gemini tool object may hold several)."""
    kind = tool.get("type")
    if (isinstance(tool.get("function"), dict) or kind == "function"
            or (kind in (None, "custom") and "input_schema" in tool)  # Anthropic
            or (kind is None and "name" in tool)):  # Chat's deprecated functions
        return [neutral_tool(tool)]
    if kind is not None:  # built-in tools: Responses' web_search, Anthropic's server tools...
        return [{"type": kind}]
    if isinstance(tool.get("toolSpec"), dict):  # Bedrock
        spec = tool["toolSpec"]
        out = {"name": spec.get("name")}
        if spec.get("description") is not None:
            out["description"] = spec["description"]
        schema = spec.get("inputSchema")
        if isinstance(schema, dict) and "json" in schema:
            out["parameters"] = schema["json"]
        return [out]
    if isinstance(tool.get("systemTool"), dict):  # Bedrock's provider-defined tools
        return [{"type": "systemTool", "name": tool["systemTool"].get("name")}]
    if "cachePoint" in tool:  # Bedrock's cache marker, not a tool
        return []
    found = []  # a Gemini tool object: function declarations and built-in tools side by side
    for key, value in tool.items():
        if key in ("functionDeclarations", "function_declarations"):
            found += [_json_schema_types(neutral_tool(d)) for d in value or [] if isinstance(d, dict)]
        elif value is not None:
            found.append({"type": _camel(key)})
    return found


def tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The function tools a chat request offers, neutral shape, in the order sent (Gemini's
    ``functionDeclarations`` groups are flattened, and Gemini's ``tools`` may be one object
    rather than a list; Chat's deprecated ``functions`` follow ``tools``; built-in tools such as
    web search are kept under their type)."""
    listed, functions = _declared_tools(body), body.get("functions")
    if isinstance(listed, dict):
        listed = [listed]
    found = []
    for tool in (listed if isinstance(listed, list) else []) + (functions if isinstance(functions, list) else []):
        if isinstance(tool, dict):
            found += _neutral_tools(tool)
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


def _sum(*counts: Any) -> int | None:
    """The sum of the counts present (None when none is)."""
    present = [c for c in counts if c is not None]
    return int(sum(present)) if present else None


def _usage(inputs: Any, outputs: Any, total: Any) -> dict[str, int]:
    named = {"input_tokens": inputs, "output_tokens": outputs, "total_tokens": total}
    return {k: int(v) for k, v in named.items() if v is not None}


def _summed(inputs: Any, outputs: Any) -> dict[str, int]:
    """Usage of an API that reports no total (Cohere, Anthropic): the total is input + output."""
    return _usage(inputs, outputs, inputs + outputs if inputs is not None and outputs is not None else None)


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


def _responses_stream(events: list[Any]) -> Answer | None:
    done = [e["response"] for e in events if e.get("type") in ("response.completed", "response.incomplete")]
    return _responses_answer(done[-1]) if done else None


def _chat_answer(response: dict[str, Any]) -> Answer:
    """A Chat Completions answer: ``message.tool_calls``, or the deprecated ``message.function_call``."""
    choices = response.get("choices") or [{}]
    message = choices[0].get("message") or {}
    functions = [c["function"] for c in message.get("tool_calls") or [] if isinstance(c.get("function"), dict)]
    if isinstance(message.get("function_call"), dict):
        functions.append(message["function_call"])
    calls = [{"name": f.get("name"), "arguments": _arguments(f.get("arguments"))} for f in functions]
    usage = response.get("usage") or {}
    return Answer(_text(message.get("content")), calls,
                  _usage(usage.get("prompt_tokens"), usage.get("completion_tokens"), usage.get("total_tokens")))


def _chat_stream(chunks: list[Any]) -> Answer:
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
    return _chat_answer({"choices": [{"message": message}], "usage": usage})


def _gemini_answer(chunks: list[Any]) -> Answer:
    """A Gemini answer (one response, or a stream's chunks). Thinking counts as output, as OpenAI's
    reasoning tokens do, and the prompt of a built-in tool's call as input."""
    texts, calls = [], []
    usage: dict[str, Any] = {}
    for chunk in chunks:
        if not isinstance(chunk, dict):
            continue
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
                  _usage(_sum(usage.get("promptTokenCount"), usage.get("toolUsePromptTokenCount")),
                         _sum(usage.get("candidatesTokenCount"), usage.get("thoughtsTokenCount")),
                         usage.get("totalTokenCount")))


def _cohere_answer(response: dict[str, Any]) -> Answer:
    message = response.get("message") or {}
    calls = [{"name": c["function"].get("name"), "arguments": _arguments(c["function"].get("arguments"))}
             for c in message.get("tool_calls") or [] if isinstance(c.get("function"), dict)]
    tokens = (response.get("usage") or {}).get("tokens") or {}
    usage = _summed(tokens.get("input_tokens"), tokens.get("output_tokens"))
    return Answer(_text(message.get("content")), calls, usage)


def _cohere_stream(events: list[Any]) -> Answer:
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
    return _cohere_answer({"message": {"content": [content[i] for i in sorted(content)],
                                       "tool_calls": [calls[i] for i in sorted(calls)]},
                           "usage": usage})


def _anthropic_answer(message: dict[str, Any]) -> Answer:
    """An Anthropic Message: text blocks joined, ``tool_use`` blocks as tool calls (a server tool's
    ``server_tool_use`` ran at Anthropic and is not one, as Responses' web_search_call is not);
    input counts cache writes and reads, which ``input_tokens`` leaves out."""
    texts, calls = [], []
    for block in message.get("content") or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == "tool_use":
            calls.append({"name": block.get("name"), "arguments": _arguments(block.get("input"))})
    usage = message.get("usage") or {}
    inputs = _sum(usage.get("input_tokens"), usage.get("cache_creation_input_tokens"),
                  usage.get("cache_read_input_tokens"))
    return Answer("".join(texts) if texts else None, calls, _summed(inputs, usage.get("output_tokens")))


def _anthropic_stream(events: list[Any]) -> Answer | None:
    """The Message an Anthropic stream delivers: ``message_start`` gives its frame, each content
    block is opened by ``content_block_start`` and grown by its deltas (text, a tool's input as
    partial JSON, thinking), ``message_delta`` brings the final usage, whose counts are running
    totals: they replace the earlier ones, and a count it leaves out keeps its earlier value."""
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
            index, delta = event.get("index") or 0, event.get("delta") or {}
            block = blocks.setdefault(index, {})
            if delta.get("type") == "text_delta" and block.get("type", "text") == "text":
                block["text"] = block.get("text", "") + (delta.get("text") or "")
            elif delta.get("type") == "input_json_delta":
                inputs[index] = inputs.get(index, "") + (delta.get("partial_json") or "")
            elif delta.get("type") == "thinking_delta" and block.get("type") == "thinking":
                block["thinking"] = block.get("thinking", "") + (delta.get("thinking") or "")
        elif kind == "message_delta" and message is not None:
            message["usage"].update({k: v for k, v in (event.get("usage") or {}).items() if v is not None})
    if message is None:
        return None
    for index, raw in inputs.items():
        if raw:
            blocks[index]["input"] = _arguments(raw)
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return _anthropic_answer(message)


def _bedrock_calls(content: list[Any]) -> list[dict[str, Any]]:
    """A Bedrock message's ``toolUse`` blocks as tool calls, in order. A server tool's (``type:
    server_tool_use``: Bedrock ran it, a code interpreter say) is kept, marked with that type, with
    the ``toolResult`` block that answered it in the same message as its ``result`` (the block
    without its id: the call it answers is the one it is written under)."""
    blocks = [block for block in content if isinstance(block, dict)]
    results = {block["toolResult"].get("toolUseId"): block["toolResult"] for block in blocks
               if isinstance(block.get("toolResult"), dict)}
    calls = []
    for block in blocks:
        use = block.get("toolUse")
        if not isinstance(use, dict):
            continue
        call = {"name": use.get("name"), "arguments": _arguments(use.get("input"))}
        if use.get("type") == SERVER_TOOL_USE:
            call["type"] = SERVER_TOOL_USE
            result = results.get(use.get("toolUseId"))
            if result is not None:
                call["result"] = {key: value for key, value in result.items() if key != "toolUseId"}
        calls.append(call)
    return calls


def _bedrock_answer(response: dict[str, Any]) -> Answer:
    """A Bedrock Converse answer: ``output.message.content`` (text blocks, ``toolUse`` blocks, a
    server tool's marked as such); input counts cache writes and reads, as ``totalTokens`` does."""
    message = (response.get("output") or {}).get("message") or {}
    content = message.get("content") if isinstance(message.get("content"), list) else []
    texts = [block["text"] for block in content if isinstance(block, dict) and isinstance(block.get("text"), str)]
    usage = response.get("usage") or {}
    inputs = _sum(usage.get("inputTokens"), usage.get("cacheReadInputTokens"), usage.get("cacheWriteInputTokens"))
    return Answer("".join(texts) if texts else None, _bedrock_calls(content),
                  _usage(inputs, usage.get("outputTokens"), usage.get("totalTokens")))


@dataclass(frozen=True)
class ConverseStreamRead:
    """What one ConverseStream answer delivered, as botocore reads its event stream."""

    response: dict[str, Any]  # the events gathered into the ConverseResponse ``converse`` would return
    # the code and message of the exception event that ended it, if one did (``unreadable`` for
    # bytes that are not event-stream frames)
    error: tuple[str, str] | None


class _BotocoreReader(NamedTuple):
    """What reading a ConverseStream answer takes from botocore."""

    parser: Any  # botocore's response parser for bedrock-runtime's protocol
    operation: Any  # ConverseStream's operation model
    exception_event: type[Exception]  # what an exception event in the stream raises
    not_a_stream: tuple[type[Exception], ...]  # what bytes that are not event-stream frames raise


@functools.cache
def _botocore_reader() -> _BotocoreReader:
    """botocore's parser and ConverseStream's operation model (botocore's service model is loaded
    once, not per answer)."""
    botocore_session = require("botocore.session", extra="frameworks", package="botocore",
                               feature="Reading Bedrock ConverseStream answers (AWS's binary event stream)")
    from botocore.eventstream import ParserError
    from botocore.exceptions import EventStreamError
    from botocore.parsers import ResponseParserError, create_parser

    service = botocore_session.get_session().get_service_model("bedrock-runtime")
    return _BotocoreReader(create_parser(service.protocol), service.operation_model("ConverseStream"),
                           EventStreamError, (ParserError, ResponseParserError))


class _RecordedBody:
    """A recorded body where botocore's parser wants the HTTP response's raw stream."""

    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self) -> Iterator[bytes]:
        yield self._body

    def close(self) -> None:
        pass


def _converse_events(body: bytes, reader: _BotocoreReader) -> Iterator[dict[str, Any]]:
    """ConverseStream's events, each parsed as botocore parses it (by the operation's output
    shape: what the response headers say plays no part, as recordings made elsewhere strip them);
    an exception event raises botocore's EventStreamError, as it does in the program."""
    operation = reader.operation
    parsed = reader.parser.parse({"status_code": 200, "headers": {}, "body": _RecordedBody(body),
                                  "context": {"operation_name": operation.name}}, operation.output_shape)
    return iter(parsed["stream"])


def converse_stream(body: bytes) -> ConverseStreamRead:
    """A ConverseStream answer (AWS event-stream frames) gathered into the ConverseResponse it
    delivers: ``messageStart`` gives the role, ``contentBlockStart`` opens a ``toolUse`` (its
    input grown by the deltas' JSON text) or a server tool's ``toolResult`` (grown by the deltas'
    content), text deltas grow text blocks, ``messageStop`` gives ``stopReason`` and ``metadata``
    the usage and metrics. Reasoning and citation deltas are not the answer and are left out."""
    reader = _botocore_reader()
    message: dict[str, Any] = {"role": "assistant"}
    response: dict[str, Any] = {"output": {"message": message}}
    blocks: dict[int, dict[str, Any]] = {}
    inputs: dict[int, str] = {}
    error = None
    try:
        for event in _converse_events(body, reader):
            kind, data = next(iter(event.items()))
            index = data.get("contentBlockIndex", 0)
            if kind == "messageStart":
                message["role"] = data.get("role", message["role"])
            elif kind == "contentBlockStart":
                start = data.get("start") or {}
                if "toolUse" in start:
                    blocks[index] = {"toolUse": dict(start["toolUse"])}
                elif "toolResult" in start:
                    blocks[index] = {"toolResult": {**start["toolResult"], "content": []}}
            elif kind == "contentBlockDelta":
                delta = data.get("delta") or {}
                if "text" in delta:
                    block = blocks.setdefault(index, {"text": ""})
                    block["text"] = block.get("text", "") + delta["text"]
                elif "toolUse" in delta:
                    inputs[index] = inputs.get(index, "") + (delta["toolUse"].get("input") or "")
                elif "toolResult" in delta:
                    result = blocks.setdefault(index, {"toolResult": {"content": []}}).get("toolResult")
                    if isinstance(result, dict):
                        result.setdefault("content", []).extend(delta["toolResult"])
            elif kind == "messageStop":
                response["stopReason"] = data.get("stopReason")
            elif kind == "metadata":
                response.update({key: data[key] for key in ("usage", "metrics") if key in data})
    except reader.exception_event as exc:
        details = getattr(exc, "response", {}).get("Error") or {}
        error = (str(details.get("Code", "")), str(details.get("Message", "")))
    except reader.not_a_stream as exc:
        error = ("unreadable", f"not an AWS event stream: {exc}")
    for index, raw in inputs.items():
        if "toolUse" in blocks.get(index, {}):
            blocks[index]["toolUse"]["input"] = _arguments(raw)
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return ConverseStreamRead(response, error)


def _bedrock_stream(body: Any) -> Answer | None:
    """A ConverseStream answer, read by its API whatever the body was stored as; one ended by an
    exception event is an error answer, as an error status is."""
    if isinstance(body, str):
        body = body.encode("utf-8")
    if not isinstance(body, bytes):
        return None
    read = converse_stream(body)
    return None if read.error is not None else _bedrock_answer(read.response)


# how each chat API's answer is read: from JSON, and from a stream's events
_JSON_ANSWERS: dict[str, Callable[[Any], Answer | None]] = {
    "openai-responses": _responses_answer,
    "openai-chat": _chat_answer,
    "gemini": lambda body: _gemini_answer(body if isinstance(body, list) else [body]),
    # streamGenerateContent without alt=sse answers with one JSON array of its chunks
    "gemini-stream": lambda body: _gemini_answer(body if isinstance(body, list) else [body]),
    "cohere-chat": _cohere_answer,
    "anthropic-messages": _anthropic_answer,
    "bedrock-converse": _bedrock_answer,
}
_STREAM_ANSWERS: dict[str, Callable[[list[Any]], Answer | None]] = {
    "openai-responses": _responses_stream,
    "openai-chat": _chat_stream,
    "gemini": _gemini_answer,
    "gemini-stream": _gemini_answer,
    "cohere-chat": _cohere_stream,
    "anthropic-messages": _anthropic_stream,
}


def answer(exchange: Exchange) -> Answer | None:
    """What a chat response delivered (text, tool calls, usage); None for other traffic and for
    error answers."""
    api, body = exchange.api, exchange.response
    if api not in CHAT_APIS or exchange.status >= 400 or body is None:
        return None
    if api in BINARY_STREAM_APIS:
        return _bedrock_stream(body)
    if isinstance(body, str):  # a stream
        read_stream = _STREAM_ANSWERS.get(api)
        return read_stream([e for e in _events(body) if isinstance(e, dict)]) if read_stream else None
    read = _JSON_ANSWERS.get(api)
    if read is None or not isinstance(body, (list, dict)) or (isinstance(body, list) and not api.startswith("gemini")):
        return None
    return read(body)


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
