"""PgVector's keyword search is Okapi BM25 computed in SQL, exact after every kind of write."""

from __future__ import annotations

import math
import threading
import uuid
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_core import Document
from rag_core.vectordb import PgVector, VectorDbError
from rag_core.vectordb.bm25_index import BM25_B, BM25_K1
from rag_core.vectordb.pg_bm25 import Bm25Tables
from tests.fakes import HashEmbedder

# a small vocabulary so that lexemes repeat across documents (stop words, stems that merge)
WORDS = ["basil", "chili", "chilies", "curry", "noodle", "noodles", "coconut", "milk", "lime", "rice",
         "fish", "sauce", "running", "runs", "the", "and", "of", "pad-thai", "tom", "kha", "42"]
texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=14).map(" ".join)
QUERIES = ["noodles", "coconut milk", "running chili chilies", "the and", "pad-thai with fish sauce", "tom kha 42",
           "basil basil lime"]


def _store(pg_url: str, table: str) -> PgVector:
    return PgVector(table, db_url=pg_url, embedder=HashEmbedder(), search_type="keyword", vector_index=None)


def _python_bm25(store: PgVector, query: str) -> dict[str, float]:
    """The same formula, computed here over the lexemes PostgreSQL put in each row's tsv."""
    conn = store._connection()
    docs: dict[str, dict[str, int]] = {}
    for doc_id in [r[0] for r in conn.execute(f"SELECT id FROM {store.table_name}").fetchall()]:
        docs[doc_id] = {}
    for doc_id, lexeme, tf in conn.execute(
            f"SELECT id, x.lexeme, cardinality(x.positions) FROM {store.table_name}, unnest(tsv) AS x").fetchall():
        docs[doc_id][lexeme] = tf
    terms = conn.execute("SELECT tsvector_to_array(to_tsvector('english', %s))", (query,)).fetchone()[0]
    n = len(docs)
    lengths = {doc_id: sum(tfs.values()) for doc_id, tfs in docs.items()}
    avgdl = sum(lengths.values()) / max(n, 1)
    df = Counter(lexeme for tfs in docs.values() for lexeme in tfs)
    scores = {}
    for doc_id, tfs in docs.items():
        found = [lexeme for lexeme in terms if lexeme in tfs]
        if found:
            scores[doc_id] = sum(
                math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                * tfs[t] / (tfs[t] + BM25_K1 * (1 - BM25_B + BM25_B * lengths[doc_id] / avgdl))
                for t in found)
    return scores


def _assert_sql_equals_python(store: PgVector) -> None:
    for query in QUERIES:
        expected = _python_bm25(store, query)
        ranking = store._keyword_ranking(query, 10_000, None)
        got = dict(ranking)
        assert got.keys() == expected.keys(), query
        for doc_id, score in expected.items():
            assert got[doc_id] == pytest.approx(score, abs=1e-9, rel=0), (query, doc_id)
        # best first, ties by id: the order every store returns
        assert ranking == sorted(ranking, key=lambda item: (-item[1], item[0]))


operations = st.lists(st.one_of(
    st.tuples(st.just("insert"), st.lists(st.tuples(st.sampled_from("abc"), texts), min_size=1, max_size=6)),
    st.tuples(st.just("upsert"), st.lists(st.tuples(st.sampled_from("abc"), texts), min_size=1, max_size=4)),
    st.tuples(st.just("replace"), st.sampled_from("abc"), st.lists(texts, max_size=4)),
    st.tuples(st.just("delete_name"), st.sampled_from("abc")),
    st.tuples(st.just("delete_some"), st.integers(0, 3)),
    st.tuples(st.just("edit_by_sql"), texts),  # a write from outside rag-core changes one row's content
), min_size=1, max_size=7)


def _apply(store: PgVector, operation: tuple) -> None:
    kind, *args = operation
    if kind == "insert":
        store.insert([Document(content=text, name=name) for name, text in args[0]])
    elif kind == "upsert":  # the same content under another name and metadata: an UPDATE
        store.upsert([Document(content=text, name=name, meta_data={"v": 2}) for name, text in args[0]])
    elif kind == "replace":
        store.replace(args[0], [Document(content=text, name=args[0]) for text in args[1]])
    elif kind == "delete_name":
        store.delete(name=args[0])
    elif kind == "delete_some":
        ids = [r[0] for r in store._connection().execute(
            f"SELECT id FROM {store.table_name} ORDER BY id LIMIT %s", (args[0],)).fetchall()]
        store.delete(ids=ids)
    else:
        store._connection().execute(
            f"UPDATE {store.table_name} SET content = %s WHERE id = (SELECT min(id) FROM {store.table_name})", (args[0],))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=operations)
def test_sql_bm25_equals_the_formula_computed_in_python_after_any_writes(pg_url, steps):
    store = _store(pg_url, f"t_bm25_{uuid.uuid4().hex[:8]}")
    store._ensure_table(HashEmbedder().dimensions)
    try:
        for step in steps:
            _apply(store, step)
        _assert_sql_equals_python(store)
    finally:
        store.drop()
        store.close()


