"""RunContext: what a tool may ask for about the run that called it.

A tool declares a parameter annotated ``RunContext`` to receive it; that parameter is
injected by the agent and never appears in the schema the model sees.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rag_core.agent.agent import Agent


@dataclass
class RunContext:
    run_id: str
    session_id: str | None
    session_state: dict[str, Any]
    agent: Agent
    references: list[dict[str, Any]] = field(default_factory=list)
