"""Azure OpenAI: the OpenAI APIs on a resource of one's own (the openai SDK's Azure clients,
built by ``providers.openai.OpenAIConnection`` when an Azure setting is given)."""

from __future__ import annotations

from rag_core.providers.base import Provider
from rag_core.providers.openai import route

AZURE_OPENAI = Provider(
    name="azure", key_variables=("AZURE_OPENAI_API_KEY",),
    endpoint_variables=("AZURE_OPENAI_ENDPOINT", "OPENAI_API_VERSION"),
    default_base_url="https://<resource>.openai.azure.com/openai",  # no default: the resource is the user's
    route=route,  # deployments' paths end as OpenAI's do
    model_apis=("openai-chat", "openai-responses"),
    apis=("openai-chat", "openai-responses", "openai-embeddings"), sdk_packages=("openai",),
    credential_headers=("api-key", "authorization"),
)
