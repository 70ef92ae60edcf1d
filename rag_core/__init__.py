"""rag_core: a compact agent + RAG core whose every provider request is predictable and testable.

The top-level names are imported on first use (PEP 562), so importing a submodule, such as
the pytest plugins under ``rag_core.evals``, does not pay for the agent, pydantic and friends.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Agent": "rag_core.agent",
    "RunOutput": "rag_core.run_output",
    "Document": "rag_core.document",
    "Knowledge": "rag_core.knowledge",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from rag_core.agent import Agent
    from rag_core.document import Document
    from rag_core.knowledge import Knowledge
    from rag_core.run_output import RunOutput


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rag_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
