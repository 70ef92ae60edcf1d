"""Structured output: a pydantic model as each API's answer format, and the answer parsed back.

The OpenAI formats come from the SDK's own helpers (the ones ``responses.parse`` and
``chat.completions.parse`` use), so a body with ``output_schema`` carries the same strict
schema the SDK itself would send: every property required, ``additionalProperties: false``.
Gemini takes the model's JSON Schema as it is (``responseJsonSchema``, the same way our tools
go out as ``parameters_json_schema``). Claude's ``output_config.format`` carries the schema the
anthropic SDK's own ``transform_schema`` makes (what its ``messages.parse`` sends): closed
objects, unsupported keywords moved into descriptions.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from pydantic import BaseModel, ValidationError

from rag_core._optional import require
from rag_core.errors import StructuredOutputError

_OPENAI_FEATURE = "output_schema with rag_core's OpenAI models"


@functools.lru_cache(maxsize=64)
def _responses_format(schema: type[BaseModel]) -> str:
    parsing = require("openai.lib._parsing._responses", extra="agent", feature=_OPENAI_FEATURE, package="openai")
    return json.dumps(parsing.type_to_text_format_param(schema))


@functools.lru_cache(maxsize=64)
def _chat_format(schema: type[BaseModel]) -> str:
    parsing = require("openai.lib._parsing._completions", extra="agent", feature=_OPENAI_FEATURE, package="openai")
    return json.dumps(parsing.type_to_response_format_param(schema))


@functools.lru_cache(maxsize=64)
def _json_schema(schema: type[BaseModel]) -> str:
    return json.dumps(schema.model_json_schema())


@functools.lru_cache(maxsize=64)
def _claude_format(schema: type[BaseModel]) -> str:
    try:
        from anthropic import transform_schema
    except ImportError:
        from rag_core.providers.anthropic import anthropic_sdk

        sdk = anthropic_sdk()  # says which extra to install when the SDK is missing
        raise ImportError(f"output_schema with Claude needs anthropic>=0.77 (its transform_schema), and anthropic "
                          f"{getattr(sdk, '__version__', '?')} is installed: pip install -U 'rag-core[anthropic]'") from None
    return json.dumps({"type": "json_schema", "schema": transform_schema(schema)})


# cached as JSON text and loaded per request: a body is the caller's to change, a shared dict is not
def responses_text_format(schema: type[BaseModel]) -> dict[str, Any]:
    """The Responses API ``text.format``: ``{type: json_schema, strict: true, name, schema}``."""
    return json.loads(_responses_format(schema))


def chat_response_format(schema: type[BaseModel]) -> dict[str, Any]:
    """The Chat Completions ``response_format``: ``{type: json_schema, json_schema: {…, strict: true}}``."""
    return json.loads(_chat_format(schema))


def gemini_response_config(schema: type[BaseModel]) -> dict[str, Any]:
    """The Gemini ``generationConfig`` entries asking for JSON that follows the model's schema."""
    return {"responseMimeType": "application/json", "responseJsonSchema": json.loads(_json_schema(schema))}


def claude_output_format(schema: type[BaseModel]) -> dict[str, Any]:
    """The Messages API ``output_config.format``: ``{type: json_schema, schema}``."""
    return json.loads(_claude_format(schema))


def parse_structured(schema: type[BaseModel], raw: str | None) -> BaseModel:
    """The answer as an instance of ``schema``; a StructuredOutputError naming each problem otherwise."""
    if not raw or not raw.strip():
        raise StructuredOutputError(schema, raw, "the answer is empty")
    try:
        return schema.model_validate_json(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(answer)'}: {e['msg']}" for e in exc.errors()[:5])
        more = f" (and {len(exc.errors()) - 5} more)" if len(exc.errors()) > 5 else ""
        raise StructuredOutputError(schema, raw, problems + more) from None
