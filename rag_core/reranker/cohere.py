"""CohereReranker: v2 ``/rerank`` through the cohere SDK."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rag_core.document import Document
from rag_core.providers.cohere import cohere_client, translate_cohere_error
from rag_core.reranker.base import Reranker


@dataclass(kw_only=True)
class CohereReranker(Reranker):
    model: str = "rerank-v3.5"
    top_n: int | None = None
    api_key: str | None = None
    base_url: str | None = None
    http_client: Any = None
    _client: Any = field(default=None, init=False, repr=False)

    def rerank(self, query: str, documents: list[Document]) -> list[Document]:
        if not documents:
            return []
        if self._client is None:
            self._client = cohere_client(self.api_key, self.base_url, self.http_client, "CohereReranker")
        kwargs: dict[str, Any] = {"model": self.model, "query": query, "documents": [d.content for d in documents]}
        if self.top_n is not None:
            kwargs["top_n"] = self.top_n
        try:
            response = self._client.rerank(**kwargs)
        except Exception as exc:
            raise translate_cohere_error(exc) from exc
        ranked = []
        for result in sorted(response.results, key=lambda r: (-r.relevance_score, r.index)):
            doc = documents[result.index]
            ranked.append(
                Document(
                    content=doc.content,
                    meta_data={**doc.meta_data, "reranking_score": float(result.relevance_score)},
                    name=doc.name,
                    id=doc.id,
                    embedding=doc.embedding,
                )
            )
        return ranked
