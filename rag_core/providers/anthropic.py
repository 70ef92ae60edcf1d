"""Anthropic's Messages API: where requests go, which API a path is, the SDK clients of the
core's Claude model, and error translation."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from rag_core._optional import require
from rag_core.errors import ModelProviderError
from rag_core.providers._http import http_client_for
from rag_core.providers.base import Provider, path_of


def route(path: str) -> str | None:
    return "anthropic-messages" if path_of(path).endswith("/v1/messages") else None


ANTHROPIC = Provider(
    name="anthropic", key_variables=("ANTHROPIC_API_KEY",),
    endpoint_variables=("ANTHROPIC_BASE_URL",), default_base_url="https://api.anthropic.com", route=route,
    model_apis=("anthropic-messages",), apis=("anthropic-messages",), sdk_packages=("anthropic",), credential_headers=("x-api-key", "authorization"),
    adapters={"anthropic-messages": "rag_core.models.anthropic:Claude"},
)

# the status the API gives each error type (an error event inside a stream arrives on a 200 response)
_ERROR_STATUS = {"invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
                 "permission_error": 403, "not_found_error": 404, "request_too_large": 413,
                 "rate_limit_error": 429, "api_error": 500, "timeout_error": 504, "overloaded_error": 529}



@dataclass(kw_only=True)
class AnthropicConnection:
    """Connection settings of the anthropic SDK's clients (Agno's Claude arguments); clients are
    built on first use."""

    api_key: str | None = field(default=None, repr=False)
    auth_token: str | None = field(default=None, repr=False)
    base_url: str | None = None
    timeout: float | None = None
    max_retries: int = 2
    default_headers: dict[str, str] | None = None
    http_client: Any = None
    client_params: dict[str, Any] | None = None
    _client: Any = field(default=None, init=False, repr=False, compare=False)
    _async_client: Any = field(default=None, init=False, repr=False, compare=False)

    def _client_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        params = dict(self.client_params or {})
        api_key = self.api_key or ANTHROPIC.key_from_environment()
        auth_token = None if api_key else self.auth_token or os.environ.get("ANTHROPIC_AUTH_TOKEN")
        if api_key:
            kwargs["api_key"] = api_key
        elif auth_token:
            kwargs["auth_token"] = auth_token
        elif not any(k in params for k in ("api_key", "auth_token", "credentials", "config", "profile")):
            raise ModelProviderError("no API key: pass api_key=... to the model or set ANTHROPIC_API_KEY",
                                     provider="anthropic")
        kwargs["max_retries"] = self.max_retries
        if self.base_url is not None:
            kwargs["base_url"] = self.base_url
        if self.timeout is not None:
            kwargs["timeout"] = self.timeout
        if self.default_headers:
            kwargs["default_headers"] = self.default_headers
        kwargs.update(params)
        return kwargs

    def client(self) -> Any:
        if self._client is None:
            anthropic = anthropic_sdk()
            kwargs = self._client_kwargs()
            if "http_client" not in kwargs:  # client_params may name one
                kwargs["http_client"] = http_client_for(anthropic, self.http_client, asynchronous=False)
            self._client = anthropic.Anthropic(**kwargs)
        return self._client

    def async_client(self) -> Any:
        if self._async_client is None:
            anthropic = anthropic_sdk()
            kwargs = self._client_kwargs()
            if "http_client" not in kwargs:
                kwargs["http_client"] = http_client_for(anthropic, self.http_client, asynchronous=True)
            self._async_client = anthropic.AsyncAnthropic(**kwargs)
        return self._async_client


def anthropic_sdk() -> Any:
    """The anthropic package, or an error naming the extra that installs it."""
    return require("anthropic", extra="anthropic", feature="rag_core's Claude model")


def translate_claude_error(exc: Exception) -> Exception:
    """Map an anthropic SDK exception to ModelProviderError; leave anything else alone."""
    try:
        import anthropic
    except ImportError:
        return exc
    if isinstance(exc, anthropic.APIStatusError):
        body = exc.body
        error = body.get("error") if isinstance(body, dict) else None
        message = str(error["message"]) if isinstance(error, dict) and error.get("message") else exc.message
        status = exc.status_code
        if status < 400 and isinstance(error, dict):  # an error event inside a stream
            status = _ERROR_STATUS.get(str(error.get("type")), status)
        request_id = getattr(exc, "request_id", None) or exc.response.headers.get("request-id")
        return ModelProviderError(message, provider="anthropic", status_code=status, request_id=request_id, body=body)
    if isinstance(exc, anthropic.APIConnectionError):
        return ModelProviderError(f"{exc.message} ({exc.request.url})", provider="anthropic")
    return exc
