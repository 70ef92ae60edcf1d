"""InMemoryDb: the session store an Agent uses when it is given no ``db`` (one process, no disk)."""

from __future__ import annotations

import copy
from typing import Any

from rag_core.db.records import ContentRecord
from rag_core.messages import Message


class InMemoryDb:
    def __init__(self) -> None:
        self._runs: dict[str, list[tuple[str, str, list[Message]]]] = {}  # session -> (run_id, status, messages)
        self._state: dict[str, dict[str, Any]] = {}
        self._contents: dict[str, ContentRecord] = {}

    def save_run(self, session_id: str, user_id: str | None, agent_name: str | None, run_id: str, status: str,
                 messages: list[Message], session_state: dict[str, Any] | None) -> None:
        self._runs.setdefault(session_id, []).append((run_id, status, list(messages)))
        if session_state is not None:
            self._state[session_id] = copy.deepcopy(session_state)

    def load_history(self, session_id: str, num_runs: int) -> list[Message]:
        completed = [m for _, status, m in self._runs.get(session_id, []) if status == "completed"]
        return [message for messages in completed[-num_runs:] for message in messages]

    def load_session_state(self, session_id: str) -> dict[str, Any] | None:
        state = self._state.get(session_id)
        return copy.deepcopy(state) if state is not None else None

    def record_content(self, record: ContentRecord) -> None:
        self.record_contents([record])

    def record_contents(self, records: list[ContentRecord]) -> None:
        for record in records:
            self._contents[record.id] = record

    def contents(self) -> list[ContentRecord]:
        return list(self._contents.values())
