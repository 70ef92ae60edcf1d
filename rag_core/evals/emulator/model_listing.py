"""Replies of the model-listing endpoints, in each API's shape: OpenAI's and Anthropic's
``GET /v1/models`` and ``GET /v1/models/{id}``, Gemini's ``GET /v1beta/models`` and
``GET /v1beta/models/{name}``.

The emulator answers a model call to any model id, so retrieving any id describes that model; a
list names a fixed catalog of each provider's current models. Nothing depends on the clock: every
model was created at the emulator's fixed instant.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from rag_core.evals.emulator.openai_embeddings import DIMENSIONS as OPENAI_EMBEDDING_DIMENSIONS
from rag_core.evals.emulator.openai_responses import CREATED_AT

OPENAI_MODELS = ("gpt-5.2", "gpt-5-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4o", "gpt-4o-mini",
                 *OPENAI_EMBEDDING_DIMENSIONS)
ANTHROPIC_MODELS = {"claude-opus-4-6": "Claude Opus 4.6", "claude-sonnet-4-5-20250929": "Claude Sonnet 4.5",
                    "claude-haiku-4-5-20251001": "Claude Haiku 4.5"}
GEMINI_MODELS = {"gemini-3-pro-preview": "Gemini 3 Pro Preview", "gemini-2.5-pro": "Gemini 2.5 Pro",
                 "gemini-2.5-flash": "Gemini 2.5 Flash", "gemini-embedding-001": "Gemini Embedding 001"}
# CREATED_AT as the RFC 3339 text Anthropic's models carry
CREATED_AT_TEXT = datetime.fromtimestamp(CREATED_AT, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- OpenAI ---------------------------------------------------------------------------------------

def openai_model(model_id: str) -> dict[str, Any]:
    """A ``Model`` (``GET /v1/models/{id}``)."""
    return {"id": model_id, "object": "model", "created": CREATED_AT, "owned_by": "system"}


def openai_models() -> dict[str, Any]:
    """The list page of ``GET /v1/models`` (one page: the API does not paginate it)."""
    return {"object": "list", "data": [openai_model(model_id) for model_id in OPENAI_MODELS]}


# --- Anthropic ------------------------------------------------------------------------------------

def _supported(value: bool = True) -> dict[str, bool]:
    return {"supported": value}


# every capability the API reports, supported: the emulator answers whatever a request asks for
_CAPABILITIES: dict[str, Any] = {
    "batch": _supported(), "citations": _supported(), "code_execution": _supported(),
    "context_management": {"supported": True, "clear_thinking_20251015": _supported(),
                           "clear_tool_uses_20250919": _supported(), "compact_20260112": _supported()},
    "effort": {"supported": True, "low": _supported(), "medium": _supported(), "high": _supported(),
               "max": _supported(), "xhigh": _supported()},
    "image_input": _supported(), "pdf_input": _supported(),
    "server_tools": {"supported": True, "code_execution": _supported(), "web_search": _supported()},
    "structured_outputs": _supported(),
    "thinking": {"supported": True, "types": {"adaptive": _supported(), "between_tools": _supported(),
                                              "disabled": _supported(), "enabled": _supported()}},
}


def anthropic_model(model_id: str) -> dict[str, Any]:
    """A ``ModelInfo`` (``GET /v1/models/{model_id}``)."""
    return {"type": "model", "id": model_id, "display_name": ANTHROPIC_MODELS.get(model_id, model_id),
            "created_at": CREATED_AT_TEXT, "lifecycle": "active", "deprecated_at": None, "retires_at": None,
            "max_input_tokens": 200_000, "max_tokens": 64_000, "capabilities": _CAPABILITIES}


def anthropic_models() -> dict[str, Any]:
    """The page of ``GET /v1/models``: the whole catalog, so ``has_more`` is false."""
    data = [anthropic_model(model_id) for model_id in ANTHROPIC_MODELS]
    return {"data": data, "first_id": data[0]["id"], "last_id": data[-1]["id"], "has_more": False}


# --- Gemini ---------------------------------------------------------------------------------------

def gemini_model(name: str) -> dict[str, Any]:
    """A ``Model`` (``GET /v1beta/models/{name}``); ``name`` with or without its ``models/``."""
    model_id = name.removeprefix("models/")
    embedding = "embedding" in model_id
    model: dict[str, Any] = {
        "name": f"models/{model_id}", "version": "001", "displayName": GEMINI_MODELS.get(model_id, model_id),
        "description": f"{GEMINI_MODELS.get(model_id, model_id)}, as the rag-core emulator serves it",
        "inputTokenLimit": 2048 if embedding else 1_048_576, "outputTokenLimit": 1 if embedding else 65_536,
        "supportedGenerationMethods": (["embedContent", "countTextTokens", "countTokens", "asyncBatchEmbedContent"]
                                       if embedding else ["generateContent", "countTokens", "createCachedContent",
                                                          "batchGenerateContent"]),
    }
    if not embedding:
        model.update({"temperature": 1, "topP": 0.95, "topK": 64, "maxTemperature": 2, "thinking": True})
    return model


def gemini_models() -> dict[str, Any]:
    """The page of ``GET /v1beta/models``: the whole catalog, so no ``nextPageToken``."""
    return {"models": [gemini_model(model_id) for model_id in GEMINI_MODELS]}
