"""OpenAI (and Azure OpenAI, through the same SDK): where requests go, which API a path is, the
SDK clients the core's adapters and embedder share, and error translation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rag_core.errors import ModelProviderError
from rag_core.providers._http import http_client_for
from rag_core.providers.base import Provider, path_of


def route(path: str) -> str | None:
    path = path_of(path)
    for suffix, api in (("/chat/completions", "openai-chat"), ("/responses", "openai-responses"),
                        ("/embeddings", "openai-embeddings")):
        if path.endswith(suffix):
            return api
    return None


OPENAI = Provider(
    name="openai", key_variables=("OPENAI_API_KEY",), endpoint_variables=("OPENAI_BASE_URL",),
    default_base_url="https://api.openai.com/v1", route=route,
    model_apis=("openai-chat", "openai-responses"),
    apis=("openai-chat", "openai-responses", "openai-embeddings"), sdk_packages=("openai",),
    credential_headers=("authorization", "openai-organization", "openai-project"),
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


def openai_sdk() -> Any:
    """The openai package, 3.x: the adapters build its httpx2 clients. A project that installed
    only the harness may have none, or an older one its own agent uses: say what to install."""
    try:
        import openai
    except ImportError:
        raise ImportError("rag_core's OpenAI models need the openai SDK 3.x: pip install 'rag-core[agent]'") from None
    major = str(getattr(openai, "__version__", "0")).split(".")[0]
    if not major.isdigit() or int(major) < 3:
        raise ImportError(f"rag_core's OpenAI models need the openai SDK 3.x, and openai {openai.__version__} is "
                          "installed (the harness itself works with it: pin your own agents with target: cases)")
    return openai


def translate_error(exc: Exception) -> Exception:
    """Map an openai SDK exception to ModelProviderError; leave anything else alone."""
    import openai

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
