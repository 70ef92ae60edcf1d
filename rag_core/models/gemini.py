"""Gemini adapter (``models/{id}:generateContent`` and ``:streamGenerateContent?alt=sse``).

The REST body is built by a pure function (``build_request``) in the API's own camelCase
shape: ``systemInstruction``, ``contents`` with ``user``/``model`` roles, tools as
``functionDeclarations`` (with ``parameters_json_schema``, so our JSON Schema goes out as is),
tool results as ``functionResponse`` parts in a user turn, and every ``thoughtSignature`` the
model sent echoed back on the part it came with. Transport goes through the official
google-genai SDK, which receives that body as its typed request and sends it unchanged
(a test checks the bytes on the wire against ``build_request``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, AsyncIterator, ClassVar, Iterator

from rag_core._optional import require
from rag_core.messages import Message, ModelResponse, ToolCall, Usage
from rag_core.models.base import Model, ReasoningDelta, StreamDone, StreamPart, TextDelta, get_field
from rag_core.models.structured import gemini_response_config
from rag_core.providers.gemini import gemini_client, translate_gemini_error

if TYPE_CHECKING:
    from pydantic import BaseModel

    from rag_core.tools.function import Function

SIGNATURE = "thought_signature"


def gemini_tools(tools: list[Function]) -> list[dict[str, Any]]:
    declarations = []
    for fn in tools:
        declaration: dict[str, Any] = {"name": fn.name}
        if fn.description is not None:
            declaration["description"] = fn.description
        # the SDK sends this field under its proto name (the API accepts both spellings)
        declaration["parameters_json_schema"] = fn.parameters
        declarations.append(declaration)
    return [{"functionDeclarations": declarations}] if declarations else []


def _arguments(raw: str) -> Any:
    try:
        return json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return {"_raw": raw}  # keep what the model sent; it was answered with an error anyway


def gemini_contents(messages: list[Message]) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """(systemInstruction, contents). Consecutive tool results share one user turn."""
    system: dict[str, Any] | None = None
    contents: list[dict[str, Any]] = []
    # a functionResponse carries the id of its functionCall only when Gemini gave the call one
    provider_ids = {c.id: c.provider_data["id"] for m in messages for c in m.tool_calls if c.provider_data.get("id")}
    for m in messages:
        if m.role == "system":
            system = {"parts": [{"text": m.content or ""}]}
        elif m.role == "user":
            contents.append({"role": "user", "parts": [{"text": m.content or ""}]})
        elif m.role == "assistant":
            parts: list[dict[str, Any]] = []
            if m.content:
                part: dict[str, Any] = {"text": m.content}
                if m.provider_data.get(SIGNATURE):
                    part["thoughtSignature"] = m.provider_data[SIGNATURE]
                parts.append(part)
            for call in m.tool_calls:
                function_call: dict[str, Any] = {"name": call.name, "args": _arguments(call.arguments)}
                if call.provider_data.get("id"):
                    function_call["id"] = call.provider_data["id"]
                part = {"functionCall": function_call}
                if call.provider_data.get(SIGNATURE):
                    part["thoughtSignature"] = call.provider_data[SIGNATURE]
                parts.append(part)
            contents.append({"role": "model", "parts": parts or [{"text": ""}]})
        elif m.role == "tool":
            response: dict[str, Any] = {"name": m.tool_name, "response": {"result": m.content or ""}}
            if m.tool_call_id in provider_ids:
                response["id"] = provider_ids[m.tool_call_id]
            part = {"functionResponse": response}
            if contents and contents[-1]["role"] == "user" and "functionResponse" in contents[-1]["parts"][0]:
                contents[-1]["parts"].append(part)
            else:
                contents.append({"role": "user", "parts": [part]})
    return system, contents


@dataclass(kw_only=True)
class Gemini(Model):
    provider: ClassVar[str] = "gemini"

    id: str = "gemini-3-flash-preview"
    api_key: str | None = None
    base_url: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_output_tokens: int | None = None
    thinking_budget: int | None = None
    request_params: dict[str, Any] = field(default_factory=dict)  # merged into generationConfig
    timeout: float | None = None  # seconds per request (the SDK's default when None)
    _client: Any = field(default=None, init=False, repr=False, compare=False)

    # ------------------------------------------------------------------ request (pure)
    def build_request(self, messages: list[Message], tools: list[Function], *, stream: bool = False,
                      output_schema: type[BaseModel] | None = None) -> dict[str, Any]:
        """The REST body. ``stream`` changes the endpoint, not the body."""
        system, contents = gemini_contents(messages)
        body: dict[str, Any] = {"contents": contents}
        if system is not None:
            body["systemInstruction"] = system
        declared = gemini_tools(tools)
        if declared:
            body["tools"] = declared
        generation: dict[str, Any] = {}
        for key, name in (("temperature", "temperature"), ("top_p", "topP"), ("max_output_tokens", "maxOutputTokens")):
            value = getattr(self, key)
            if value is not None:
                generation[name] = value
        if self.thinking_budget is not None:
            generation["thinkingConfig"] = {"thinkingBudget": self.thinking_budget}
        if output_schema is not None:
            generation.update(gemini_response_config(output_schema))
        generation.update(self.request_params)
        body["generationConfig"] = generation  # the SDK always sends it, empty or not
        return body

    # ------------------------------------------------------------------ transport
    def client(self) -> Any:
        if self._client is None:
            self._client = gemini_client(self.api_key, self.base_url, "the Gemini model", timeout=self.timeout)
        return self._client

    def _sdk_arguments(self, request: dict[str, Any]) -> dict[str, Any]:
        """Our REST body as the SDK's typed arguments (JSON-mode validation decodes base64 bytes)."""
        types = require("google.genai.types", extra="gemini", feature="rag_core's Gemini model", package="google-genai")

        config: dict[str, Any] = dict(request.get("generationConfig", {}))
        if "systemInstruction" in request:
            config["systemInstruction"] = request["systemInstruction"]
        if "tools" in request:
            config["tools"] = request["tools"]
        config["automaticFunctionCalling"] = {"disable": True}
        return {
            "model": self.id,
            "contents": [types.Content.model_validate_json(json.dumps(c)) for c in request["contents"]],
            "config": types.GenerateContentConfig.model_validate_json(json.dumps(config)),
        }

    def invoke(self, request: dict[str, Any]) -> ModelResponse:
        try:
            reply = self.client().models.generate_content(**self._sdk_arguments(request))
        except Exception as exc:
            raise translate_gemini_error(exc) from exc
        return parse_gemini_response(reply)

    async def ainvoke(self, request: dict[str, Any]) -> ModelResponse:
        try:
            reply = await self.client().aio.models.generate_content(**self._sdk_arguments(request))
        except Exception as exc:
            raise translate_gemini_error(exc) from exc
        return parse_gemini_response(reply)

    def invoke_stream(self, request: dict[str, Any]) -> Iterator[StreamPart]:
        accumulator = GeminiStreamAccumulator()
        try:
            for chunk in self.client().models.generate_content_stream(**self._sdk_arguments(request)):
                yield from accumulator.feed(chunk)
        except Exception as exc:
            raise translate_gemini_error(exc) from exc
        yield StreamDone(accumulator.result())

    async def ainvoke_stream(self, request: dict[str, Any]) -> AsyncIterator[StreamPart]:
        accumulator = GeminiStreamAccumulator()
        try:
            async for chunk in await self.client().aio.models.generate_content_stream(**self._sdk_arguments(request)):
                for part in accumulator.feed(chunk):
                    yield part
        except Exception as exc:
            raise translate_gemini_error(exc) from exc
        yield StreamDone(accumulator.result())


