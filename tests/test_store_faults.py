"""Stores under faults: a refused or killed write loses nothing; the next open finds the old
state or the new one, complete."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rag_core import Document
from rag_core.vectordb import ChromaDb, VectorDbError
from tests.fakes import HashEmbedder
from tests.processes import kill_after, racing, spawn, start_together

def chroma(path: Path, batch_size: int | None = None) -> ChromaDb:
    return ChromaDb("src-docs", path=str(path), persistent_client=True, embedder=HashEmbedder(),
                    search_type="hybrid", batch_size=batch_size)


def source(version: str, count: int) -> list[Document]:
    return [Document(content=f"{version} recipe {i}: fry garlic {i}", name="recipes", meta_data={"v": version})
            for i in range(count)]


def versions(store: ChromaDb) -> dict[str, int]:
    got = store.collection.get(where={"_rag_name": {"$eq": "recipes"}}, include=["metadatas"])
    counts: dict[str, int] = {}
    for meta in got["metadatas"]:
        counts[meta["v"]] = counts.get(meta["v"], 0) + 1
    return counts


def test_a_reserved_metadata_key_is_kept_and_the_replace_completes(tmp_path):
    store = chroma(tmp_path, batch_size=10)
    store.insert(source("old", 30))
    new = source("new", 30)
    new[25].meta_data["chroma:document"] = "reserved by Chroma"
    store.replace("recipes", new)
    assert versions(store) == {"new": 30}
    found = store._fetch([new[25].id])[new[25].id]
    assert found.meta_data["chroma:document"] == "reserved by Chroma"  # nothing lost: kept in the JSON


def test_a_write_refused_in_a_later_batch_rolls_the_replace_back(tmp_path, monkeypatch):
    store = chroma(tmp_path, batch_size=10)
    store.insert(source("old", 30))
    collection = store.collection
    real_upsert, calls = collection.upsert, []

    def failing_upsert(**kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise ValueError("refused by the store")
        return real_upsert(**kwargs)

    monkeypatch.setattr(collection, "upsert", failing_upsert)
    with pytest.raises(ValueError, match="refused by the store"):
        store.replace("recipes", source("new", 30))
    assert versions(store) == {"old": 30}
    assert not store._journal.exists()
    assert {d.meta_data["v"] for d in store.search("fry garlic", 50)} == {"old"}


REPLACER = """
import sys
from rag_core import Document
from rag_core.vectordb import ChromaDb
from tests.fakes import HashEmbedder
store = ChromaDb("src-docs", path=sys.argv[1], persistent_client=True, embedder=HashEmbedder(), search_type="hybrid",
                 batch_size=25)
store.insert([Document(content=f"old recipe {i}: fry garlic {i}", name="recipes", meta_data={"v": "old"}) for i in range(300)])
print("ready", flush=True)
store.replace("recipes", [Document(content=f"new recipe {i}: fry garlic {i}", name="recipes", meta_data={"v": "new"})
                          for i in range(600)])
