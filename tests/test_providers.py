"""The provider layer: one module per provider, and the harness's tables derived from it."""

from __future__ import annotations

import typing

import pytest

from rag_core.evals.credentials import detector
from rag_core.evals.golden import build
from rag_core.evals.recording import provider_env
from rag_core.providers import CHAT_APIS, PROVIDERS, api_of, by_name, provider_of_api

# a real request path of every API, as each provider's SDK sends it
PATHS = {
    "openai-chat": "/v1/chat/completions", "openai-responses": "/v1/responses", "openai-embeddings": "/v1/embeddings",
    "gemini": "/v1beta/models/gemini-2.5-flash:generateContent",
    "gemini-stream": "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    "gemini-embeddings": "/v1beta/models/gemini-embedding-001:batchEmbedContents",
    "cohere-chat": "/v2/chat", "cohere-embed": "/v2/embed", "cohere-rerank": "/v2/rerank",
    "anthropic-messages": "/v1/messages",
    "bedrock-converse": "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse",
    "bedrock-converse-stream": "/model/amazon.nova-lite-v1%3A0/converse-stream",
}


def test_every_api_a_provider_names_is_routed_to_it_and_nothing_else_is():
    named = {api for provider in PROVIDERS for api in provider.apis}
    assert named == set(PATHS)
    for api, path in PATHS.items():
        assert api_of("POST", path) == api
        assert api in provider_of_api(api).apis
    assert api_of("GET", "/v1/models") is None and api_of("POST", "/v1/files") is None
    assert set(CHAT_APIS) <= named


def test_the_harness_sets_a_dummy_for_every_provider_and_never_replaces_a_users_key():
    planned = provider_env.planned({}, "/scratch")
    for provider in PROVIDERS:
        assert any(planned.get(variable) for variable in provider.key_variables), provider.name
    mine = {provider.key_variables[-1]: f"user-{provider.name}" for provider in PROVIDERS}
    planned = provider_env.planned(mine, "/scratch")
    assert not set(planned) & set(mine)
    assert provider_env.KEY_VARIABLES == {provider.name: provider.key_variables for provider in PROVIDERS}


def test_the_case_models_providers_come_from_the_provider_layer():
    assert build.PROVIDER == {"openai-responses": "openai", "openai-chat": "openai", "gemini": "gemini",
                              "anthropic-messages": "anthropic"}


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda provider: provider.name)
def test_every_credential_header_a_provider_sends_is_scrubbed(provider):
    assert all(detector().scrub_header(header) for header in provider.credential_headers)


def test_a_missing_key_names_every_variable_the_sdk_reads(monkeypatch):
    from rag_core.errors import ModelProviderError
    from rag_core.providers.cohere import cohere_client

    pytest.importorskip("cohere")
    for variable in by_name("cohere").key_variables:
        monkeypatch.delenv(variable, raising=False)
    with pytest.raises(ModelProviderError, match="set CO_API_KEY or COHERE_API_KEY"):
        cohere_client(None, None, None, "CohereEmbedder")


def test_gemini_reads_the_key_the_sdk_prefers(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "second")
    monkeypatch.setenv("GOOGLE_API_KEY", "first")
    assert by_name("gemini").key_from_environment() == "first"


def test_every_api_of_the_providers_table_has_its_pieces():
    """A provider is four modules keyed by its APIs' names: ``providers/<name>.py`` (routes and
    keys), the core's model adapters it names, ``evals/wire/<family>.py`` (how its traffic reads)
    and ``evals/emulator/<family>.py`` (how the emulator answers its model calls). Every table the
    harness reads derives from ``PROVIDERS``: no API may lack its piece, and none may be read or
    answered that no provider routes."""
    from rag_core.evals.emulator.dialects import dialects
    from rag_core.evals.golden.case import ModelSpec
    from rag_core.evals.wire.traffic import readings
    from rag_core.providers import ADAPTED_APIS, CHAT_APIS, PROVIDERS, adapter_of
    from rag_core.models.base import Model

    routed = {api for provider in PROVIDERS for api in provider.apis}
    assert set(readings()) == routed
    assert set(dialects()) == set(CHAT_APIS)
    assert all(readings()[api].call is not None for api in CHAT_APIS)
    assert all(issubclass(adapter_of(api), Model) for api in ADAPTED_APIS)
    assert typing.get_args(ModelSpec.model_fields["api"].annotation) == ADAPTED_APIS
    for provider in PROVIDERS:
        assert set(provider.model_apis) <= set(provider.apis) and set(provider.adapters) <= set(provider.model_apis)
