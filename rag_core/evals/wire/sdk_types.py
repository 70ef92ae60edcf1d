"""Validate request bodies against the provider SDK's own request types."""

from __future__ import annotations

import base64
import binascii
import functools
import typing
from typing import Any, Callable
from urllib.parse import unquote

from pydantic import TypeAdapter

from rag_core.providers import api_of


@functools.cache
def _checker(params_type: Any) -> tuple[frozenset[str], TypeAdapter[Any]]:
    """The keys a params type knows and its validator, built once per process: building the
    validator of the Responses params takes about 80 ms, validating a body well under 1 ms."""
    return frozenset(typing.get_type_hints(params_type)), TypeAdapter(params_type)


def _validate(params_type: Any, body: dict[str, Any]) -> None:
    """Unknown top-level keys are errors too: pydantic ignores extra keys of a TypedDict,
    and a misspelt option must not pass."""
    known, adapter = _checker(params_type)
    unknown = set(body) - known
    if unknown:
        raise ValueError(f"keys the SDK does not know: {sorted(unknown)}")
    adapter.validate_python(body)


def validate_responses_body(body: dict[str, Any]) -> None:
    from openai.types.responses import response_create_params as p

    _validate(p.ResponseCreateParamsStreaming if body.get("stream") else p.ResponseCreateParamsNonStreaming, body)


def validate_chat_body(body: dict[str, Any]) -> None:
    from openai.types.chat import completion_create_params as p

    _validate(p.CompletionCreateParamsStreaming if body.get("stream") else p.CompletionCreateParamsNonStreaming, body)


def validate_gemini_body(body: dict[str, Any]) -> None:
    """Each part of a generateContent body against the google-genai types (which refuse unknown fields)."""
    import json

    from google.genai import types

    known = {"contents", "systemInstruction", "tools", "generationConfig", "toolConfig", "safetySettings"}
    unknown = set(body) - known
    if unknown:
        raise ValueError(f"keys the SDK does not know: {sorted(unknown)}")
    for content in body.get("contents", []):
        types.Content.model_validate_json(json.dumps(content))
    if "systemInstruction" in body:
        types.Content.model_validate_json(json.dumps(body["systemInstruction"]))
    for tool in body.get("tools", []):
        types.Tool.model_validate_json(json.dumps(tool))
    types.GenerationConfig.model_validate_json(json.dumps(body.get("generationConfig", {})))


def validate_anthropic_body(body: dict[str, Any]) -> None:
    from anthropic.types import message_create_params as p

    _validate(p.MessageCreateParamsStreaming if body.get("stream") else p.MessageCreateParamsNonStreaming, body)


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


def _bedrock(path: str, body: dict[str, Any]) -> None:
    model_id = unquote(path.rsplit("/model/", 1)[1].rsplit("/", 1)[0])
    validate_bedrock_body(body, stream=path.endswith("/converse-stream"), model_id=model_id)


# per API (``rag_core.providers.api_of``), how its bodies are checked; None: the SDKs build those
# bodies themselves (embeddings, rerank), not rag_core
VALIDATORS: dict[str, Callable[[str, dict[str, Any]], None] | None] = {
    "openai-responses": lambda _, body: validate_responses_body(body),
    "openai-chat": lambda _, body: validate_chat_body(body),
    "gemini": lambda _, body: validate_gemini_body(body),
    "gemini-stream": lambda _, body: validate_gemini_body(body),
    "anthropic-messages": lambda _, body: validate_anthropic_body(body),
    "bedrock-converse": _bedrock,
    "bedrock-converse-stream": _bedrock,
    "openai-embeddings": None, "gemini-embeddings": None, "cohere-embed": None, "cohere-rerank": None,
}


def validate_request(path: str, body: dict[str, Any]) -> None:
    """Validate a body by the API of the endpoint it goes to."""
    api = api_of("POST", path)
    if api not in VALIDATORS:
        raise ValueError(f"no SDK request type known for {path}")
    validator = VALIDATORS[api]
    if validator is not None:
        validator(path, body)
