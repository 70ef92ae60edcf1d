"""Agno's ``agno.models.openai``: the OpenAI adapters under the path Agno programs import."""

from rag_core.models.openai_chat import OpenAIChat
from rag_core.models.openai_responses import OpenAIResponses

__all__ = ["OpenAIChat", "OpenAIResponses"]
