"""One module per provider: where its requests go, which API a request path belongs to, which
variables hold its key and endpoint, the SDK clients the core builds, and its errors.

The harness derives its tables from ``PROVIDERS`` (the dummy keys a case's environment gets, the
API each recorded request is read as, the SDK versions a cassette names, the model adapter a
golden case may name); adding a provider is one module here (and its entry in ``PROVIDERS``), its
model adapter in ``rag_core.models`` and, named by its ``family``, its wire reading
(``rag_core/evals/wire/<family>.py``) and emulator dialect (``rag_core/evals/emulator/<family>.py``).
Nothing here imports an SDK until a client is built.
"""

from __future__ import annotations

from rag_core.providers.anthropic import ANTHROPIC
from rag_core.providers.azure import AZURE_OPENAI
from rag_core.providers.base import Provider
from rag_core.providers.bedrock import BEDROCK
from rag_core.providers.cohere import COHERE
from rag_core.providers.gemini import GEMINI
from rag_core.providers.openai import OPENAI

__all__ = ["ADAPTED_APIS", "CHAT_APIS", "FAMILIES", "PROVIDERS", "Provider", "adapter_of", "api_of", "by_name", "provider_of_api"]

PROVIDERS: tuple[Provider, ...] = (OPENAI, AZURE_OPENAI, GEMINI, COHERE, ANTHROPIC, BEDROCK)
# every API whose requests are model calls: what the emulator's script answers and the wire
# reads as the conversation
CHAT_APIS: tuple[str, ...] = tuple(dict.fromkeys(api for provider in PROVIDERS for api in provider.model_apis))
# the model APIs the core has an adapter for (what a golden case's ``model.api`` may name), in order
ADAPTED_APIS: tuple[str, ...] = tuple(dict.fromkeys(api for provider in PROVIDERS for api in provider.adapters))
# the API families, each once: the name of a family's module in the wire readers and the emulator
FAMILIES: tuple[str, ...] = tuple(dict.fromkeys(provider.family for provider in PROVIDERS))


def by_name(name: str) -> Provider:
    return next(provider for provider in PROVIDERS if provider.name == name)


def api_of(method: str, path: str) -> str | None:
    """The API a request belongs to, or None for traffic the harness does not read (anything but
    a POST, or a path no provider routes)."""
    if method.upper() != "POST":
        return None
    return next((api for api in (provider.route(path) for provider in PROVIDERS) if api is not None), None)


def adapter_of(api: str) -> type:
    """The core's model adapter class for ``api`` (imported now)."""
    import importlib

    module, _, name = next(provider.adapters[api] for provider in PROVIDERS if api in provider.adapters).partition(":")
    return getattr(importlib.import_module(module), name)


def provider_of_api(api: str) -> Provider:
    """The provider whose requests ``api`` reads (OpenAI's, for the APIs Azure shares)."""
    return next(provider for provider in PROVIDERS if api in provider.apis)
