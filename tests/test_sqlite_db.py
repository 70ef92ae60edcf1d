"""SqliteDb: sessions survive restarts, concurrent writers, corrupt and locked files."""

from __future__ import annotations

import sqlite3

import pytest

from rag_core.db import SqliteDb, SqliteDbError
from rag_core.db.sqlite import MIGRATIONS
from rag_core.messages import Message, ToolCall
from tests.conftest import scripted_agent
from tests.processes import FORKSERVER
from rag_core.models import OpenAIResponses

SEARCH = {"tool_calls": [{"name": "search_knowledge_base", "arguments": {"query": "pad thai"}}]}


def test_history_continues_across_a_restart(tmp_path, knowledge):
    db_file = tmp_path / "agents.db"
    first, _ = scripted_agent(OpenAIResponses, [SEARCH, {"text": "Noodles."}], knowledge=knowledge,
                              db=SqliteDb(str(db_file)), session_id="s-1", add_history_to_context=True,
                              session_state={"user": "Ana"})
    first.run("What is pad thai?")
    # a new process: a new database object and a new agent on the same session
    second, provider = scripted_agent(OpenAIResponses, [{"text": "Peanuts."}], knowledge=knowledge,
                                      db=SqliteDb(str(db_file)), session_id="s-1", add_history_to_context=True)
    out = second.run("Served with?")
    replayed = provider.requests[0]["input"]
    assert [item.get("role") or item["type"] for item in replayed] == [
        "developer", "user", "function_call", "function_call_output", "assistant", "user"]
    assert replayed[1]["content"] == "What is pad thai?" and replayed[-1]["content"] == "Served with?"
    assert second.session_state["user"] == "Ana"
    assert [status for _, status in SqliteDb(str(db_file)).runs("s-1")] == ["completed", "completed"]
    assert out.content == "Peanuts."


def test_messages_round_trip_with_provider_data(tmp_path):
    db = SqliteDb(str(tmp_path / "a.db"))
    messages = [
        Message(role="user", content="q"),
        Message(role="assistant", tool_calls=[ToolCall("c1", "f", '{"a":1}', {"thought_signature": "c2ln"})],
                provider_data={"response_id": "r1"}),
        Message(role="tool", content="out", tool_call_id="c1", tool_name="f"),
    ]
    db.save_run("s", None, "agent", "run-1", "completed", messages, {"k": [1, 2]})
    db.save_run("s", None, "agent", "run-2", "error", [Message(role="user", content="failed")], None)
    assert db.load_history("s", 5) == messages  # the failed run is not replayed
    assert db.load_session_state("s") == {"k": [1, 2]}
    assert db.schema_version() == len(MIGRATIONS)


def _write_runs(path: str, writer: int, count: int) -> None:
    db = SqliteDb(path, timeout=30)
    for n in range(count):
        db.save_run(f"session-{writer}", None, None, f"w{writer}-r{n}", "completed",
                    [Message(role="user", content=f"{writer}:{n}")], {"n": n})


def test_two_processes_writing_at_once_do_not_corrupt_it(tmp_path):
    path = str(tmp_path / "shared.db")
    SqliteDb(path).schema_version()
    workers = [FORKSERVER.Process(target=_write_runs, args=(path, w, 40)) for w in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    db = SqliteDb(path)
    assert [len(db.runs(f"session-{w}")) for w in range(2)] == [40, 40]
    assert [m.content for m in db.load_history("session-1", 2)] == ["1:38", "1:39"]
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_corrupt_file_is_a_clear_error_and_left_untouched(tmp_path):
    path = tmp_path / "agents.db"
    path.write_bytes(b"this is not a database at all" * 100)
    before = path.read_bytes()
    with pytest.raises(SqliteDbError, match=r"agents.db: not a SQLite database, or it is corrupt"):
        SqliteDb(str(path)).load_history("s", 1)
    assert path.read_bytes() == before


def test_a_lock_held_too_long_is_a_clear_error(tmp_path):
    path = tmp_path / "agents.db"
    SqliteDb(str(path)).schema_version()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(SqliteDbError, match=r"locked by another connection for more than 0.2 s"):
            SqliteDb(str(path), timeout=0.2).save_run("s", None, None, "r", "completed", [], None)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_newer_schema_is_refused(tmp_path):
    path = tmp_path / "agents.db"
    SqliteDb(str(path)).schema_version()
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO schema_version (version) VALUES (99)")
    with pytest.raises(SqliteDbError, match="schema version 99 was written by a newer rag-core"):
        SqliteDb(str(path)).schema_version()


def test_knowledge_records_its_contents(tmp_path):
    from rag_core import Knowledge

    db = SqliteDb(str(tmp_path / "agents.db"))
    knowledge = Knowledge(name="recipes", contents_db=db)
    knowledge.insert("Pad thai uses tamarind.", name="pad_thai", metadata={"source": "ThaiRecipes.pdf"})
    knowledge.insert("Pad thai uses tamarind.", name="pad_thai", metadata={"source": "ThaiRecipes.pdf"})
    [record] = db.contents()
    assert (record.knowledge, record.name, record.source, record.status, record.chunks) == (
        "recipes", "pad_thai", "ThaiRecipes.pdf", "completed", 1)

    class Broken:
        def insert(self, docs, progress=False):
            raise RuntimeError("store down")

    failing = Knowledge(name="broken", vector_db=Broken(), contents_db=db)
    with pytest.raises(RuntimeError):
        failing.insert("Curry.", name="curry")
    assert [(r.name, r.status, r.error) for r in db.contents() if r.knowledge == "broken"] == [
        ("curry", "failed", "RuntimeError: store down")]


def test_threads_share_one_connection_one_transaction_at_a_time(tmp_path):
    import threading

    db = SqliteDb(str(tmp_path / "agents.db"))
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        try:
            for n in range(25):
                db.save_run(f"session-{w}", None, None, f"t{w}-r{n}", "completed",
                            [Message(role="user", content=f"{w}:{n}")], {"n": n})
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert [len(db.runs(f"session-{w}")) for w in range(6)] == [25] * 6
    assert db._conn is not None  # one connection, kept open between calls


def test_a_file_replaced_after_an_error_is_opened_afresh(tmp_path):
    path = tmp_path / "agents.db"
    path.write_bytes(b"not a database" * 100)
    db = SqliteDb(str(path))
    with pytest.raises(SqliteDbError, match="not a SQLite database"):
        db.runs("s")
    path.unlink()  # the user moved it aside, as the message says
    assert db.runs("s") == [] and db.schema_version() == len(MIGRATIONS)
