"""AWS Bedrock's Converse APIs on the wire: ``…/model/<modelId>/converse`` and
``…/model/<modelId>/converse-stream``, whose successful answer is AWS's binary event stream. That
one is read by its API (the path), as botocore reads it, whether or not the recording kept its
content type."""

from __future__ import annotations

import base64
import json
import binascii
import functools
from dataclasses import dataclass
from typing import Any, Iterator, NamedTuple
from urllib.parse import unquote

from rag_core._optional import require
from rag_core.evals.wire import parts
from rag_core.evals.wire.exchange import Answer, ApiReading, Body, ModelCall

# the ``toolUse`` type of a tool Bedrock runs itself; a tool call marked with it ran at the provider
SERVER_TOOL_USE = "server_tool_use"


def _messages(body: Body) -> list[dict[str, Any]]:
    return parts.dict_items(body.get("messages"))


def _declared_tools(body: Body) -> Any:
    config = body.get("toolConfig")
    return config.get("tools") if isinstance(config, dict) else None


def prefix(body: Body) -> dict[str, Any]:
    return {"system": body["system"] if "system" in body else parts.leading_system(body.get("messages") or []),
            "tools": _declared_tools(body)}


def system_prompt(body: Body) -> str | None:
    """``system``: text blocks."""
    return parts.joined([parts.text_of(body.get("system"))])


def _tool(tool: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry of ``toolConfig.tools``: a ``toolSpec`` in the neutral shape, a provider-defined
    ``systemTool`` by its name, nothing for a ``cachePoint`` (a cache marker, not a tool)."""
    if isinstance(tool.get("toolSpec"), dict):
        spec = tool["toolSpec"]
        out = {"name": spec.get("name")}
        if spec.get("description") is not None:
            out["description"] = spec["description"]
        schema = spec.get("inputSchema")
        if isinstance(schema, dict) and "json" in schema:
            out["parameters"] = schema["json"]
        return [out]
    if isinstance(tool.get("systemTool"), dict):
        return [{"type": "systemTool", "name": tool["systemTool"].get("name")}]
    return []


def tools(body: Body) -> list[dict[str, Any]]:
    listed = _declared_tools(body)
    return [found for tool in listed if isinstance(tool, dict) for found in _tool(tool)] if isinstance(listed, list) else []


def tool_outputs(body: Body) -> list[str]:
    """The ``toolResult`` blocks (their text and JSON parts), in order."""
    found: list[str] = []
    for message in _messages(body):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and isinstance(block.get("toolResult"), dict):
                pieces = [p["text"] if isinstance(p.get("text"), str) else json.dumps(p["json"], ensure_ascii=False)
                          for p in block["toolResult"].get("content") or []
                          if isinstance(p, dict) and (isinstance(p.get("text"), str) or "json" in p)]
                found += ["".join(pieces)] if pieces else []
    return found


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
        call = {"name": use.get("name"), "arguments": parts.arguments(use.get("input"))}
        if use.get("type") == SERVER_TOOL_USE:
            call["type"] = SERVER_TOOL_USE
            result = results.get(use.get("toolUseId"))
            if result is not None:
                call["result"] = {key: value for key, value in result.items() if key != "toolUseId"}
        calls.append(call)
    return calls


def bedrock_answer(response: dict[str, Any]) -> Answer:
    """A Bedrock Converse answer: ``output.message.content`` (text blocks, ``toolUse`` blocks, a
    server tool's marked as such); input counts cache writes and reads, as ``totalTokens`` does."""
    message = (response.get("output") or {}).get("message") or {}
    content = message.get("content") if isinstance(message.get("content"), list) else []
    texts = [block["text"] for block in content if isinstance(block, dict) and isinstance(block.get("text"), str)]
    usage = response.get("usage") or {}
    inputs = parts.total(usage.get("inputTokens"), usage.get("cacheReadInputTokens"), usage.get("cacheWriteInputTokens"))
    return Answer("".join(texts) if texts else None, _bedrock_calls(content),
                  parts.usage(inputs, usage.get("outputTokens"), usage.get("totalTokens")))


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
            blocks[index]["toolUse"]["input"] = parts.arguments(raw)
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return ConverseStreamRead(response, error)


def stream_answer(body: Any) -> Answer | None:
    """A ConverseStream answer, read by its API whatever the body was stored as; one ended by an
    exception event is an error answer, as an error status is."""
    if isinstance(body, str):
        body = body.encode("utf-8")
    if not isinstance(body, bytes):
        return None
    read = converse_stream(body)
    return None if read.error is not None else bedrock_answer(read.response)


@functools.cache
def _bedrock_input(operation: str) -> Any:
    """The input shape of a ``bedrock-runtime`` operation in botocore's service model (loaded once)."""
    import botocore.session

    return botocore.session.get_session().get_service_model("bedrock-runtime").operation_model(operation).input_shape


def _from_wire(shape: Any, value: Any, where: str = "input") -> Any:
    """A rest-json body as the parameters botocore would have serialised it from: blobs (image and
    document bytes) back from base64, members by their Python name. What does not fit the shape is
    left as it is, for the validator to name; a blob that is not base64 is named here (botocore's
    validator takes any ``str`` for a blob, as it encodes one itself)."""
    if shape.type_name == "structure" and isinstance(value, dict) and not shape.is_document_type:
        names = {member.serialization.get("name", name): name for name, member in shape.members.items()}
        return {names.get(key, key): _from_wire(shape.members[names[key]], item, f"{where}.{names[key]}")
                if key in names else item for key, item in value.items()}
    if shape.type_name == "list" and isinstance(value, list):
        return [_from_wire(shape.member, item, f"{where}[{index}]") for index, item in enumerate(value)]
    if shape.type_name == "map" and isinstance(value, dict):
        return {key: _from_wire(shape.value, item, f"{where}.{key}") for key, item in value.items()}
    if shape.type_name == "blob" and isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except binascii.Error:
            raise ValueError(f"{where.removeprefix('input.')}: a blob must be sent as base64") from None
    return value


def validate_bedrock_body(body: dict[str, Any], *, stream: bool = False, model_id: str = "model") -> None:
    """A Converse (or ConverseStream) body against botocore's ``bedrock-runtime`` service model,
    with botocore's own ``ParamValidator`` (unknown keys, missing required members, wrong types,
    a content block that sets more or less than one member). The model id travels in the path."""
    from botocore.validate import ParamValidator

    shape = _bedrock_input("ConverseStream" if stream else "Converse")
    if "modelId" in body:
        raise ValueError("keys the SDK does not know: ['modelId'] (the model id travels in the path)")
    report = ParamValidator().validate({**_from_wire(shape, body), "modelId": model_id}, shape)
    if report.has_errors():
        raise ValueError(report.generate_report())



def _validate(path: str, body: Body) -> None:
    model_id = unquote(path.rsplit("/model/", 1)[1].rsplit("/", 1)[0])
    validate_bedrock_body(body, stream=path.endswith("/converse-stream"), model_id=model_id)


READINGS = {
    "bedrock-converse": ApiReading(
        ModelCall(prefix, system_prompt, lambda body: parts.last_user_text(_messages(body)), tools, tool_outputs,
                  lambda body: bedrock_answer(body) if isinstance(body, dict) else None),
        price=("aws", "default"), validate=_validate),
    "bedrock-converse-stream": ApiReading(
        ModelCall(prefix, system_prompt, lambda body: parts.last_user_text(_messages(body)), tools, tool_outputs,
                  lambda body: None, binary_stream=stream_answer),
        price=("aws", "default"), validate=_validate),
}
