"""Crash safety, proven: for every persistent store a writer is killed (SIGKILL) mid-ingestion;
the store opens, holds a consistent set, and ingesting the same corpus again adds exactly what
is missing. Two processes ingesting one corpus at once store one copy of each document."""

from __future__ import annotations

import os
import sqlite3
import time

import pytest

from rag_core import Document
from tests.fakes import HashEmbedder
from tests.processes import kill_after, racing, spawn, start_together

DELAYS = [0.05, 0.2, 0.5]

STORES = {
    "chroma": "ChromaDb('crash', path=target, persistent_client=True, embedder=HashEmbedder(), search_type='hybrid', "
              "batch_size=50)",
    "pgvector": "PgVector(target.split('|')[1], db_url=target.split('|')[0], embedder=HashEmbedder(), search_type='hybrid')",
    "lancedb": "LanceDb(uri=target, table_name='crash', embedder=HashEmbedder(), search_type='hybrid')",
}

INGEST = """
import sys
from rag_core import Document
from rag_core.vectordb import ChromaDb, LanceDb, PgVector
from tests.fakes import HashEmbedder
from tests.processes import kill_after, spawn
target, mode = sys.argv[1], sys.argv[2]
store = {store}
corpus = [Document(content=f"recipe {{i}}: fry garlic and shallots {{i}}") for i in range(3000)]
if mode == "kill":
    store.count()  # opened (and the table or collection created) before the clock starts
    print("ready", flush=True)
    for start in range(0, len(corpus), 100):  # one write per 100 documents, as a reader of many files would
        store.insert(corpus[start:start + 100])
else:
    store._prepare(corpus)  # embed first, so the two processes meet at the write
    AWAIT_THE_START
    print(store.insert(corpus), flush=True)
"""


def corpus() -> list[Document]:
    return [Document(content=f"recipe {i}: fry garlic and shallots {i}") for i in range(3000)]


def open_store(kind: str, target: str):
    from rag_core.vectordb import ChromaDb, LanceDb, PgVector

    names = {"ChromaDb": ChromaDb, "LanceDb": LanceDb, "PgVector": PgVector, "HashEmbedder": HashEmbedder, "target": target}
    return eval(STORES[kind], names)


@pytest.fixture(params=["chroma", "lancedb", "pgvector"])
def target(request, tmp_path):
    if request.param in ("chroma", "lancedb"):
        return request.param, str(tmp_path / request.param)
    url = request.getfixturevalue("pg_url")
    table = f"crash_{os.getpid()}_{time.time_ns() % 10**9}"
    # the writer's connection is named after its table, so the test can wait for its server side to end
    return request.param, f"{url}{'&' if '?' in url else '?'}application_name={table}|{table}"


def wait_for_the_server_side_of(kind: str, target: str) -> None:
    """A killed client's last COMMIT may still be in the server's socket buffer: PostgreSQL runs it
    after the client is gone. The store's state is final only when the writer's backend has ended."""
    if kind != "pgvector":
        return
    import psycopg

    url, table = target.split("|")
    with psycopg.connect(url.replace(f"application_name={table}", "application_name=crash_check"),
                         autocommit=True) as conn:
        deadline = time.monotonic() + 60
        while conn.execute("select count(*) from pg_stat_activity where application_name = %s",
                           (table,)).fetchone()[0]:
            assert time.monotonic() < deadline, f"the killed writer's backend ({table}) did not end in 60 s"
            time.sleep(0.05)


@pytest.mark.parametrize("delay", DELAYS)
def test_a_store_killed_mid_ingestion_reopens_consistent_and_re_ingestion_adds_the_rest(target, delay):
    kind, where = target
    kill_after(spawn(racing(INGEST.format(store=STORES[kind])), where, "kill"), delay)
    wait_for_the_server_side_of(kind, where)
    store = open_store(kind, where)
    try:
        before = store.count()
        print(f"{kind} killed after {delay} s with {before} of 3000 stored")
        assert 0 <= before <= 3000
        # no half document: every stored row is one whole document of the corpus
        texts = {d.content for d in corpus()}
        found = store.search("garlic shallots", 5000)
        assert len(found) == before and all(d.content in texts for d in found)  # keyword index agrees with the store
        added = store.insert(corpus())
        assert added == 3000 - before and store.count() == 3000
        assert store.insert(corpus()) == 0
    finally:
        if kind == "pgvector":
            store.drop()
            store.close()


