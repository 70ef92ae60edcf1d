"""Tools: plain functions, ``@tool``-decorated functions, Toolkits and ReasoningTools."""

from rag_core.tools.context import RunContext
from rag_core.tools.decorator import tool
from rag_core.tools.function import Function
from rag_core.tools.reasoning import ReasoningTools
from rag_core.tools.toolkit import Toolkit

__all__ = ["Function", "ReasoningTools", "RunContext", "Toolkit", "tool"]