print("done", flush=True)
"""


@pytest.mark.parametrize("delay", [0.0, 0.15, 0.4, 0.8, 1.5])
def test_a_replace_killed_at_any_point_leaves_the_old_or_the_new_source_complete(tmp_path, delay):
    kill_after(spawn(REPLACER, str(tmp_path)), delay)
    store = chroma(tmp_path)
    assert versions(store) in ({"old": 300}, {"new": 600})
    assert not store._journal.exists()
    # the keyword index agrees with the collection (checked on open, rebuilt if not)
    assert len(store.search("garlic", 1000)) == store.count()
    # re-ingesting the new source completes it, with no duplicates
    store.replace("recipes", [Document(content=f"new recipe {i}: fry garlic {i}", name="recipes", meta_data={"v": "new"})
                              for i in range(600)])
    assert versions(store) == {"new": 600} and store.count() == 600


def test_an_unreadable_journal_is_a_clear_error_and_is_left_alone(tmp_path):
    store = chroma(tmp_path)
    store.insert(source("old", 3))
    journal = tmp_path / "src-docs.replace.json"
    journal.write_text("{not json")
    with pytest.raises(VectorDbError, match="unfinished replace journal that cannot be read"):
        chroma(tmp_path).count()
    assert journal.read_text() == "{not json"


# ------------------------------------------------------------------ SqliteDb
def test_a_run_id_stored_twice_is_a_constraint_error_and_the_run_output_survives(tmp_path):
    from rag_core.db import SqliteDb
    from rag_core.db.sqlite import SqliteConstraintError
    from rag_core.models import OpenAIResponses
    from tests.conftest import scripted_agent

    db_file = tmp_path / "agents.db"
    agent, _ = scripted_agent(OpenAIResponses, [{"text": "Noodles."}, {"text": "Again."}], db=SqliteDb(str(db_file)),
                              session_id="s-1")
    agent.run("What is pad thai?", run_id="run-1")
    healthy = db_file.read_bytes()
    with pytest.raises(SqliteConstraintError) as failure:
        agent.run("And again?", run_id="run-1")
    message = str(failure.value)
    assert "run 'run-1' is already stored" in message and "healthy" in message
    assert "corrupt" not in message and "move it aside" not in message
    assert failure.value.output.content == "Again."  # the run happened; its output is on the exception
    assert SqliteDb(str(db_file)).runs("s-1") == [("run-1", "completed")]
    assert db_file.read_bytes() == healthy or SqliteDb(str(db_file)).schema_version() == 1


# ------------------------------------------------------------------ PgVector
CONCURRENT_INSERT = """
import sys
from rag_core import Document
from rag_core.vectordb import PgVector
from tests.fakes import HashEmbedder
url, table = sys.argv[1], sys.argv[2]
store = PgVector(table, db_url=url, embedder=HashEmbedder(), search_type="vector")
docs = [Document(content=f"recipe {i}: fry garlic and shallots {i}") for i in range(300)]
store._prepare(docs)  # embed first, so the processes meet at the write
AWAIT_THE_START
print(store.insert(docs), flush=True)
"""


@pytest.mark.parametrize("run", range(6))
def test_three_processes_creating_and_filling_one_table_at_once_store_one_copy_each(pg_url, run):
    import uuid

    from rag_core.vectordb import PgVector

    table = f"race_{uuid.uuid4().hex[:8]}"
    processes = [spawn(racing(CONCURRENT_INSERT), pg_url, table) for _ in range(3)]
    start_together(processes)
    results = [p.communicate(timeout=120) for p in processes]
    assert all(p.returncode == 0 for p in processes), [err[-1500:] for _, err in results]
    reported = [int(out.strip()) for out, _ in results]
    store = PgVector(table, db_url=pg_url, embedder=HashEmbedder(), search_type="vector")
    try:
        assert store.count() == 300
        assert sum(reported) == 300  # each process reports the rows it really added
    finally:
        store.drop()
        store.close()


@pytest.mark.parametrize("url", [
    "postgresql://app@db.example/rag?password=hunter2&sslmode=require",
    "host=db.example user=app password=hunter2 dbname=rag",
    "host=db.example user=app password='hunter2' dbname=rag",
    "postgresql://app:hunter2@db.example:1/rag",
])
def test_passwords_never_appear_in_connection_errors(url):
    from rag_core.vectordb import PgVector

    store = PgVector("docs", db_url=url.replace("db.example", "127.0.0.1").replace(":1/", ":9/") if "://" in url
                     else url.replace("db.example", "127.0.0.1") + " port=9", embedder=HashEmbedder())
    with pytest.raises(VectorDbError) as failure:
        store.count()
    assert "hunter2" not in str(failure.value) and "***" in str(failure.value)


def test_table_names_whose_index_names_postgres_would_cut_are_refused():
    from rag_core.vectordb import PgVector

    PgVector("t" * 49, db_url="postgresql://localhost/x", embedder=HashEmbedder())
    with pytest.raises(VectorDbError, match="index names add up to 14 more.*use at most 49 bytes"):
        PgVector("t" * 50, db_url="postgresql://localhost/x", embedder=HashEmbedder())


def test_a_query_of_another_dimension_is_a_clear_error_on_pgvector(pg_url):
    import uuid

    from rag_core.vectordb import PgVector

    table = f"dims_{uuid.uuid4().hex[:8]}"
    PgVector(table, db_url=pg_url, embedder=HashEmbedder(32), search_type="vector").insert([Document(content="pad thai")])
    other = PgVector(table, db_url=pg_url, embedder=HashEmbedder(48), search_type="vector")
    try:
        with pytest.raises(VectorDbError, match=rf"PgVector table public\.{table} expects 32-dimensional embeddings, "
                                                r"got 48 dimensions from the query \(embedded by HashEmbedder:hash-48:48\)"):
            other.search("pad thai", 3)
    finally:
        other.drop()
        other.close()


def test_a_query_of_another_dimension_is_a_clear_error_on_chroma(tmp_path):
    ChromaDb("dims", path=str(tmp_path), persistent_client=True, embedder=HashEmbedder(32),
             search_type="vector").insert([Document(content="pad thai")])
    other = ChromaDb("dims", path=str(tmp_path), persistent_client=True, embedder=HashEmbedder(48), search_type="vector")
    with pytest.raises(VectorDbError, match=r"ChromaDb collection 'dims' expects 32-dimensional embeddings, "
                                            r"got 48 dimensions from the query \(embedded by HashEmbedder:hash-48:48\)"):
        other.search("pad thai", 3)


# ------------------------------------------------------------------ keyword search never crashes
@pytest.mark.parametrize("search_type", ["keyword", "hybrid"])
def test_keyword_search_on_an_empty_chroma_store_finds_nothing(tmp_path, search_type):
    store = ChromaDb("empty", path=str(tmp_path), persistent_client=True, embedder=HashEmbedder(), search_type=search_type)
    assert store.search("pad thai", 3) == []


@pytest.mark.parametrize("kind", ["memory", "chroma"])
def test_a_corpus_with_no_indexable_word_finds_nothing(tmp_path, kind):
    from rag_core.vectordb import InMemoryVectorDb

    store = (InMemoryVectorDb(search_type="keyword") if kind == "memory" else
             ChromaDb("stop", path=str(tmp_path), persistent_client=True, embedder=HashEmbedder(), search_type="keyword"))
    store.insert([Document(content="the a of"), Document(content="and is it")])
    assert store.search("the", 3) == [] and store.search("pad thai", 3) == []


@pytest.mark.parametrize("damage", ["garbage", "missing"])
def test_damaged_bm25_files_beside_an_intact_collection_are_rebuilt(tmp_path, damage):
    store = ChromaDb("docs", path=str(tmp_path), persistent_client=True, embedder=HashEmbedder(), search_type="keyword")
    store.insert([Document(content="pad thai noodles"), Document(content="green curry paste")])
    for path in (tmp_path / "docs.bm25").iterdir():
        if path.name != "ids.json":
            path.write_text("{garbage") if damage == "garbage" else path.unlink()
    reopened = ChromaDb("docs", path=str(tmp_path), persistent_client=True, embedder=HashEmbedder(), search_type="keyword")
    assert [d.content for d in reopened.search("curry", 3)] == ["green curry paste"]


# ------------------------------------------------------------------ LanceDb
def test_a_lancedb_table_folder_left_by_a_killed_creation_is_made_anew(tmp_path):
    from rag_core.vectordb import LanceDb

    (tmp_path / "docs.lance" / "_versions").mkdir(parents=True)  # created, never committed
    store = LanceDb(uri=str(tmp_path), table_name="docs", embedder=HashEmbedder(), search_type="hybrid")
    assert store.insert([Document(content="pad thai with tamarind")]) == 1
    assert [d.content for d in store.search("tamarind", 3)] == ["pad thai with tamarind"]


def test_a_lancedb_table_another_process_commits_while_it_is_opened_opens(tmp_path):
    """Seen with two processes ingesting at once: the table was listed (its folder exists), the
    open failed ("Table 'docs' was not found": not committed yet), and by the check after it the
    other process had committed, so the store called the table damaged. Here the first open
    fails that way, as if the other process committed just after it."""
    from rag_core.vectordb import LanceDb

    LanceDb(uri=str(tmp_path), table_name="docs", embedder=HashEmbedder()).insert([Document(content="pad thai")])
    store = LanceDb(uri=str(tmp_path), table_name="docs", embedder=HashEmbedder())
    db = store._connect()
    really_open, calls = db.open_table, []

    def open_after_the_commit(name, *args, **kwargs):
        calls.append(name)
        if len(calls) == 1:
            raise ValueError(f"Table '{name}' was not found")
        return really_open(name, *args, **kwargs)

    db.open_table = open_after_the_commit
    assert store.count() == 1 and calls == ["docs", "docs"]


def test_a_corrupt_lancedb_table_is_a_clear_error_naming_it(tmp_path):
    from rag_core.vectordb import LanceDb

    LanceDb(uri=str(tmp_path), table_name="docs", embedder=HashEmbedder()).insert([Document(content="pad thai")])
    for manifest in (tmp_path / "docs.lance" / "_versions").glob("*.manifest"):
        manifest.write_bytes(b"not a manifest")
    with pytest.raises(VectorDbError, match=r"LanceDB table 'docs' at .* cannot be opened"):
        LanceDb(uri=str(tmp_path), table_name="docs", embedder=HashEmbedder()).count()


# ------------------------------------------------------------------ Chroma server mode
@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    """A real Chroma server (the `chroma run` the chromadb package ships) on loopback."""
    import shutil
    import socket
    import subprocess
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = shutil.which("chroma")
    assert command, "chromadb's `chroma` command is not installed"
    server = subprocess.Popen([command, "run", "--path", str(tmp_path_factory.mktemp("chroma-server")),
                               "--host", "127.0.0.1", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1)
            break
        except OSError:
            assert time.time() < deadline and server.poll() is None, "the Chroma server did not start"
            time.sleep(0.2)
    yield port
    server.terminate()
    server.wait(timeout=30)


def test_chroma_server_mode_keeps_keyword_search_right_across_clients(chroma_server):
    def client(search_type):
        return ChromaDb("shared", host="127.0.0.1", port=chroma_server, embedder=HashEmbedder(), search_type=search_type)

    writer, reader = client("hybrid"), client("keyword")
    writer.insert(source("old", 3))
    assert {d.meta_data["v"] for d in reader.search("garlic", 10)} == {"old"}  # the reader builds its index
    writer.replace("recipes", source("new", 3))  # another client writes, same count: the reader must notice
    assert sorted(d.content for d in reader.search("garlic", 10)) == sorted(d.content for d in source("new", 3))
    other = client("hybrid")
    other.insert([Document(content="green curry with basil", name="curry")])
    assert [d.content for d in reader.search("basil curry", 1)] == ["green curry with basil"]
    assert [d.content for d in writer.search("basil curry", 1)] == ["green curry with basil"]
    assert writer.count() == reader.count() == 4


def test_an_unreachable_chroma_server_is_a_clear_error():
    store = ChromaDb("shared", host="127.0.0.1", port=9, embedder=HashEmbedder())
    with pytest.raises(VectorDbError, match="cannot reach the Chroma server at 127.0.0.1:9"):
        store.count()