def test_a_table_made_before_bm25_gets_its_statistics_once_on_first_open(pg_url, monkeypatch):
    table = f"t_old_{uuid.uuid4().hex[:8]}"
    store = _store(pg_url, table)
    conn = store._connection()
    # the layout earlier versions created: no side tables, no triggers
    conn.execute(f"""CREATE TABLE {table} (id text PRIMARY KEY, name text, content text NOT NULL,
        meta_data jsonb NOT NULL DEFAULT '{{}}'::jsonb, embedding vector(32),
        tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED)""")
    conn.execute(f"CREATE INDEX {table}_tsv_idx ON {table} USING gin (tsv)")
    for n, text in enumerate(["rice noodles and fish sauce", "coconut milk curry", "lime and chili", "the and"]):
        conn.execute(f"INSERT INTO {table} (id, name, content) VALUES (%s, 'old', %s)", (f"d{n}", text))
    installs = []
    original = Bm25Tables.install
    monkeypatch.setattr(Bm25Tables, "install", lambda self, c: (installs.append(self.table), original(self, c)))
    try:
        assert [doc_id for doc_id, _ in store._keyword_ranking("curry with coconut", 10, None)] == ["d1"]
        _assert_sql_equals_python(store)
        store.insert([Document(content="green curry paste", name="new")])
        _assert_sql_equals_python(store)
        reopened = _store(pg_url, table)
        assert [doc_id for doc_id, _ in reopened._keyword_ranking("curry", 10, None)][:2]
        reopened.close()
        assert installs == [table]  # built once; the reopened store found them
    finally:
        store.drop()
    assert conn.execute("SELECT to_regclass(%s)", (f"{table}_bm25_postings",)).fetchone()[0] is None


def test_a_refused_batch_leaves_the_statistics_as_they_were(pg_url):
    store = PgVector(f"t_refused_{uuid.uuid4().hex[:8]}", db_url=pg_url, embedder=HashEmbedder(),
                     search_type="keyword")
    try:
        store.insert([Document(content="rice noodles"), Document(content="coconut milk")])
        before = store._keyword_ranking("rice coconut", 10, None)
        bad = Document(content="rice rice rice", embedding=[float("nan")] * 32)  # pgvector refuses NaN
        with pytest.raises(Exception):
            store.insert([Document(content="more rice"), bad])
        assert store._keyword_ranking("rice coconut", 10, None) == before
        _assert_sql_equals_python(store)
    finally:
        store.drop()


def _postings_key(store: PgVector) -> list[tuple[str, str]]:
    return store._connection().execute(
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'p'",
        (f"{store.table_name}_bm25_postings",)).fetchall()


def test_a_first_load_refused_part_way_leaves_the_empty_table_and_its_postings_key_as_they_were(pg_url):
    """The first write into an empty table builds the postings' key after the postings (see
    Bm25Tables.first_load): refused, it leaves the key as the table was created with it."""
    store = _store(pg_url, f"t_first_{uuid.uuid4().hex[:8]}")
    store._ensure_table(HashEmbedder().dimensions)
    try:
        created = _postings_key(store)
        assert created == [(f"{store.table_name}_bm25_postings_pkey", "PRIMARY KEY (lexeme, id) INCLUDE (tf, len)")]
        bad = Document(content="rice rice rice", embedding=[float("nan")] * 32)  # pgvector refuses NaN
        with pytest.raises(Exception):
            store.insert([Document(content=f"rice noodles {n}") for n in range(50)] + [bad])
        assert store.count() == 0 and _postings_key(store) == created
        assert store.insert([Document(content=f"rice noodles {n}") for n in range(50)]) == 50
        assert _postings_key(store) == created  # rebuilt under its own name, the same definition
        _assert_sql_equals_python(store)
        store.delete(ids=[d for d, _ in store._keyword_ranking("rice", 100, None)])
        assert store.count() == 0
        store.insert([Document(content="coconut milk"), Document(content="rice and coconut")])  # empty again: first load
        assert _postings_key(store) == created
        _assert_sql_equals_python(store)
    finally:
        store.drop()
        store.close()


def test_concurrent_writers_keep_the_statistics_exact(pg_url):
    """Two processes' stores replacing overlapping sources at once: no deadlock, exact counts."""
    table = f"t_race_{uuid.uuid4().hex[:8]}"
    first, second = _store(pg_url, table), _store(pg_url, table)
    first.insert([Document(content="seed document", name="seed")])
    errors: list[BaseException] = []

    def write(store: PgVector, offset: int) -> None:
        try:
            for n in range(15):
                name = "abc"[(n + offset) % 3]
                store.replace(name, [Document(content=f"{name} rice noodle {n} {offset}", name=name),
                                     Document(content=f"curry {name} milk", name=name)])
                if n % 4 == 3:
                    store.delete(name="abc"[n % 3])
        except BaseException as exc:  # reported below, not swallowed
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(store, n)) for n, store in enumerate((first, second))]
    [t.start() for t in threads]
    [t.join() for t in threads]
    try:
        assert errors == []
        _assert_sql_equals_python(first)
    finally:
        second.close()
        first.drop()


def test_a_role_that_cannot_build_the_statistics_gets_one_clear_error(pg_url):
    table = f"t_ro_{uuid.uuid4().hex[:8]}"
    owner = _store(pg_url, table)
    conn = owner._connection()
    conn.execute(f"CREATE TABLE {table} (id text PRIMARY KEY, name text, content text NOT NULL, "
                 "meta_data jsonb NOT NULL DEFAULT '{}'::jsonb, embedding vector(32), "
                 "tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED)")
    role = f"reader_{uuid.uuid4().hex[:8]}"
    conn.execute(f"CREATE ROLE {role} LOGIN")
    conn.execute(f"GRANT SELECT ON {table} TO {role}")
    try:
        reader = _store(pg_url.replace("postgres:@", f"{role}:@", 1), table)
        with pytest.raises(VectorDbError, match=f"{table} has no BM25 statistics yet .*open it once as its owner"):
            reader._keyword_ranking("rice", 5, None)
        reader.close()
    finally:
        conn.execute(f"DROP TABLE {table}")
        conn.execute(f"DROP ROLE {role}")
        owner.close()
