"""Which OpenAI API a request path belongs to: OpenAI serves these APIs, and Azure OpenAI serves
them too on its deployments' paths (which end as OpenAI's do), so both providers route by this."""

from __future__ import annotations

from rag_core.providers.base import path_of


def route(path: str) -> str | None:
    path = path_of(path)
    for suffix, api in (("/chat/completions", "openai-chat"), ("/responses", "openai-responses"),
                        ("/embeddings", "openai-embeddings")):
        if path.endswith(suffix):
            return api
    return None
