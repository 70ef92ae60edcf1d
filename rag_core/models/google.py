"""Agno's ``agno.models.google``."""

from rag_core.models.gemini import Gemini

__all__ = ["Gemini"]
