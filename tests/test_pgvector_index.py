"""PgVector's vector index chosen by Agno's names: HNSW(m, ef_search, ef_construction), None for
exact search, and optimize() to give a table loaded for exact search its HNSW index later."""

from __future__ import annotations

import uuid

import pytest

from rag_core import Document
from rag_core.vectordb import VectorDbError
from tests.fakes import HashEmbedder


def _docs(count: int) -> list[Document]:
    return [Document(content=f"document number {n} about topic {n % 7}", id=f"d{n:04d}") for n in range(count)]


def _index_definition(store) -> str | None:
    row = store._connection().execute(
        "SELECT indexdef FROM pg_indexes WHERE schemaname = %s AND indexname = %s",
        (store.schema, f"{store.table_name}_embedding_idx")).fetchone()
    return row[0] if row else None


def test_agno_programs_import_hnsw_beside_pgvector():
    from rag_core.vectordb.pgvector import HNSW, PgVector, SearchType  # noqa: F401

    assert "HNSW" in __import__("rag_core.vectordb.pgvector", fromlist=["__all__"]).__all__


def test_the_hnsw_settings_build_the_index_and_set_the_search(pg_url):
    from rag_core.vectordb.pgvector import HNSW, PgVector

    store = PgVector(f"t_{uuid.uuid4().hex[:8]}", db_url=pg_url, embedder=HashEmbedder(), search_type="vector",
                     vector_index=HNSW(m=8, ef_construction=32, ef_search=40))
    store.insert(_docs(50))
    definition = _index_definition(store)
    assert definition is not None and "hnsw" in definition
    assert "m='8'" in definition and "ef_construction='32'" in definition
    assert store.ef_search == 40 and store.vector_index == HNSW(m=8, ef_construction=32, ef_search=40)
    assert store.search("document number 3 about topic 3", 1)[0].id == "d0003"
    store.drop()


def test_ef_search_changed_on_the_store_is_its_indexs_and_a_bad_value_fails_at_once(pg_url):
    """``store.ef_search = n`` left ``store.vector_index`` saying the old value, and a value
    pgvector refuses was taken, to fail at the next search with PostgreSQL's error."""
    from rag_core.vectordb.pgvector import HNSW, PgVector

    store = PgVector(f"t_{uuid.uuid4().hex[:8]}", db_url=pg_url, embedder=HashEmbedder(), search_type="vector",
                     vector_index=HNSW(m=8, ef_construction=32, ef_search=40))
    store.insert(_docs(20))
    store.ef_search = 7
    assert store.ef_search == 7 and store.vector_index == HNSW(m=8, ef_construction=32, ef_search=7)
    for bad, message in ((0, "positive integer"), (5000, "at most 1000")):
        with pytest.raises(ValueError, match=message):
            store.ef_search = bad
    assert store.ef_search == 7 and store.vector_index.ef_search == 7
    assert store.search("document number 3 about topic 3", 1)[0].id == "d0003"
    store.drop()


def test_an_exact_table_gets_its_hnsw_index_from_optimize_and_loses_it_again(pg_url):
    from rag_core.vectordb.pgvector import HNSW, PgVector

    table = f"t_{uuid.uuid4().hex[:8]}"
    exact = PgVector(table, db_url=pg_url, embedder=HashEmbedder(), search_type="vector", vector_index=None)
    exact.insert(_docs(60))
    assert _index_definition(exact) is None

    indexed = PgVector(table, db_url=pg_url, embedder=HashEmbedder(), search_type="vector",
                       vector_index=HNSW(m=12, ef_construction=48))
    indexed.optimize()
    assert "m='12'" in _index_definition(indexed)
    assert [d.id for d in indexed.search("document number 7 about topic 0", 3)][0] == "d0007"

    indexed.optimize()  # nothing missing: nothing rebuilt, nothing fails
    PgVector(table, db_url=pg_url, embedder=HashEmbedder(), vector_index=HNSW(m=6, ef_construction=24)).optimize(
        force_recreate=True)
    assert "m='6'" in _index_definition(indexed)

    exact.optimize(force_recreate=True)  # the store's setting is exact search: the index goes
    assert _index_definition(exact) is None
    assert exact.count() == 60
    exact.drop()


def test_optimize_on_a_missing_table_does_nothing(pg_url):
    from rag_core.vectordb.pgvector import HNSW, PgVector

    store = PgVector(f"t_{uuid.uuid4().hex[:8]}", db_url=pg_url, embedder=HashEmbedder(), vector_index=HNSW())
    store.optimize()
    assert store.count() == 0


@pytest.mark.parametrize("settings, message", [
    ({"m": 1}, "between 2 and 100"),
    ({"m": 16, "ef_construction": 20}, r"at least 2 \* m = 32"),
    ({"ef_search": 0}, "positive integer"),
    ({"ef_search": 1001}, "at most 1000"),
])
def test_hnsw_refuses_settings_pgvector_would_refuse_later(settings, message):
    from rag_core.vectordb.pgvector import HNSW

    with pytest.raises(ValueError, match=message):
        HNSW(**settings)


def test_an_index_kind_rag_core_does_not_build_is_refused_by_name():
    from rag_core.vectordb.pgvector import PgVector

    class Ivfflat:  # Agno's other index
        lists = 100

    with pytest.raises(VectorDbError, match="no IVFFlat index"):
        PgVector("t_ivf", db_url="postgresql://nowhere/db", embedder=HashEmbedder(), vector_index=Ivfflat())
