"""SqliteDb: sessions, runs, messages, session state and knowledge contents in one SQLite file.

* The schema is versioned; ``MIGRATIONS`` lists every step, applied in order, each in
  its own transaction. A file written by a newer rag-core is refused, not rewritten.
* WAL journaling and ``BEGIN IMMEDIATE`` write transactions let several processes write
  to one file; a writer waits up to ``timeout`` seconds for a lock.
* A corrupt or foreign file, or a lock held too long, is a clear error naming the file;
  nothing is written to a file that failed to open.
* One connection per SqliteDb, opened on first use and shared by its threads one transaction
  at a time (opening a connection cost ~2000× the write it was opened for); a forked child
  opens its own, and an error that may concern the file itself closes it so the next call
  opens the file afresh.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from rag_core.db.records import ContentRecord, message_from_json, message_to_json
from rag_core.text import without_surrogates
from rag_core.errors import RagCoreError
from rag_core.messages import Message

MIGRATIONS: list[str] = [
    # 1: sessions, runs, messages, knowledge contents
    """
    CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY,
        user_id TEXT,
        agent_name TEXT,
        session_state TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE TABLE runs (
        run_id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(session_id),
        seq INTEGER NOT NULL,
        status TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX runs_by_session ON runs(session_id, seq);
    CREATE TABLE messages (
        run_id TEXT NOT NULL REFERENCES runs(run_id),
        position INTEGER NOT NULL,
        message TEXT NOT NULL,
        PRIMARY KEY (run_id, position)
    );
    CREATE TABLE knowledge_contents (
        id TEXT PRIMARY KEY,
        knowledge TEXT,
        name TEXT,
        source TEXT,
        content_hash TEXT NOT NULL,
        status TEXT NOT NULL,
        chunks INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        updated_at REAL NOT NULL
    );
    """,
]


class SqliteDbError(RagCoreError):
    pass


class SqliteConstraintError(SqliteDbError):
    """A write broke a constraint (a run id stored twice, ...). The database is healthy; nothing
    of the failed write was stored."""


class SqliteDb:
    def __init__(self, db_file: str = "tmp/agents.db", timeout: float = 10.0) -> None:
        self.path = Path(db_file)
        self.timeout = timeout
        self._migrated = False
        self._conn: sqlite3.Connection | None = None
        self._pid = 0  # the process that opened _conn
        self._lock = threading.RLock()

    # ----------------------------------------------------------- connection and schema
    def _connection(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False)
                conn.execute("PRAGMA foreign_keys = ON")
            except sqlite3.Error as exc:
                raise SqliteDbError(f"{self.path}: cannot be opened ({exc})") from exc
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    @contextmanager
    def _connect(self, write: bool) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._connection()
            try:
                if not self._migrated:
                    self._migrate(conn)
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    yield conn
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                if "locked" in str(exc) or "busy" in str(exc):
                    raise SqliteDbError(
                        f"{self.path}: locked by another connection for more than {self.timeout} s; nothing was written"
                    ) from exc
                self.close()
                raise SqliteDbError(f"{self.path}: {exc}") from exc
            except sqlite3.IntegrityError as exc:
                # a subclass of DatabaseError, but the file is fine: never advise moving it aside
                raise SqliteConstraintError(
                    f"{self.path}: the write was refused by a constraint ({exc}); the database is healthy and nothing "
                    "of this write was stored"
                ) from exc
            except sqlite3.DatabaseError as exc:
                self.close()
                raise SqliteDbError(
                    f"{self.path}: not a SQLite database, or it is corrupt ({exc}); nothing was written to it — "
                    "move it aside to start a new one"
                ) from exc

    def _migrate(self, conn: sqlite3.Connection) -> None:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
        current = row[0] or 0
        if current > len(MIGRATIONS):
            raise SqliteDbError(
                f"{self.path}: schema version {current} was written by a newer rag-core (this one knows "
                f"{len(MIGRATIONS)}); upgrade rag-core"
            )
        for version in range(current + 1, len(MIGRATIONS) + 1):
            conn.execute("BEGIN IMMEDIATE")
            try:
                already = (conn.execute("SELECT max(version) FROM schema_version").fetchone()[0] or 0) >= version
                if not already:  # another process may have migrated while we waited for the lock
                    for statement in MIGRATIONS[version - 1].split(";"):
                        if statement.strip():
                            conn.execute(statement)
                    conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        self._migrated = True

    def schema_version(self) -> int:
        with self._connect(write=False) as conn:
            return conn.execute("SELECT max(version) FROM schema_version").fetchone()[0]

    # ----------------------------------------------------------- sessions and runs
    def save_run(self, session_id: str, user_id: str | None, agent_name: str | None, run_id: str, status: str,
                 messages: list[Message], session_state: dict[str, Any] | None) -> None:
        """Store a run and its messages and update the session, all in one transaction."""
        now = time.time()
        state = json.dumps(session_state, ensure_ascii=False, default=str) if session_state is not None else None
        if state is not None:
            state = without_surrogates(state, f"the session state of {session_id!r}")
        try:
            self._save_run(session_id, user_id, agent_name, run_id, status, messages, state, now)
        except SqliteConstraintError as exc:
            raise SqliteConstraintError(f"{self.path}: run {run_id!r} is already stored (session {session_id!r}); "
                                        "each run needs its own run_id. The database is healthy; nothing was "
                                        f"written ({exc.__cause__})") from exc.__cause__

    def _save_run(self, session_id: str, user_id: str | None, agent_name: str | None, run_id: str, status: str,
                  messages: list[Message], state: str | None, now: float) -> None:
        with self._connect(write=True) as conn:
            conn.execute(
                "INSERT INTO sessions (session_id, user_id, agent_name, session_state, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET "
                "user_id = coalesce(excluded.user_id, user_id), agent_name = coalesce(excluded.agent_name, agent_name), "
                "session_state = coalesce(excluded.session_state, session_state), updated_at = excluded.updated_at",
                (session_id, user_id, agent_name, state, now, now),
            )
            seq = conn.execute("SELECT coalesce(max(seq), 0) + 1 FROM runs WHERE session_id = ?", (session_id,)).fetchone()[0]
            conn.execute("INSERT INTO runs (run_id, session_id, seq, status, created_at) VALUES (?, ?, ?, ?, ?)",
                         (run_id, session_id, seq, status, now))
            conn.executemany(
                "INSERT INTO messages (run_id, position, message) VALUES (?, ?, ?)",
                [(run_id, n, without_surrogates(json.dumps(message_to_json(m), ensure_ascii=False),
                                                f"message {n} of run {run_id!r}"))
                 for n, m in enumerate(messages)],
            )

    def load_history(self, session_id: str, num_runs: int) -> list[Message]:
        """The messages of the last ``num_runs`` completed runs, oldest first."""
        with self._connect(write=False) as conn:
            run_ids = [r[0] for r in conn.execute(
                "SELECT run_id FROM runs WHERE session_id = ? AND status = 'completed' ORDER BY seq DESC LIMIT ?",
                (session_id, num_runs),
            ).fetchall()][::-1]
            messages: list[Message] = []
            for run_id in run_ids:
                rows = conn.execute("SELECT message FROM messages WHERE run_id = ? ORDER BY position", (run_id,)).fetchall()
                messages.extend(message_from_json(json.loads(r[0])) for r in rows)
        return messages

    def load_session_state(self, session_id: str) -> dict[str, Any] | None:
        with self._connect(write=False) as conn:
            row = conn.execute("SELECT session_state FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
        return json.loads(row[0]) if row and row[0] is not None else None

    def runs(self, session_id: str) -> list[tuple[str, str]]:
        """(run_id, status) of a session's runs, in order."""
        with self._connect(write=False) as conn:
            return [tuple(r) for r in conn.execute(
                "SELECT run_id, status FROM runs WHERE session_id = ? ORDER BY seq", (session_id,)).fetchall()]

    # ----------------------------------------------------------- knowledge contents
    def record_content(self, record: ContentRecord) -> None:
        self.record_contents([record])

    def record_contents(self, records: list[ContentRecord]) -> None:
        """Record (or update) the status of several sources in one transaction."""
        now = time.time()
        with self._connect(write=True) as conn:
            conn.executemany(
                "INSERT INTO knowledge_contents (id, knowledge, name, source, content_hash, status, chunks, error, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET content_hash = excluded.content_hash, "
                "status = excluded.status, chunks = excluded.chunks, error = excluded.error, updated_at = excluded.updated_at",
                [(r.id, r.knowledge, r.name, r.source, r.content_hash, r.status, r.chunks, r.error, now) for r in records],
            )

    def contents(self) -> list[ContentRecord]:
        with self._connect(write=False) as conn:
            rows = conn.execute(
                "SELECT id, knowledge, name, source, content_hash, status, chunks, error FROM knowledge_contents ORDER BY name, source"
            ).fetchall()
        return [ContentRecord(*r) for r in rows]
