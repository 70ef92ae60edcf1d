"""What the agent and the knowledge need of a database, as Protocols: ``InMemoryDb`` and
``SqliteDb`` are both; a database of your own needs only these methods."""

from __future__ import annotations

from typing import Any, Protocol

from rag_core.db.records import ContentRecord
from rag_core.messages import Message

__all__ = ["ContentsDb", "SessionDb"]


class SessionDb(Protocol):
    """Where an Agent keeps its sessions between runs (its ``db``)."""

    def save_run(self, session_id: str, user_id: str | None, agent_name: str | None, run_id: str, status: str,
                 messages: list[Message], session_state: dict[str, Any] | None) -> None:
        """Store a run (its own messages and status) and the session's state after it."""
        ...

    def load_history(self, session_id: str, num_runs: int) -> list[Message]:
        """The messages of the session's last ``num_runs`` completed runs, oldest first."""
        ...

    def load_session_state(self, session_id: str) -> dict[str, Any] | None:
        """The session's stored state, or None for a session never stored."""
        ...


class ContentsDb(Protocol):
    """Where a Knowledge records what it ingested (its ``contents_db``)."""

    def record_contents(self, records: list[ContentRecord]) -> None:
        """Record or update the status of several sources at once."""
        ...
