"""Session storage: where an Agent keeps runs, messages and session state between runs."""

from rag_core.db.memory import InMemoryDb
from rag_core.db.protocols import ContentsDb, SessionDb
from rag_core.db.records import ContentRecord
from rag_core.db.sqlite import SqliteDb, SqliteDbError

__all__ = ["ContentRecord", "ContentsDb", "InMemoryDb", "SessionDb", "SqliteDb", "SqliteDbError"]
