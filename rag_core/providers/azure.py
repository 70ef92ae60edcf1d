"""Azure OpenAI: the OpenAI APIs on a resource of one's own (the openai SDK's Azure clients,
built by ``providers.openai.OpenAIConnection`` when an Azure setting is given)."""

from __future__ import annotations

from urllib.parse import quote

from rag_core.providers.base import Provider
from rag_core.providers._openai_apis import route

AZURE_OPENAI = Provider(
    name="azure", key_variables=("AZURE_OPENAI_API_KEY",),
    endpoint_variables=("AZURE_OPENAI_ENDPOINT", "OPENAI_API_VERSION"),
    default_base_url="https://<resource>.openai.azure.com/openai",  # no default: the resource is the user's
    route=route, family="openai",  # deployments' paths end as OpenAI's do
    model_apis=("openai-chat", "openai-responses"),
    apis=("openai-chat", "openai-responses", "openai-embeddings"), sdk_packages=("openai",),
    credential_headers=("api-key", "authorization"),
)

# the APIs an Azure resource serves per deployment (the openai SDK's list); the rest, such as the
# Responses API, per resource
DEPLOYMENT_APIS = frozenset({"/completions", "/chat/completions", "/embeddings", "/audio/transcriptions",
                             "/audio/translations", "/audio/speech", "/images/generations", "/images/edits"})


def deployment_path(base_path: str, path: str, model: str | None) -> str:
    """Where an Azure client posts ``path``: a deployment-based API goes to the deployment named by
    the body's model unless the client's base URL names one already (``azure_deployment``).

    The SDK's Azure client does this itself, but only for a body it is handed as a dict; ours go as
    bytes (``post_json``), so the adapters route them here, as every SDK release does (the name
    percent-encoded as a path segment, as 3.x does)."""
    if path in DEPLOYMENT_APIS and model is not None and "/deployments" not in base_path:
        return "/deployments/" + quote(str(model), safe="!$&'()*+,;=:@-._~") + path
    return path
