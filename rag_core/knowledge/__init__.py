from rag_core.knowledge.knowledge import Knowledge

__all__ = ["Knowledge"]
