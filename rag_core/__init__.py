"""rag_core: a compact agent + RAG core whose every provider request is predictable and testable."""

from rag_core.agent import Agent, RunOutput
from rag_core.document import Document
from rag_core.knowledge import Knowledge

__all__ = ["Agent", "Document", "Knowledge", "RunOutput"]
__version__ = "0.1.0"
