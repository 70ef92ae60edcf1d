from rag_core.reranker.base import Reranker
from rag_core.reranker.cohere import CohereReranker

__all__ = ["CohereReranker", "Reranker"]
