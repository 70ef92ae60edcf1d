"""Anthropic Claude adapter (``POST /v1/messages``): Agno's ``agno.models.anthropic.Claude``.

The body is built by a pure function (``build_request``) in the Messages API's own shape:

* the system prompt goes in the top-level ``system`` as a one-block list, as Agno sends it (the
  block carries ``cache_control`` with ``cache_system_prompt``);
* user turns are lists of ``text`` blocks; an assistant turn is its thinking blocks, its text and
  its ``tool_use`` blocks; tool results are ``tool_result`` blocks in a user turn, and
  consecutive turns of one role are folded into one (several results, or results then a user
  message, share a user turn, as the API's alternating roles require);
* thinking blocks come back exactly as Claude sent them (with their ``signature``, or the
  ``data`` of a redacted one), in the place they had: before the text, or right before the
  ``tool_use`` they preceded. With thinking on, the API refuses a tool-use turn sent back without
  its thinking;
* tools are ``{name, description, input_schema}`` with the input schema in the shape Agno sends
  (closed objects, every property described), ``strict`` when the tool is;
* ``output_schema`` becomes ``output_config.format``: ``{type: json_schema, schema}``, the
  schema made by the SDK's own ``transform_schema`` (what ``messages.parse`` sends).

Transport goes through the official ``anthropic`` SDK's client (its auth headers, API version,
retries, timeouts, SSE decoding and error types), which posts the body exactly as built. The
SDK is imported on first use only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Iterator

from rag_core.messages import Message, ModelResponse, ToolCall, Usage
from rag_core.models.base import PostingModel, ReasoningDelta, StreamPart, TextDelta, get_field
from rag_core.models.structured import claude_output_format
from rag_core.providers._http import post_json
from rag_core.providers.anthropic import AnthropicConnection, anthropic_sdk, translate_claude_error

if TYPE_CHECKING:
    from pydantic import BaseModel

    from rag_core.tools.function import Function

# provider_data key, on an assistant message (blocks that came before its text, or not right
# before a tool call) and on a tool call (blocks that came right before it): the thinking and
# redacted_thinking blocks as they go back to the API
THINKING_BLOCKS = "thinking_blocks"
_THINKING_TYPES = ("thinking", "redacted_thinking")

# what Agno's Claude adds to the system message of an agent that has tools
TOOLS_SYSTEM_MESSAGE = "Do not reflect on the quality of the returned search results in your response\n\n"

# ---------------------------------------------------------------------- request (pure)
def _closed(schema: Any) -> Any:
    """A copy of a property schema where every object that lists properties refuses others."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    if "properties" in out:
        out["additionalProperties"] = False
    for key, value in out.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _closed(prop) for name, prop in value.items()}
        elif key == "items" and isinstance(value, dict):
            out[key] = _closed(value)
        elif key in ("anyOf", "allOf", "oneOf") and isinstance(value, list):
            out[key] = [_closed(v) for v in value]
    return out


def claude_input_schema(parameters: dict[str, Any]) -> dict[str, Any]:
    """The tool's ``input_schema``: type, properties (each with a description, empty if it has
    none), required, ``additionalProperties: false``, and the schema's ``$defs`` if any."""
    properties: dict[str, Any] = {}
    for name, prop in (parameters.get("properties") or {}).items():
        prop = _closed(prop)
        if isinstance(prop, dict) and "description" not in prop:
            prop = {**prop, "description": ""}
        properties[name] = prop
    schema: dict[str, Any] = {
        "type": parameters.get("type", "object"),
        "properties": properties,
        "required": list(parameters.get("required") or []),
        "additionalProperties": False,
    }
    for key in ("$defs", "definitions"):
        if key in parameters:
            schema[key] = parameters[key]
    return schema


def claude_tool(fn: Function) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": fn.name, "description": fn.description or "",
                            "input_schema": claude_input_schema(fn.parameters)}
    if fn.strict:
        tool["strict"] = True
    return tool


def _tool_input(raw: str) -> Any:
    try:
        value = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return {"_raw": raw}  # keep what the model sent; it was answered with an error anyway
    return value if isinstance(value, dict) else {"_raw": raw}


