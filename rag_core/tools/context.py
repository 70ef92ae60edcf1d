"""RunContext: what a tool may ask for about the run that called it.

A tool declares a parameter annotated ``RunContext`` to receive it; that parameter is
injected by the agent and never appears in the schema the model sees.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class RunContext:
    run_id: str
    session_id: str | None
    session_state: dict[str, Any]
    agent: Any  # the rag_core Agent running the tool (tools sit below the agent, so not imported here)
    references: list[dict[str, Any]] = field(default_factory=list)
