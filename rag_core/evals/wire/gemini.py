"""The Gemini API on the wire: ``…/models/<m>:generateContent`` and ``:streamGenerateContent``,
embeddings (``:batchEmbedContents``, ``:embedContent``)."""

from __future__ import annotations

import json
import re
from typing import Any

from rag_core.evals.wire import parts
from rag_core.evals.wire.exchange import Answer, ApiReading, Body, ModelCall


def _contents(body: Body) -> list[dict[str, Any]]:
    return parts.dict_items(body.get("contents"))


def prefix(body: Body) -> dict[str, Any]:
    return {"system": body.get("systemInstruction", body.get("system_instruction")), "tools": body.get("tools")}


def system_prompt(body: Body) -> str | None:
    return parts.joined([parts.text_of(prefix(body)["system"])])


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


def _tool_object(tool: dict[str, Any]) -> list[dict[str, Any]]:
    """A Gemini tool object: function declarations and built-in tools side by side."""
    found = []
    for key, value in tool.items():
        if key in ("functionDeclarations", "function_declarations"):
            found += [_json_schema_types(parts.neutral_tool(d)) for d in value or [] if isinstance(d, dict)]
        elif value is not None:
            found.append({"type": _camel(key)})
    return found


def tools(body: Body) -> list[dict[str, Any]]:
    """The function declarations of every tool object (``tools`` may be one object rather than a
    list), flattened, and built-in tools (search, code execution) under their names."""
    listed = body.get("tools")
    listed = [listed] if isinstance(listed, dict) else listed if isinstance(listed, list) else []
    return [found for tool in listed if isinstance(tool, dict) for found in _tool_object(tool)]


def tool_outputs(body: Body) -> list[str]:
    """The ``functionResponse`` parts' responses, in order."""
    return [parts.dumped(part["functionResponse"].get("response")) for content in _contents(body)
            for part in content.get("parts") or []
            if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict)]


def answer(chunks: list[Any]) -> Answer:
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
                  parts.usage(parts.total(usage.get("promptTokenCount"), usage.get("toolUsePromptTokenCount")),
                              parts.total(usage.get("candidatesTokenCount"), usage.get("thoughtsTokenCount")),
                              usage.get("totalTokenCount")))


def _json_answer(body: Any) -> Answer:
    """One response, or (``streamGenerateContent`` without ``alt=sse``) a JSON array of its chunks."""
    return answer(body if isinstance(body, list) else [body])


def validate_body(body: Body) -> None:
    """Each part of a generateContent body against the google-genai types (which refuse unknown fields)."""
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


_CALL = ModelCall(prefix, system_prompt, lambda body: parts.last_user_text(_contents(body)), tools, tool_outputs,
                  _json_answer, answer, json_lists=True)

READINGS = {
    "gemini": ApiReading(_CALL, price=("google", "default"), validate=lambda _, body: validate_body(body)),
    "gemini-stream": ApiReading(_CALL, price=("google", "default"), validate=lambda _, body: validate_body(body)),
    "gemini-embeddings": ApiReading(),
}