@pytest.mark.parametrize("kind", ["chroma", "lancedb"])
def test_two_processes_ingesting_one_corpus_into_an_embedded_store_store_one_copy(tmp_path, kind):
    where = str(tmp_path / kind)
    processes = [spawn(racing(INGEST.format(store=STORES[kind])), where, "race") for _ in range(2)]
    start_together(processes)
    outputs = [p.communicate(timeout=300) for p in processes]
    assert all(p.returncode == 0 for p in processes), [err[-1500:] for _, err in outputs]
    assert sum(int(out) for out, _ in outputs) == 3000
    store = open_store(kind, where)
    assert store.count() == 3000 and len(store.search("garlic shallots", 5000)) == 3000


# ------------------------------------------------------------------ SqliteDb
SESSIONS = """
import sys
from rag_core.db import SqliteDb
from rag_core.messages import Message
db = SqliteDb(sys.argv[1])
n = 0
while True:
    n += 1
    db.save_run("s", None, "agent", f"run-{n}", "completed",
                [Message(role="user", content=f"question {n} " * 50)] + [Message(role="assistant", content=f"a{n}-{i}") for i in range(19)],
                {"runs": n})
    if n == 1:  # the kill's delay counts from one whole run: on a loaded machine 0.05 s may not reach one
        print("ready", flush=True)
"""


@pytest.mark.parametrize("delay", DELAYS)
def test_sqlite_killed_mid_write_keeps_whole_runs_and_goes_on(tmp_path, delay):
    from rag_core.db import SqliteDb
    from rag_core.messages import Message

    db_file = tmp_path / "agents.db"
    kill_after(spawn(SESSIONS, str(db_file)), delay)
    with sqlite3.connect(db_file) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        per_run = conn.execute("SELECT run_id, count(*) FROM messages GROUP BY run_id").fetchall()
    db = SqliteDb(str(db_file))
    runs = db.runs("s")
    print(f"sqlite killed after {delay} s with {len(runs)} runs stored")
    assert runs and all(count == 20 for _, count in per_run) and len(per_run) == len(runs)
    assert db.load_session_state("s") == {"runs": len(runs)}  # the state of the last whole run
    db.save_run("s", None, "agent", "after-the-crash", "completed", [Message(role="user", content="again")], None)
    assert db.runs("s")[-1] == ("after-the-crash", "completed")


# ------------------------------------------------------------------ EmbeddingCache
CACHE = """
import sys
from rag_core.embedder import EmbeddingCache
from tests.fakes import HashEmbedder
from tests.processes import kill_after, spawn
folder, mode = sys.argv[1], sys.argv[2]
cache = EmbeddingCache(HashEmbedder(), folder, mode="record")
texts = [f"recipe {i}: fry garlic" for i in range(3000)]
if mode == "kill":
    texts = [f"recipe {i}: fry garlic" for i in range(20000)]  # every save rewrites the cache: it slows down
    print("ready", flush=True)
    for start in range(0, len(texts), 100):
        cache.embed(texts[start:start + 100])
else:
    AWAIT_THE_START
    cache.embed(texts)
    print(len(cache), flush=True)
"""


@pytest.mark.parametrize("delay", DELAYS)
def test_an_embedding_cache_killed_mid_recording_records_only_the_rest(tmp_path, delay):
    from rag_core.embedder import EmbeddingCache

    folder = tmp_path / "cache"
    kill_after(spawn(racing(CACHE), str(folder), "kill"), delay)
    embedder = HashEmbedder()
    cache = EmbeddingCache(embedder, folder, mode="record")
    before = len(cache)
    print(f"cache killed after {delay} s with {before} of 20000 recorded")
    texts = [f"recipe {i}: fry garlic" for i in range(20000)]
    cache.embed(texts)
    assert sum(n for n, _ in embedder.calls) == 20000 - before  # only the missing texts were embedded
    assert len(EmbeddingCache(HashEmbedder(), folder, mode="replay")) == 20000


def test_two_processes_recording_one_cache_end_with_every_vector_once(tmp_path):
    import json

    folder = tmp_path / "cache"
    processes = [spawn(racing(CACHE), str(folder), "race") for _ in range(2)]
    start_together(processes)
    outputs = [p.communicate(timeout=300) for p in processes]
    assert all(p.returncode == 0 for p in processes), [err[-1500:] for _, err in outputs]
    meta = json.loads((folder / "meta.json").read_text())
    keys = [key for chunk in meta["chunks"] for key in (folder / chunk["keys"]).read_text().split()]
    assert len(keys) == len(set(keys)) == 3000