# ---------------------------------------------------------------------- parsing
def _signature(part: Any) -> str | None:
    value = get_field(part, "thought_signature") or get_field(part, "thoughtSignature")
    if value is None:
        return None
    if isinstance(value, bytes):
        import base64

        return base64.urlsafe_b64encode(value).decode()  # the alphabet the SDK writes on the wire
    return str(value)


def parse_usage(metadata: Any) -> Usage:
    if metadata is None:
        return Usage()

    def value(*names: str) -> int:
        for name in names:
            found = get_field(metadata, name)
            if found is not None:
                return int(found)
        return 0

    prompt = value("prompt_token_count", "promptTokenCount")
    output = value("candidates_token_count", "candidatesTokenCount")
    thoughts = value("thoughts_token_count", "thoughtsTokenCount")
    return Usage(
        input_tokens=prompt,
        output_tokens=output + thoughts,
        total_tokens=value("total_token_count", "totalTokenCount") or prompt + output + thoughts,
        cached_tokens=value("cached_content_token_count", "cachedContentTokenCount"),
        reasoning_tokens=thoughts,
    )


class GeminiStreamAccumulator:
    """Collects parts across chunks (text pieces, function calls, signatures) and the last usage."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.thoughts: list[str] = []
        self.calls: list[ToolCall] = []
        self.text_signature: str | None = None
        self.usage = Usage()
        self.response_id: str | None = None
        self.model: str | None = None

    def feed(self, chunk: Any) -> Iterator[StreamPart]:
        self.response_id = get_field(chunk, "response_id") or get_field(chunk, "responseId") or self.response_id
        self.model = get_field(chunk, "model_version") or get_field(chunk, "modelVersion") or self.model
        metadata = get_field(chunk, "usage_metadata") or get_field(chunk, "usageMetadata")
        if metadata is not None:
            self.usage = parse_usage(metadata)
        for candidate in (get_field(chunk, "candidates") or [])[:1]:
            content = get_field(candidate, "content")
            for part in get_field(content, "parts") or [] if content is not None else []:
                call = get_field(part, "function_call") or get_field(part, "functionCall")
                text = get_field(part, "text")
                signature = _signature(part)
                if call is not None:
                    data: dict[str, Any] = {}
                    if get_field(call, "id"):
                        data["id"] = get_field(call, "id")
                    if signature:
                        data[SIGNATURE] = signature
                    self.calls.append(ToolCall(
                        id=get_field(call, "id") or f"gemini-call-{len(self.calls) + 1}",
                        name=get_field(call, "name"),
                        arguments=json.dumps(get_field(call, "args") or {}, ensure_ascii=False, separators=(",", ":")),
                        provider_data=data,
                    ))
                elif text is not None:
                    if get_field(part, "thought"):
                        self.thoughts.append(text)
                        yield ReasoningDelta(text)
                    else:
                        self.texts.append(text)
                        if text:
                            yield TextDelta(text)
                    if signature:
                        self.text_signature = signature

    def result(self) -> ModelResponse:
        data = {SIGNATURE: self.text_signature} if self.text_signature else {}
        return ModelResponse(
            content="".join(self.texts) if self.texts else None,
            tool_calls=self.calls,
            usage=self.usage,
            response_id=self.response_id,
            model=self.model,
            reasoning="".join(self.thoughts) or None,
            provider_data=data,
        )


def parse_gemini_response(response: Any) -> ModelResponse:
    """Parse a ``GenerateContentResponse`` (SDK object or REST JSON) into a ModelResponse."""
    accumulator = GeminiStreamAccumulator()
    for _ in accumulator.feed(response):
        pass
    return accumulator.result()