def _thinking(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [dict(block) for block in data.get(THINKING_BLOCKS) or []]


def _assistant_content(m: Message) -> list[dict[str, Any]]:
    content = _thinking(m.provider_data)
    if m.content and m.content.strip():
        content.append({"type": "text", "text": m.content})
    for call in m.tool_calls:
        content += _thinking(call.provider_data)
        content.append({"type": "tool_use", "id": call.id, "name": call.name, "input": _tool_input(call.arguments)})
    return content


def claude_messages(messages: list[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """(system, messages). System messages are joined with a space (as Agno joins them);
    an assistant turn with nothing to send is left out."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            system.append(m.content or "")
            continue
        if m.role == "assistant":
            role, content = "assistant", _assistant_content(m)
            if not content:
                continue
        elif m.role == "tool":
            role, content = "user", [{"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content or ""}]
        else:
            role, content = "user", [{"type": "text", "text": m.content or ""}]
        if out and out[-1]["role"] == role:
            earlier = out[-1]["content"]
            if role == "assistant":
                # the API checks an assistant turn's thinking against the one response it came
                # from: two responses can share a turn only without the earlier one's thinking
                earlier = [b for b in earlier if b.get("type") not in _THINKING_TYPES]
            out[-1] = {"role": role, "content": [*earlier, *content]}
        else:
            out.append({"role": role, "content": content})
    joined = " ".join(system)
    return (joined or None), out


@dataclass(kw_only=True)
class Claude(PostingModel, AnthropicConnection):
    """Claude through Anthropic's Messages API, with Agno's constructor arguments.

    Request: ``id``, ``max_tokens`` (8192 unless given; the API requires one), ``temperature``,
    ``top_p``, ``top_k``, ``stop_sequences``, ``thinking`` (the API's object, e.g.
    ``{"type": "enabled", "budget_tokens": 2048}`` or ``{"type": "adaptive"}``), ``output_config``
    (e.g. ``{"effort": "high"}``; an ``output_schema`` adds its ``format``),
    ``cache_system_prompt`` (the system prompt as a block with ``cache_control: ephemeral``),
    ``extended_cache_time`` (that cache for 1h), ``cache_tools`` (``cache_control`` on the last
    tool), ``betas`` (sent as the ``anthropic-beta`` header), ``request_params`` (merged into
    the body last).

    Client: ``api_key`` (else ``ANTHROPIC_API_KEY``), ``auth_token`` (else
    ``ANTHROPIC_AUTH_TOKEN``, sent as a bearer token), ``base_url``, ``timeout`` (seconds),
    ``max_retries``, ``default_headers``, ``http_client`` (a sync or async client of the
    SDK's HTTP library: httpx2 from anthropic 1.0 on, httpx before), ``client_params`` (any other argument of the SDK's
    client, e.g. ``{"credentials": ...}``). Clients are built on first use.

    Not supported (Agno has them): ``system_prompt_blocks``, ``mcp_servers``, ``skills``,
    ``context_management``, citations of documents, media in messages, server tools' blocks in
    replies. Unlike Agno, the sampling parameters and a thinking budget are sent as given
    whatever the model id (Agno drops or rewrites them for models that refuse them; here the
    API's refusal comes back as a ModelProviderError).
    """

    provider: ClassVar[str] = "anthropic"

    id: str = "claude-sonnet-5-5"
    max_tokens: int | None = 8192
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    stop_sequences: list[str] | None = None
    thinking: dict[str, Any] | None = None
    output_config: dict[str, Any] | None = None
    cache_system_prompt: bool = False
    extended_cache_time: bool = False
    cache_tools: bool = False
    betas: list[str] | None = None
    request_params: dict[str, Any] = field(default_factory=dict)


    # ------------------------------------------------------------------ request (pure)
    def build_request(self, messages: list[Message], tools: list[Function], *, stream: bool = False,
                      output_schema: type[BaseModel] | None = None) -> dict[str, Any]:
        """The JSON body, its keys in the order the SDK's ``messages.create`` writes them (the
        sampling parameters last: SDK 1.0 and later take them only as extra body)."""
        system, conversation = claude_messages(messages)
        body: dict[str, Any] = {}
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        body["messages"] = conversation
        body["model"] = self.id
        output_config = dict(self.output_config or {})
        if output_schema is not None:
            output_config["format"] = claude_output_format(output_schema)
        if output_config:
            body["output_config"] = output_config
        if self.stop_sequences:
            body["stop_sequences"] = list(self.stop_sequences)
        if stream:
            body["stream"] = True
        if system is not None:
            block: dict[str, Any] = {"text": system, "type": "text"}  # Agno's key order: the bytes match
            if self.cache_system_prompt:
                cache: dict[str, str] = {"type": "ephemeral"}
                if self.extended_cache_time:
                    cache["ttl"] = "1h"
                block["cache_control"] = cache
            body["system"] = [block]
        if self.thinking:
            body["thinking"] = dict(self.thinking)
        if tools:
            body["tools"] = [claude_tool(f) for f in tools]
            if self.cache_tools:
                body["tools"][-1]["cache_control"] = {"type": "ephemeral"}
        for key in ("temperature", "top_p", "top_k"):
            value = getattr(self, key)
            if value is not None:
                body[key] = value
        body.update(self.request_params)
        return body

    def get_system_message_for_model(self, tools: list[Function]) -> str | None:
        """What Agno's Claude adds to an agent's system message when the agent has tools."""
        return TOOLS_SYSTEM_MESSAGE if tools else None

    # ------------------------------------------------------------------ transport
    def _post(self, request: dict[str, Any], asynchronous: bool = False) -> Any:
        """Send ``request`` as built through the SDK client, as the same bytes on every SDK release
        (``post_json``), and get the reply as plain JSON (stream events too: the parsers read
        plain JSON and SDK objects alike)."""
        anthropic = anthropic_sdk()
        if asynchronous:
            client, stream_type = self.async_client(), anthropic.AsyncStream
        else:
            client, stream_type = self.client(), anthropic.Stream
        options: dict[str, Any] = {"headers": {"anthropic-beta": ",".join(self.betas)}} if self.betas else {}
        return post_json(client, "/v1/messages", request, options=options, stream=bool(request.get("stream")),
                         stream_cls=stream_type[object])

    def _parse(self, reply: Any) -> ModelResponse:
        return parse_claude_response(reply)

    def _accumulator(self) -> ClaudeStreamAccumulator:
        return ClaudeStreamAccumulator()

    def _translate(self, exc: Exception) -> Exception:
        return translate_claude_error(exc)


# ---------------------------------------------------------------------- parsing
def parse_claude_usage(usage: Any) -> Usage:
    """Input counts the cached prompt too (written to and read from the cache), so input plus
    output is the total; ``cached_tokens`` is the part read from the cache."""
    if usage is None:
        return Usage()

    def value(obj: Any, name: str) -> int:
        return int(get_field(obj, name) or 0)

    read = value(usage, "cache_read_input_tokens")
    prompt = value(usage, "input_tokens") + value(usage, "cache_creation_input_tokens") + read
    output = value(usage, "output_tokens")
    details = get_field(usage, "output_tokens_details")
    return Usage(input_tokens=prompt, output_tokens=output, total_tokens=prompt + output, cached_tokens=read,
                 reasoning_tokens=value(details, "thinking_tokens") if details is not None else 0)


def _kept_thinking(block: Any) -> dict[str, Any]:
    """A thinking block as it goes back to the API."""
    if get_field(block, "type") == "redacted_thinking":
        return {"type": "redacted_thinking", "data": get_field(block, "data")}
    return {"type": "thinking", "thinking": get_field(block, "thinking") or "",
            "signature": get_field(block, "signature") or ""}


def _arguments_text(block: Any) -> str:
    raw = get_field(block, "_json")
    if raw is None or not raw.strip():
        value = get_field(block, "input") or {}
    else:
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            return raw  # a malformed stream: the executor answers the model with the error
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def claude_response(blocks: list[Any], stop_reason: str | None, usage: Usage, response_id: str | None,
                    model: str | None) -> ModelResponse:
    """A ModelResponse from a reply's content blocks (SDK objects or plain JSON)."""
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[ToolCall] = []
    leading: list[dict[str, Any]] = []  # thinking that did not come right before a tool call
    waiting: list[dict[str, Any]] = []
    for block in blocks:
        kind = get_field(block, "type")
        if kind in _THINKING_TYPES:
            if kind == "thinking" and get_field(block, "thinking"):
                thoughts.append(get_field(block, "thinking"))
            waiting.append(_kept_thinking(block))
        elif kind == "text":
            texts.append(get_field(block, "text") or "")
            leading += waiting
            waiting = []
        elif kind == "tool_use" and stop_reason != "max_tokens":  # a call cut off by max_tokens is not run
            data = {THINKING_BLOCKS: waiting} if waiting else {}
            calls.append(ToolCall(id=get_field(block, "id"), name=get_field(block, "name"),
                                  arguments=_arguments_text(block), provider_data=data))
            waiting = []
    leading += waiting
    return ModelResponse(
        content="".join(texts) if texts else None,
        tool_calls=calls,
        usage=usage,
        response_id=response_id,
        model=model,
        reasoning="\n\n".join(thoughts) or None,
        provider_data={THINKING_BLOCKS: leading} if leading else {},
    )


def parse_claude_response(message: Any) -> ModelResponse:
    """Parse a Messages API ``Message`` (SDK object or plain JSON) into a ModelResponse."""
    return claude_response(get_field(message, "content") or [], get_field(message, "stop_reason"),
                           parse_claude_usage(get_field(message, "usage")), get_field(message, "id"),
                           get_field(message, "model"))


class ClaudeStreamAccumulator:
    """Assembles the stream's events: blocks by index (text, thinking and its signature, tool
    input JSON), the stop reason, and the usage of ``message_start`` updated by ``message_delta``."""

    def __init__(self) -> None:
        self.blocks: dict[int, dict[str, Any]] = {}
        self.usage: dict[str, Any] = {}
        self.stop_reason: str | None = None
        self.response_id: str | None = None
        self.model: str | None = None

    def feed(self, event: Any) -> Iterator[StreamPart]:
        kind = get_field(event, "type")
        if kind == "content_block_delta":
            block = self.blocks.setdefault(get_field(event, "index", 0), {"type": "text", "text": ""})
            delta = get_field(event, "delta")
            delta_type = get_field(delta, "type")
            if delta_type == "text_delta":
                text = get_field(delta, "text") or ""
                block["text"] = (block.get("text") or "") + text
                if text:
                    yield TextDelta(text)
            elif delta_type == "thinking_delta":
                text = get_field(delta, "thinking") or ""
                block["thinking"] = (block.get("thinking") or "") + text
                if text:
                    yield ReasoningDelta(text)
            elif delta_type == "signature_delta":
                block["signature"] = get_field(delta, "signature")
            elif delta_type == "input_json_delta":
                block["_json"] = (block.get("_json") or "") + (get_field(delta, "partial_json") or "")
        elif kind == "content_block_start":
            start = get_field(event, "content_block")
            block = dict(start) if isinstance(start, dict) else start.model_dump()
            self.blocks[get_field(event, "index", 0)] = block
            if block.get("type") == "text" and block.get("text"):
                yield TextDelta(block["text"])
            elif block.get("type") == "thinking" and block.get("thinking"):
                yield ReasoningDelta(block["thinking"])
        elif kind == "message_start":
            message = get_field(event, "message")
            self.response_id = get_field(message, "id")
            self.model = get_field(message, "model")
            self._update_usage(get_field(message, "usage"))
        elif kind == "message_delta":
            self.stop_reason = get_field(get_field(event, "delta"), "stop_reason") or self.stop_reason
            self._update_usage(get_field(event, "usage"))

    def _update_usage(self, usage: Any) -> None:
        if usage is None:
            return
        fields = usage if isinstance(usage, dict) else usage.model_dump()
        self.usage.update({k: v for k, v in fields.items() if v is not None})

    def result(self) -> ModelResponse:
        blocks = [self.blocks[i] for i in sorted(self.blocks)]
        return claude_response(blocks, self.stop_reason, parse_claude_usage(self.usage), self.response_id, self.model)
