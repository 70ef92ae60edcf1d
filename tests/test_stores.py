"""The stores behave alike: ingestion, filters, search types, persistence, errors."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_core import Document, Knowledge
from rag_core.vectordb import ChromaDb, InMemoryVectorDb, LanceDb, PgVector, SearchType, VectorDbError
from tests.fakes import HashEmbedder

RECIPES = [
    ("pad_thai", "Pad thai: rice noodles fried with tamarind, fish sauce and peanuts.", "ThaiRecipes.pdf"),
    ("tom_kha", "Tom kha gai: coconut milk soup with galangal, lemongrass and chicken.", "ThaiRecipes.pdf"),
    ("curry", "Green curry paste: green chillies, garlic, shallots and lemongrass.", "ThaiRecipes.pdf"),
    ("risotto", "Risotto: arborio rice stirred with stock, butter and parmesan.", "ItalianRecipes.pdf"),
    ("pesto", "Pesto: basil, pine nuts, garlic, parmesan and olive oil.", "ItalianRecipes.pdf"),
]

StoreFactory = Callable[..., object]


def _factory(kind: str, request, tmp_path) -> StoreFactory:
    """Build a store of ``kind``; the same ``key`` reopens the same data."""

    def build(key: str = "docs", embedder=None, search_type=SearchType.hybrid, exact: bool = True, **kw):
        embedder = embedder or HashEmbedder()
        if kind == "memory":
            return InMemoryVectorDb(embedder=embedder, search_type=search_type, **kw)
        if kind == "chroma":
            return ChromaDb(f"c-{key}", path=str(tmp_path / "chroma"), persistent_client=True, embedder=embedder,
                            search_type=search_type, **kw)
        if kind == "lancedb":
            return LanceDb(uri=str(tmp_path / "lancedb"), table_name=f"l_{key}", embedder=embedder,
                           search_type=search_type, **kw)
        if kind == "lancedb-s3":  # object storage (moto's S3 on loopback)
            s3 = request.getfixturevalue("s3_bucket")
            return LanceDb(uri=f"s3://{s3['bucket']}/{suffix}/lancedb", table_name=f"l_{key}", embedder=embedder,
                           search_type=search_type, storage_options=s3["storage_options"], **kw)
        url = request.getfixturevalue("pg_url")
        store = PgVector(f"t_{key}_{suffix}", db_url=url, embedder=embedder,
                         search_type=search_type, vector_index=None if exact else "hnsw", **kw)
        created.append(store)
        return store

    suffix = uuid.uuid4().hex[:8]  # the same key reopens the same table within one test
    created: list[PgVector] = []
    request.addfinalizer(lambda: [store.drop() for store in created])  # leave a shared server clean
    build.kind = kind  # type: ignore[attr-defined]
    return build


@pytest.fixture(params=["memory", "chroma", "lancedb", "lancedb-s3", "pgvector"])
def make_store(request, tmp_path) -> StoreFactory:
    return _factory(request.param, request, tmp_path)


@pytest.fixture(params=["chroma", "lancedb", "lancedb-s3", "pgvector"])
def make_persistent_store(request, tmp_path) -> StoreFactory:
    return _factory(request.param, request, tmp_path)


def _fill(knowledge: Knowledge) -> None:
    for name, text, source in RECIPES:
        knowledge.insert(text, name=name, metadata={"source": source})


def test_inserting_the_same_content_twice_stores_it_once(make_store):
    knowledge = Knowledge(vector_db=make_store())
    _fill(knowledge)
    assert knowledge.vector_db.count() == len(RECIPES)
    assert knowledge.insert(RECIPES[0][1], name="again") == 0
    assert knowledge.vector_db.count() == len(RECIPES)


def test_upsert_replaces_a_named_source_and_delete_removes(make_store):
    knowledge = Knowledge(vector_db=make_store())
    _fill(knowledge)
    knowledge.upsert("Pad thai, new recipe: noodles, eggs and lime.", name="pad_thai", metadata={"source": "v2"})
    assert knowledge.vector_db.count() == len(RECIPES)
    [top] = knowledge.search("pad thai noodles", max_results=1)
    assert (top.name, top.meta_data["source"]) == ("pad_thai", "v2")
    assert knowledge.delete(name="pesto") == 1
    assert knowledge.delete(ids=[top.id]) == 1
    assert knowledge.vector_db.count() == len(RECIPES) - 2
    assert all(d.name not in ("pesto", "pad_thai") for d in knowledge.search("pesto pad thai noodles basil"))


@pytest.mark.parametrize("search_type", list(SearchType))
def test_search_types_and_metadata_filters(make_store, search_type):
    knowledge = Knowledge(vector_db=make_store(search_type=search_type))
    _fill(knowledge)
    found = knowledge.search("coconut soup with galangal", max_results=2)
    assert found[0].name == "tom_kha"
    assert found[0].meta_data == {"source": "ThaiRecipes.pdf", "chunk": 0}
    italian = knowledge.search("rice with garlic and parmesan", filters={"source": "ItalianRecipes.pdf"})
    assert italian and {d.meta_data["source"] for d in italian} == {"ItalianRecipes.pdf"}
    assert knowledge.search("garlic", filters={"source": "nowhere"}) == []


def test_a_filter_means_equality_of_the_whole_value_in_every_store(make_store):
    """PgVector filtered by jsonb containment: {"tags": ["soup"]} also matched ["soup", "thai"]."""
    knowledge = Knowledge(vector_db=make_store())
    knowledge.insert("Tom kha gai: coconut soup with galangal.", name="tom_kha", metadata={"tags": ["soup", "thai"]})
    knowledge.insert("Tom yum: hot and sour soup.", name="tom_yum", metadata={"tags": ["soup"]})
    if type(knowledge.vector_db).__name__ == "ChromaDb":  # Chroma's where clauses take scalars only: said
        with pytest.raises(VectorDbError, match="ChromaDb filters need scalar values; 'tags' is list"):
            knowledge.search("soup", filters={"tags": ["soup"]})
        return
    found = knowledge.search("soup", filters={"tags": ["soup"]})
    assert [d.name for d in found] == ["tom_yum"]
    assert {d.name for d in knowledge.search("soup", filters={"tags": ["soup", "thai"]})} == {"tom_kha"}


def test_a_keyword_only_lancedb_leaves_the_callers_documents_as_they_were(tmp_path):
    """LanceDb without an embedder set ``embedding = [0.0]`` on the caller's documents: inserting
    them into a vector store next stored 1-d vectors."""
    documents = [Document(content="Pad thai with tamarind.", name="pad_thai")]
    LanceDb(uri=str(tmp_path / "lance"), table_name="recipes", search_type=SearchType.keyword).insert(documents)
    assert documents[0].embedding is None
    embedder = HashEmbedder()
    vectors = InMemoryVectorDb(embedder=embedder)
    vectors.insert(documents)
    assert len(documents[0].embedding) == len(embedder.get_embedding("pad thai")) > 1


def test_changing_a_document_after_insert_or_a_search_result_leaves_the_store_as_it_was(make_store):
    """Every store hands out documents of their own: the database ones build them from rows,
    and the in-memory one must not share its metadata with the caller either way."""
    store = make_store(search_type="keyword")
    mine = Document(content="Tom kha gai with galangal.", meta_data={"page": 2, "tags": ["soup"]}, name="tom_kha")
    store.insert([mine])
    mine.meta_data["page"] = 5
    mine.meta_data["tags"].append("changed by the caller")
    [found] = store.search("galangal", 1)
    found.meta_data["page"] = 99
    found.meta_data["tags"].append("changed by a reader")
    assert store.search("galangal", 1)[0].meta_data == {"page": 2, "tags": ["soup"]}


@pytest.mark.parametrize("kind", ["memory", "chroma", "chroma-in-memory", "lancedb", "pgvector"])
def test_stores_opened_and_filled_from_several_threads_at_once_each_hold_their_own(kind, request, tmp_path):
    """A server's request threads, or an eval session's background retrievers, open stores at
    the same moment: each must open, fill and search its own."""
    threads = 6
    if kind == "chroma-in-memory":  # Chroma's in-process client, which the default ChromaDb uses
        def factory(key: str) -> ChromaDb:
            return ChromaDb(f"c-{key}-{uuid.uuid4().hex[:8]}", embedder=HashEmbedder(), search_type=SearchType.hybrid)
    else:
        factory = _factory(kind, request, tmp_path)
    start = threading.Barrier(threads)

    def fill_and_search(n: int) -> list[str]:
        store = factory(key=f"thread{n}")
        start.wait()  # every thread's first use (where a store opens) at once
        store.insert([Document(content=f"{text} Batch {n}.", id=f"{n}-{name}") for name, text, _ in RECIPES])
        return sorted(d.id for d in store.search("rice noodles with tamarind", 2))

    with ThreadPoolExecutor(threads) as pool:
        found = list(pool.map(fill_and_search, range(threads)))
    assert all(ids and all(i.startswith(f"{n}-") for i in ids) for n, ids in enumerate(found)), found
    assert all(f"{n}-pad_thai" in ids for n, ids in enumerate(found)), found


def test_nothing_is_lost_or_duplicated_across_a_restart(make_persistent_store):
    make_store = make_persistent_store
    first = Knowledge(vector_db=make_store(key="restart"))
    _fill(first)
    second = Knowledge(vector_db=make_store(key="restart"))
    assert second.vector_db.count() == len(RECIPES)
    _fill(second)
    assert second.vector_db.count() == len(RECIPES)
    assert second.search("coconut galangal soup", max_results=1)[0].name == "tom_kha"
    keyword = Knowledge(vector_db=make_store(key="restart", search_type=SearchType.keyword))
    assert keyword.search("parmesan basil", max_results=1)[0].name == "pesto"


def test_dimension_mismatch_is_a_clear_error(make_persistent_store):
    """One message in every store, naming the store, the size it holds and the size it was given."""
    _fill(Knowledge(vector_db=make_persistent_store(key="dims")))
    other = Knowledge(vector_db=make_persistent_store(key="dims", embedder=HashEmbedder(dimensions=8)))
    store = {"chroma": "ChromaDb collection 'c-dims'", "lancedb": "LanceDb table 'l_dims' at .*",
             "lancedb-s3": "LanceDb table 'l_dims' at s3://.*",
             "pgvector": r"PgVector table public\.t_dims_\w+"}[make_persistent_store.kind]
    with pytest.raises(VectorDbError, match=f"^{store} expects 32-dimensional embeddings, got 8 dimensions from "
                                            "document 'x'; use the embedder the store was built with, or another store$"):
        other.insert("A new recipe with different vectors.", name="x")
    with pytest.raises(VectorDbError, match=f"^{store} expects 32-dimensional embeddings, got 8 dimensions from "
                                            r"the query \(embedded by HashEmbedder:hash-8:8\)"):
        other.vector_db.search("rice noodles", 3)


def test_an_empty_document_is_refused(make_store):
    with pytest.raises(Exception, match="empty|no content"):
        Knowledge(vector_db=make_store()).insert("   ", name="blank")


def test_a_failed_batch_leaves_the_store_as_it_was(make_store):
    class FailingEmbedder(HashEmbedder):
        def _embed_batch(self, texts, input_type):
            if any("poison" in t for t in texts):
                raise RuntimeError("embedding service down")
            return super()._embed_batch(texts, input_type)

    knowledge = Knowledge(vector_db=make_store(key="atomic", embedder=FailingEmbedder()))
    _fill(knowledge)
    docs = [Document(content=f"new doc {i}") for i in range(5)] + [Document(content="poison pill")]
    with pytest.raises(RuntimeError, match="embedding service down"):
        knowledge.insert(documents=docs)
    assert knowledge.vector_db.count() == len(RECIPES)


def test_pgvector_rolls_back_a_batch_the_database_refuses(pg_url):
    store = PgVector(f"t_rollback_{uuid.uuid4().hex[:8]}", db_url=pg_url, embedder=HashEmbedder())
    knowledge = Knowledge(vector_db=store)
    _fill(knowledge)
    good = Document(content="good", embedding=[1.0] * 32)
    bad = Document(content="bad", embedding=[float("nan")] * 32)  # pgvector refuses NaN
    with pytest.raises(Exception, match="NaN"):
        store.insert([good, bad])
    assert store.count() == len(RECIPES)
    store.drop()



def _pg_indexes(store: PgVector) -> set[str]:
    rows = store._connection().execute("SELECT indexname FROM pg_indexes WHERE tablename = %s", (store.table_name,))
    return {r[0] for r in rows.fetchall()} - {f"{store.table_name}_pkey"}


def test_pgvector_builds_its_indexes_after_the_first_load_and_then_keeps_them(pg_url):
    """A bulk load into a new table goes in before its vector index (built once, in bulk);
    later writes insert into the existing index, which then serves vector search."""
    table = f"t_later_{uuid.uuid4().hex[:8]}"
    store = PgVector(table, db_url=pg_url, embedder=HashEmbedder(), search_type="vector")
    store._ensure_table(HashEmbedder().dimensions)
    assert _pg_indexes(store) == {f"{table}_{kind}_idx" for kind in ("meta", "name")}
    store.insert([Document(content=f"recipe {n}", name=f"r{n}") for n in range(50)])
    expected = {f"{table}_{kind}_idx" for kind in ("meta", "name", "embedding")}
    assert _pg_indexes(store) == expected
    store.insert([Document(content="one more recipe", name="late")])
    assert _pg_indexes(store) == expected and store.count() == 51
    with store._connection().transaction():
        store._connection().execute("SET LOCAL enable_seqscan = off")
        plan = "\n".join(r[0] for r in store._connection().execute(
            f"EXPLAIN SELECT id FROM {table} ORDER BY embedding <=> %s::vector LIMIT 5",
            (str([0.1] * HashEmbedder().dimensions),)).fetchall())
    assert f"Index Scan using {table}_embedding_idx" in plan

def test_pgvector_keeps_vectors_in_the_tables_own_pages(pg_url):
    """An exact search reads every vector: each one moved out to TOAST beside the long content
    was an extra index lookup (twice the time per query on SciFact)."""
    table = f"t_plain_{uuid.uuid4().hex[:8]}"
    # 384 dimensions (1.5 kB) beside content well over 2 kB: the row must shrink to be stored
    store = PgVector(table, db_url=pg_url, embedder=HashEmbedder(384), search_type="vector", vector_index=None)
    store.insert([Document(content=f"recipe {n} " * 400, name=f"r{n}") for n in range(20)])
    conn = store._connection()
    storage = conn.execute("SELECT attstorage FROM pg_attribute WHERE attrelid = %s::regclass AND attname = 'embedding'",
                           (table,)).fetchone()[0]
    assert storage == "m"  # MAIN: in place, moved out only if a row could not fit a page otherwise
    toasted = conn.execute(f"SELECT count(*) FROM {table} WHERE pg_column_toast_chunk_id(embedding) IS NOT NULL").fetchone()[0]
    assert toasted == 0 and store.count() == 20
    store.drop()


@pytest.mark.parametrize("name", ["docs; DROP TABLE x", "1abc", "a" * 64, "docs\"", "robert'); --"])
def test_pgvector_refuses_unsafe_table_names(name):
    with pytest.raises(VectorDbError, match="invalid table name"):
        PgVector(name, db_url="postgresql://localhost/db")


def test_pgvector_reports_an_unreachable_database():
    store = PgVector("docs", db_url="postgresql+psycopg://me:s3cret@127.0.0.1:1/db", embedder=HashEmbedder())
    with pytest.raises(VectorDbError, match=r"cannot connect to PostgreSQL at postgresql://me:\*\*\*@127.0.0.1:1/db") as info:
        store.count()
    assert "s3cret" not in str(info.value)


def test_chroma_needs_an_embedder(tmp_path):
    with pytest.raises(VectorDbError, match="needs an embedder"):
        ChromaDb("docs", path=str(tmp_path))


def test_chroma_rebuilds_a_stale_keyword_index(tmp_path):
    store = ChromaDb("docs", path=str(tmp_path), persistent_client=True, embedder=HashEmbedder(), search_type="keyword")
    _fill(Knowledge(vector_db=store))
    # another process adds a document behind the index's back
    store.collection.add(ids=["x1"], documents=["saffron paella"], embeddings=[[1.0] * 32],
                         metadatas=[{"_rag_meta": "{}"}])
    reopened = ChromaDb("docs", path=str(tmp_path), persistent_client=True, embedder=HashEmbedder(), search_type="keyword")
    assert [d.id for d in reopened.search("saffron paella", 1)] == ["x1"]


# ---------------------------------------------------------------- exact search agrees everywhere
words = st.sampled_from("noodle rice curry soup coconut lime basil garlic chilli peanut fish sugar salt".split())
texts = st.lists(words, min_size=1, max_size=6).map(" ".join)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(corpus=st.lists(texts, min_size=1, max_size=25, unique=True), query=texts, limit=st.integers(1, 8))
def test_exact_vector_search_gives_the_same_top_k_on_every_store(pg_url, tmp_path_factory, corpus, query, limit):
    key = uuid.uuid4().hex[:10]
    stores = [
        InMemoryVectorDb(embedder=HashEmbedder(), search_type="vector"),
        ChromaDb(f"c-{key}", path=str(tmp_path_factory.mktemp("c")), embedder=HashEmbedder(), search_type="vector",
                 ef_search=500, ef_construction=500),
        PgVector(f"t_{key}", db_url=pg_url, embedder=HashEmbedder(), search_type="vector", vector_index=None),
        LanceDb(uri=str(tmp_path_factory.mktemp("l")), table_name=f"l_{key}", embedder=HashEmbedder(), search_type="vector"),
    ]
    results = []
    try:
        for store in stores:
            store.insert([Document(content=t, meta_data={"words": len(t.split())}) for t in corpus])
            # whole documents: a result is the same on every store, down to the fields it carries
            # (the in-memory one used to hand back each result's vector, which no other store does)
            results.append([(d.id, d.name, d.content, d.meta_data, d.embedding) for d in store.search(query, limit)])
    finally:  # hypothesis runs many examples: each must give its connection back
        stores[2].drop()
        stores[2].close()
    # the same results, in the same order, but where documents tie at the cut-off: each store may
    # keep any of the tied ones (ties are common here: a text that shares no word scores 0)
    cosine = _cosines(HashEmbedder(), query)
    last = min(cosine(content) for _, _, content, _, _ in results[0]) if results[0] else 0.0
    def ranked(found: list[tuple]) -> list[tuple]:  # in score order; tied documents by id
        return sorted(found, key=lambda row: (-round(cosine(row[2]), 9), row[0]))

    above = ranked([row for row in results[0] if cosine(row[2]) > last + 1e-9])
    for found in results:
        assert len(found) == len(results[0])
        assert [round(cosine(row[2]), 9) for row in found] == sorted((round(cosine(row[2]), 9) for row in found),
                                                                      reverse=True)
        assert ranked(found[:len(above)]) == above
        assert all(abs(cosine(row[2]) - last) <= 1e-9 for row in found[len(above):])


def _cosines(embedder: HashEmbedder, query: str) -> Callable[[str], float]:
    import numpy as np

    wanted = np.asarray(embedder.get_embedding(query), dtype=np.float64)

    def cosine(text: str) -> float:
        vector = np.asarray(embedder.get_embedding(text), dtype=np.float64)
        norms = float(np.linalg.norm(vector) * np.linalg.norm(wanted))
        return float(vector @ wanted) / norms if norms else 0.0

    return cosine


def test_in_memory_refuses_mixed_dimensions():
    store = InMemoryVectorDb(embedder=HashEmbedder())
    store.insert([Document(content="a")])
    with pytest.raises(VectorDbError, match="^InMemoryVectorDb expects 32-dimensional embeddings, got 8 dimensions "
                                            "from document 'b'"):
        store.insert([Document(content="b", embedding=[1.0] * 8, name="b")])


def test_a_batch_of_mixed_dimensions_is_refused_by_an_empty_store(make_store):
    store = make_store(key="mixed")
    batch = [Document(content="a", embedding=[1.0] * 32, name="a"), Document(content="b", embedding=[1.0] * 8, name="b")]
    with pytest.raises(VectorDbError, match="expects 32-dimensional embeddings, got 8 dimensions from document 'b'"):
        store.insert(batch)
    assert store.count() == 0


def test_pgvector_hybrid_in_sql_equals_fusing_its_own_rankings(pg_url):
    from rag_core.vectordb.fusion import reciprocal_rank_fusion

    store = PgVector(f"t_fusion_{uuid.uuid4().hex[:8]}", db_url=pg_url, embedder=HashEmbedder(), search_type="hybrid")
    _fill(Knowledge(vector_db=store))
    for query in ("rice garlic", "coconut soup", "parmesan basil garlic"):
        vector = store.embedder.embed([query], "query")[0]
        for filters in (None, {"source": "ThaiRecipes.pdf"}):
            python = reciprocal_rank_fusion(
                [[i for i, _ in store._vector_ranking(vector, 30, filters)],
                 [i for i, _ in store._keyword_ranking(query, 30, filters)]], k=60)
            assert store._hybrid_ranking(query, vector, 30, filters) == python
    store.drop()


def _random_corpus(n: int, dims: int, seed: int):
    import numpy as np

    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, dims)).astype("float32")
    return [Document(content=f"doc {i}", id=f"d{i:05d}", embedding=v.tolist()) for i, v in enumerate(vectors)]


class _Fixed(HashEmbedder):
    """Embeds query texts of the form 'q<i>' to prepared vectors."""

    def __init__(self, queries):
        super().__init__(len(queries[0]))
        self.queries = queries

    def _embed_batch(self, texts, input_type):
        return [self.queries[int(t[1:])] for t in texts]


def test_hnsw_recall_at_10_against_exact_search_on_5k_documents(pg_url, tmp_path):
    import numpy as np

    docs = _random_corpus(5000, 32, seed=7)
    queries = np.random.default_rng(8).normal(size=(50, 32)).astype("float32").tolist()
    embedder = _Fixed(queries)
    exact = InMemoryVectorDb(embedder=embedder, search_type="vector")
    exact.insert(docs)
    approximate = {
        "pgvector": PgVector(f"t_hnsw_{uuid.uuid4().hex[:8]}", db_url=pg_url, embedder=embedder, search_type="vector",
                             vector_index="hnsw", ef_search=100),
        "chroma": ChromaDb("hnsw", path=str(tmp_path), embedder=embedder, search_type="vector"),
    }
    for name, store in approximate.items():
        store.insert(docs)
        hits = 0
        for i in range(len(queries)):
            truth = {d.id for d in exact.search(f"q{i}", 10)}
            hits += len(truth & {d.id for d in store.search(f"q{i}", 10)})
        recall = hits / (10 * len(queries))
        assert recall >= 0.98, f"{name}: HNSW recall@10 {recall:.3f}"
    approximate["pgvector"].drop()


def test_bm25_indexes_over_the_same_texts_are_built_once_per_process():
    from rag_core.vectordb.bm25_index import BM25Index

    texts = [("a", "pad thai with tamarind"), ("b", "green curry with basil")]
    first, second, other_k1 = BM25Index(), BM25Index(), BM25Index(k1=1.2)
    for index in (first, second, other_k1):
        index.add(texts)
        assert index.rank("tamarind", 5)[0][0] == "a"
    assert second._index is first._index and other_k1._index is not first._index
    second.add([("c", "tamarind water")])
    assert {doc for doc, _ in second.rank("tamarind", 5)} == {"a", "c"}  # rebuilt with the new text
    assert second._index is not first._index and first.rank("tamarind", 5)[0][0] == "a"


def test_keyword_indexes_built_in_several_threads_at_once_share_the_process_cache_safely(monkeypatch):
    """Stores in a server's request threads (or an eval session's background retrievers) look up,
    reorder and evict the process's built BM25 indexes at once. Unguarded, a thread reordering a
    key another thread had just evicted raised KeyError. Builds are stubbed to nothing, so
    lookups and evictions (more corpora than the cache keeps) are all the threads do."""
    import sys

    from rag_core.vectordb import bm25_index

    monkeypatch.setattr(bm25_index.BM25Index, "_index_of", lambda self, texts: object())
    corpora = bm25_index._BUILT_KEPT + 2

    def build_many(n: int) -> int:
        for turn in range(2000):
            index = bm25_index.BM25Index()
            index._texts = {f"doc{(n + turn) % corpora}": "text"}
            index._build()
        return n

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch after almost every bytecode: races show at once
    try:
        for _ in range(3):
            with ThreadPoolExecutor(8) as pool:
                assert sorted(pool.map(build_many, range(8))) == list(range(8))
    finally:
        sys.setswitchinterval(switch)


def test_stores_of_one_table_on_object_storage_write_one_at_a_time_and_store_each_document_once(s3_bucket):
    """No file lock can cover object storage: this process's stores of one table there share one
    writers' lock, so two of them ingesting one corpus at once store each document once."""
    uri = f"s3://{s3_bucket['bucket']}/{uuid.uuid4().hex[:8]}/lancedb"
    stores = [LanceDb(uri=uri, table_name="shared", embedder=HashEmbedder(), storage_options=s3_bucket["storage_options"])
              for _ in range(2)]
    assert stores[0]._process_lock() is stores[1]._process_lock()
    documents = [Document(content=f"recipe number {i}: rice, fish sauce and lime", name=f"r{i}") for i in range(30)]
    start = threading.Barrier(2)

    def ingest(store: LanceDb) -> None:
        start.wait(timeout=10)
        for first in range(0, len(documents), 5):
            store.insert([Document(content=d.content, name=d.name) for d in documents[first:first + 5]])

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(ingest, stores))
    assert stores[0].count() == len(documents)
    assert LanceDb(uri=uri, table_name="shared", embedder=HashEmbedder(),
                   storage_options=s3_bucket["storage_options"]).search("rice fish sauce", 3)
