from rag_core.knowledge.knowledge import Knowledge
from rag_core.knowledge.source import KnowledgeSource

__all__ = ["Knowledge", "KnowledgeSource"]
