"""OpenAI (and Azure OpenAI, through the same SDK): where requests go, which API a path is, the
SDK clients the core's adapters and embedder share, and error translation."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from rag_core._optional import require
from rag_core.errors import ModelProviderError
from rag_core.providers._http import http_client_for, post_json
from rag_core.providers._openai_apis import route
from rag_core.providers.base import Provider

# the request options every SDK resource passes: authenticate with the bearer key (openai 2.x and
# later send only the auth schemes a request names; 1.x always sends it)
_BEARER_AUTH: dict[str, Any] = {"security": {"bearer_auth": True}}

OPENAI = Provider(
    name="openai", key_variables=("OPENAI_API_KEY",), endpoint_variables=("OPENAI_BASE_URL",),
    default_base_url="https://api.openai.com/v1", route=route,
    model_apis=("openai-chat", "openai-responses"),
    apis=("openai-chat", "openai-responses", "openai-embeddings"), sdk_packages=("openai",),
    credential_headers=("authorization", "openai-organization", "openai-project"),
    adapters={"openai-responses": "rag_core.models.openai_responses:OpenAIResponses",
              "openai-chat": "rag_core.models.openai_chat:OpenAIChat"},
)


@dataclass(kw_only=True)
class OpenAIConnection:
    """Connection settings common to every OpenAI adapter; clients are built on first use."""

    api_key: str | None = None
    base_url: str | None = None
    organization: str | None = None
    http_client: Any = None
    timeout: float | None = None
    max_retries: int = 2
    default_headers: dict[str, str] | None = None
    # Azure OpenAI: any of these selects the SDK's Azure client (which reads AZURE_OPENAI_ENDPOINT,
    # OPENAI_API_VERSION and AZURE_OPENAI_API_KEY for what is not given here)
    azure_endpoint: str | None = None
    azure_deployment: str | None = None
    api_version: str | None = None
    _client: Any = field(default=None, init=False, repr=False, compare=False)
    _async_client: Any = field(default=None, init=False, repr=False, compare=False)

    @property
    def _azure(self) -> bool:
        return any(v is not None for v in (self.azure_endpoint, self.azure_deployment, self.api_version))

    def _kwargs(self) -> dict[str, Any]:
        from rag_core.providers.azure import AZURE_OPENAI

        provider = AZURE_OPENAI if self._azure else OPENAI
        api_key = self.api_key or provider.key_from_environment()
        if not api_key:
            raise ModelProviderError(
                f"no API key: pass api_key=... to the model or set {provider.key_variables[0]}",
                provider="openai",
            )
        kwargs: dict[str, Any] = {"api_key": api_key, "max_retries": self.max_retries}
        if self._azure:
            for key in ("azure_endpoint", "azure_deployment", "api_version"):
                if getattr(self, key) is not None:
                    kwargs[key] = getattr(self, key)
        if self.base_url is not None:
            kwargs["base_url"] = self.base_url
        if self.organization is not None:
            kwargs["organization"] = self.organization
        if self.timeout is not None:
            kwargs["timeout"] = self.timeout
        if self.default_headers:
            kwargs["default_headers"] = self.default_headers
        return kwargs

    def client(self) -> Any:
        if self._client is None:
            openai = openai_sdk()
            kwargs = self._kwargs()
            kwargs["http_client"] = http_client_for(openai, self.http_client, asynchronous=False)
            self._client = (openai.AzureOpenAI if self._azure else openai.OpenAI)(**kwargs)
        return self._client

    def async_client(self) -> Any:
        if self._async_client is None:
            openai = openai_sdk()
            kwargs = self._kwargs()
            kwargs["http_client"] = http_client_for(openai, self.http_client, asynchronous=True)
            self._async_client = (openai.AsyncAzureOpenAI if self._azure else openai.AsyncOpenAI)(**kwargs)
        return self._async_client

    def _send(self, client: Any, path: str, body: dict[str, Any], **options: Any) -> Any:
        """``body`` posted through ``client`` (``post_json``: the same bytes on every SDK release)
        to where the SDK's own resource would post it; ``options`` are ``post``'s other arguments."""
        if self._azure:
            from rag_core.providers.azure import deployment_path

            path = deployment_path(str(client.base_url.path), path, body.get("model"))
        return post_json(client, path, body, options=_BEARER_AUTH, **options)


# The oldest openai SDK the adapters are tested on (CI replays the agent core's golden cases on it,
# on a 2.x and on 3.x): 1.108.1 is also the floor of LlamaIndex's OpenAI LLM package, a framework
# that pins openai below 3. The adapters post bodies they build and read JSON, so what the major
# versions change (httpx2 under 3.x, httpx before) stays inside the SDK's own clients.
OLDEST_OPENAI = (1, 108, 1)


def openai_sdk() -> Any:
    """The installed openai package, 1.108.1 or later (any of 1.x, 2.x, 3.x), or an error naming
    the extra that installs it."""
    return require("openai", extra="agent", feature="rag_core's OpenAI models", minimum=OLDEST_OPENAI)


def translate_error(exc: Exception) -> Exception:
    """Map an openai SDK exception to ModelProviderError; leave anything else alone (an SDK
    exception exists only once the SDK is imported: a missing SDK's error passes as it is)."""
    openai = sys.modules.get("openai")
    if openai is None:
        return exc
    if isinstance(exc, openai.APIStatusError):
        message = exc.message
        body = exc.body
        if isinstance(body, dict):
            inner = body.get("error", body)
            if isinstance(inner, dict) and inner.get("message"):
                message = str(inner["message"])
        return ModelProviderError(
            message,
            provider="openai",
            status_code=exc.status_code,
            # OpenAI sends x-request-id (the SDK's request_id); Azure OpenAI's gateway apim-request-id
            request_id=exc.request_id or exc.response.headers.get("apim-request-id"),
            body=body,
        )
    if isinstance(exc, openai.APIConnectionError):
        return ModelProviderError(f"{exc.message} ({exc.request.url})", provider="openai")
    return exc
