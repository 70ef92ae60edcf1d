"""Model adapters. None of them imports a provider SDK until it is first used."""

from rag_core.models.anthropic import Claude
from rag_core.models.base import Model
from rag_core.models.gemini import Gemini
from rag_core.models.openai_chat import OpenAIChat
from rag_core.models.openai_responses import OpenAIResponses

__all__ = ["Claude", "Gemini", "Model", "OpenAIChat", "OpenAIResponses"]
