"""PgVector: documents in PostgreSQL with pgvector, for stores beyond one machine.

Table layout: ``id`` (content hash) primary key, ``name``, ``content``, ``meta_data``
jsonb (GIN index, filters by containment), ``embedding vector(n)`` (HNSW cosine index,
``vector_index=HNSW(...)``, or none for exact search, ``vector_index=None``), and ``tsv``, a
generated tsvector: PostgreSQL's tokens and stems of the content, from which keyword search
computes BM25 (see pg_bm25.py). Hybrid search is one SQL statement: reciprocal rank fusion of
the two ranked lists, with the same formula and tie-break as the other stores.

Every write is one transaction (a failed batch leaves the table as it was); every value
is a bound parameter; table and schema names are validated and quoted.
"""

from __future__ import annotations

import dataclasses

import functools
import json
import re
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any, Literal

from rag_core._optional import require
from rag_core.document import Document, embedding_of
from rag_core.vectordb.base import Ranking, VectorDb, VectorDbError
from rag_core.vectordb.bm25_index import BM25_B, BM25_K1
from rag_core.vectordb.pgvector_index import HNSW
from rag_core.vectordb.pg_bm25 import NAME_SUFFIXES as _BM25_SUFFIXES, Bm25Tables
from rag_core.vectordb.search_type import SearchType
from rag_core.vectordb.similarity import SIMILARITY_PRECISION

if TYPE_CHECKING:
    from rag_core.embedder.base import Embedder
    from rag_core.reranker.base import Reranker

# SearchType and HNSW too: Agno programs import them from here
# (from agno.vectordb.pgvector import PgVector, SearchType, HNSW)
__all__ = ["HNSW", "PgVector", "SearchType"]

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
# PostgreSQL keeps the first 63 bytes of a name; the names of indexes and BM25 tables are the
# table's plus these
_INDEX_SUFFIXES = ("_tsv_idx", "_meta_idx", "_name_idx", "_embedding_idx", *_BM25_SUFFIXES)
_NAME_LIMIT = 63
# All DDL rag-core runs (extension, schema, table, indexes) takes this one transaction-scoped
# advisory lock: CREATE ... IF NOT EXISTS is not safe against a concurrent CREATE of the same
# object (both pass the check, one fails on the catalog's unique index), and DDL is rare enough
# that serialising all of it costs nothing measurable.
_DDL_LOCK = 0x7261675F636F7265  # "rag_core"


def _identifier(kind: str, value: str, suffixes: tuple[str, ...] = ()) -> str:
    if not isinstance(value, str) or not _IDENTIFIER.match(value):
        raise VectorDbError(
            f"invalid {kind} {value!r}: use a letter or '_' followed by up to 62 letters, digits or '_'"
        )
    longest = max((len(s) for s in suffixes), default=0)
    if len(value.encode()) + longest > _NAME_LIMIT:
        raise VectorDbError(
            f"{kind} {value!r} is {len(value.encode())} bytes; its index names add up to {longest} more "
            f"({', '.join(suffixes)}) and PostgreSQL cuts names at {_NAME_LIMIT} bytes: use at most "
            f"{_NAME_LIMIT - longest} bytes"
        )
    return value


def _masked(url: str) -> str:
    """The URL or key=value connection string with every password replaced by ***."""
    url = re.sub(r"://([^:/@?]+):[^@/?]*@", r"://\1:***@", url)
    return re.sub(r"(?i)\b(password\s*=\s*)('[^']*'|[^&\s]*)", r"\1***", url)


def _float32(values: Any) -> Any:
    """A vector as pgvector stores it (float32), for binary transfer."""
    np = require("numpy", extra="pgvector", feature="PgVector")

    return np.asarray(values, dtype=np.float32)


class PgVector(VectorDb):
    def __init__(
        self,
        table_name: str,
        db_url: str,
        schema: str = "public",
        embedder: Embedder | None = None,
        search_type: SearchType | str | None = None,
        hybrid_rrf_k: int = 60,
        reranker: Reranker | None = None,
        candidate_depth: int | None = None,
        dimensions: int | None = None,
        vector_index: HNSW | Literal["hnsw"] | None = "hnsw",
        ef_search: int = 100,
        hnsw_m: int = 16,
        hnsw_ef_construction: int = 64,
        text_search_config: str = "english",
        name: str | None = None,
        description: str | None = None,
        bm25_k1: float = BM25_K1,
        bm25_b: float = BM25_B,
    ) -> None:
        super().__init__(embedder, search_type, hybrid_rrf_k, reranker, candidate_depth, name, description)
        self.bm25_k1, self.bm25_b = float(bm25_k1), float(bm25_b)  # BM25's parameters apply at query time
        self.table_name = _identifier("table name", table_name, _INDEX_SUFFIXES)
        self.schema = _identifier("schema name", schema)
        self.text_search_config = _identifier("text search configuration", text_search_config)
        if not (vector_index is None or vector_index == "hnsw" or isinstance(vector_index, HNSW)):
            raise VectorDbError(f"vector_index must be HNSW(...) (or 'hnsw') or None (exact search), got "
                                f"{vector_index!r}: rag-core's PgVector builds no IVFFlat index")
        if isinstance(vector_index, HNSW):  # its settings, not the keyword arguments' defaults
            ef_search, hnsw_m = vector_index.ef_search, vector_index.m
            hnsw_ef_construction = vector_index.ef_construction
        self.db_url = db_url.replace("postgresql+psycopg://", "postgresql://", 1)
        self.dimensions = dimensions or (embedder.dimensions if embedder is not None else None)
        self.vector_index = None if vector_index is None else HNSW(
            m=hnsw_m, ef_search=ef_search, ef_construction=hnsw_ef_construction)
        self.ef_search = ef_search  # the property checks it as the index's own setting
        self.hnsw_m = hnsw_m
        self.hnsw_ef_construction = hnsw_ef_construction
        self._conn: Any = None
        self._indexes_ready: set[str] = set()
        self._table_ready = False
        self._bm25_ready = False

    # ----------------------------------------------------------- connection and schema
    def _sql(self) -> Any:
        return require("psycopg.sql", extra="pgvector", feature="PgVector", package="psycopg")

    @property
    def _table(self) -> Any:
        sql = self._sql()
        return sql.Identifier(self.schema, self.table_name)

    @functools.cached_property
    def _bm25(self) -> Bm25Tables:
        self._sql()  # psycopg installed, or the extra's hint
        return Bm25Tables(self.schema, self.table_name, self.text_search_config)

    def _connection(self) -> Any:
        if self._conn is None or self._conn.closed:
            psycopg = require("psycopg", extra="pgvector", feature="PgVector")
            try:
                self._conn = psycopg.connect(self.db_url, autocommit=True, connect_timeout=10)
            except psycopg.OperationalError as exc:
                reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise VectorDbError(f"cannot connect to PostgreSQL at {_masked(self.db_url)}: {reason}") from exc
            if self._conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() is None:
                with self._conn.transaction():
                    self._conn.execute("SELECT pg_advisory_xact_lock(%s)", (_DDL_LOCK,))
                    self._conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            pgvector_psycopg = require("pgvector.psycopg", extra="pgvector", feature="PgVector", package="pgvector")
            pgvector_psycopg.register_vector(self._conn)  # embeddings come back as numpy arrays
        return self._conn

    def _describe(self) -> str:
        return f"PgVector table {self.schema}.{self.table_name}"

    def _stored_dimensions(self) -> int | None:
        # what the table holds, read from it unless this process made sure of it (_ensure_table):
        # another embedder may have created it; an unsized vector column takes any size
        return (self.dimensions if self._table_ready else self._column_dimensions()) or None

    def _column_dimensions(self) -> int | None:
        """The size of the table's vector column: None when there is no table, 0 when it is unsized."""
        row = self._connection().execute(
            """SELECT a.atttypmod FROM pg_attribute a JOIN pg_class c ON a.attrelid = c.oid
               JOIN pg_namespace n ON c.relnamespace = n.oid
               WHERE n.nspname = %s AND c.relname = %s AND a.attname = 'embedding' AND NOT a.attisdropped""",
            (self.schema, self.table_name),
        ).fetchone()
        if row is None:
            return None
        return row[0] if row[0] > 0 else 0

    def _ensure_table(self, dimensions: int | None) -> None:
        if self._table_ready:
            return
        conn = self._connection()
        if self._column_dimensions() is None:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_DDL_LOCK,))
                # each statement sees what committed before it: a table another process created
                # while this one waited for the lock is found here, and not created twice
                if self._column_dimensions() is None:
                    self._create(conn, dimensions or self.dimensions)
        stored = self._column_dimensions()
        wanted = dimensions or self.dimensions
        if stored and wanted and stored != wanted:
            source = self.embedder.cache_key if self.embedder is not None else f"the store's setting dimensions={wanted}"
            raise self._dimension_error(stored, wanted, source)
        self.dimensions = stored or wanted
        self._table_ready = True
        self._ensure_bm25()

    def _ensure_bm25(self) -> None:
        """The BM25 statistics of the table, built once for a table made before they existed."""
        if self._bm25_ready:
            return
        conn, bm25 = self._connection(), self._bm25
        if not bm25.installed(conn):
            psycopg = require("psycopg", extra="pgvector", feature="PgVector")
            try:
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_DDL_LOCK,))
                    if not bm25.installed(conn):  # another process may have built them while we waited
                        bm25.install(conn)
            except psycopg.errors.InsufficientPrivilege as exc:
                raise VectorDbError(
                    f"table {self.schema}.{self.table_name} has no BM25 statistics yet and this role cannot create "
                    f"them ({str(exc).strip().splitlines()[0]}): open it once as its owner"
                ) from exc
        self._bm25_ready = True

    def _create(self, conn: Any, dims: int | None) -> None:
        """The table and its keyword, metadata and name indexes (the vector index comes with the
        first load, see _write); the caller holds the DDL lock inside a transaction.

        The BM25 side tables and their triggers come with it (keyword search reads them)."""
        sql = self._sql()
        vector_type = sql.SQL("vector({})").format(sql.Literal(dims)) if dims else sql.SQL("vector")
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema)))
        conn.execute(
            sql.SQL(
                """CREATE TABLE IF NOT EXISTS {table} (
                    id text PRIMARY KEY,
                    name text,
                    content text NOT NULL,
                    meta_data jsonb NOT NULL DEFAULT '{{}}'::jsonb,
                    embedding {vector_type},
                    tsv tsvector GENERATED ALWAYS AS (to_tsvector({config}, content)) STORED
                )"""
            ).format(table=self._table, vector_type=vector_type, config=sql.Literal(self.text_search_config))
        )
        # vectors stay in the table's own pages (compressed or moved out only when a row cannot fit
        # otherwise): moved out beside the content, every vector an exact search scores was a
        # TOAST lookup (SciFact, 384 dimensions, depth 100: 22 ms a query, 10 ms in place)
        conn.execute(sql.SQL("ALTER TABLE {} ALTER COLUMN embedding SET STORAGE MAIN").format(self._table))
        for index, statement in self._indexes().items():
            if not index.endswith("_embedding_idx"):
                conn.execute(statement)
        self._bm25.install(conn)

    def _indexes(self) -> dict[str, Any]:
        """The table's indexes by name: metadata filters, named sources, and the vector index
        (HNSW needs the vectors' dimensions). Keyword search reads the BM25 postings instead of
        a GIN index over ``tsv`` (tables made before keep theirs; nothing reads it)."""
        sql = self._sql()
        name, table = self.table_name, self._table
        statements = {
            f"{name}_meta_idx": ("CREATE INDEX IF NOT EXISTS {} ON {} USING gin (meta_data jsonb_path_ops)", ()),
            f"{name}_name_idx": ("CREATE INDEX IF NOT EXISTS {} ON {} (name)", ()),
        }
        if self.vector_index is not None and self.dimensions:
            statements[f"{name}_embedding_idx"] = (
                "CREATE INDEX IF NOT EXISTS {} ON {} USING hnsw (embedding vector_cosine_ops) "
                "WITH (m = {}, ef_construction = {})", (sql.Literal(self.hnsw_m), sql.Literal(self.hnsw_ef_construction)))
        return {index: sql.SQL(template).format(sql.Identifier(index), table, *extra)
                for index, (template, extra) in statements.items()}

    def _missing_indexes(self, conn: Any) -> dict[str, Any]:
        """The indexes the table lacks, with the statements that create them."""
        wanted = self._indexes()
        if self._indexes_ready >= set(wanted):
            return {}
        present = {r[0] for r in conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = %s AND tablename = %s",
            (self.schema, self.table_name)).fetchall()}
        self._indexes_ready = present  # indexes are only ever added, so what exists is kept
        return {index: statement for index, statement in wanted.items() if index not in present}

    def optimize(self, force_recreate: bool = False) -> None:
        """Build the indexes the table lacks, the vector index among them: how a table loaded for
        exact search (``vector_index=None``) gets the store's ``HNSW`` once it has grown past the
        crossover. ``force_recreate`` drops the table's vector index first, so it is rebuilt with
        this store's ``m`` and ``ef_construction`` (or, with ``vector_index=None``, not rebuilt:
        back to exact search). Agno's name for it."""
        if not self._exists():
            return
        self._ensure_table(None)
        sql = self._sql()
        conn = self._connection()
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_DDL_LOCK,))
            if force_recreate:
                index = f"{self.table_name}_embedding_idx"
                conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(self.schema, index)))
                self._indexes_ready.discard(index)
            missing = self._missing_indexes(conn)
            conn.execute("SET LOCAL maintenance_work_mem = '256MB'")  # an HNSW build in memory
            for statement in missing.values():
                conn.execute(statement)
        self._indexes_ready |= set(missing)

    def _exists(self) -> bool:
        return self._table_ready or self._column_dimensions() is not None

    def drop(self) -> None:
        """Remove the table, everything in it and its BM25 statistics."""
        sql = self._sql()
        conn = self._connection()
        with conn.transaction():
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(self._table))
            self._bm25.drop(conn)
        self._table_ready = self._bm25_ready = False
        self._indexes_ready = set()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # ----------------------------------------------------------- storage
    def count(self) -> int:
        if not self._exists():
            return 0
        sql = self._sql()
        return self._connection().execute(sql.SQL("SELECT count(*) FROM {}").format(self._table)).fetchone()[0]

    def _existing_ids(self, ids: list[str]) -> set[str]:
        if not ids or not self._exists():
            return set()
        sql = self._sql()
        rows = self._connection().execute(
            sql.SQL("SELECT id FROM {} WHERE id = ANY(%s)").format(self._table), (ids,)
        ).fetchall()
        return {r[0] for r in rows}

    def _insert(self, documents: list[Document]) -> int:
        return self._write(documents, on_conflict="nothing")

    def _upsert(self, documents: list[Document]) -> None:
        self._write(documents, on_conflict="update")

    def _replace(self, name: str, documents: list[Document]) -> None:
        self._write(documents, on_conflict="update", replacing=name)

    def _write(self, documents: list[Document], on_conflict: Literal["nothing", "update"],
               replacing: str | None = None) -> int:
        """One transaction: the rows of the source ``replacing`` out (if given), the documents in
        (an id already stored is left alone or updated, ``on_conflict``)."""
        self._ensure_table(next((len(e) for e in map(embedding_of, documents) if e is not None), None))
        sql = self._sql()
        conn = self._connection()
        conflict = (
            sql.SQL("ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, content = EXCLUDED.content, "
                    "meta_data = EXCLUDED.meta_data, embedding = EXCLUDED.embedding")
            if on_conflict == "update" else sql.SQL("ON CONFLICT (id) DO NOTHING")
        )
        # the vector index is built after the first load, in bulk (several times faster than
        # growing it row by row during the load); once it exists, writes insert into it
        missing = self._missing_indexes(conn)
        with conn.transaction():
            if missing:
                # before any row is written: two first loads take turns (the second finds the
                # index), and the lock is never awaited while holding rows another writer waits on
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_DDL_LOCK,))
            # into an empty table the BM25 postings' key, too, is built after the rows (first_load)
            first_load = self._bm25.lock_writers(conn) == 0
            if replacing is not None:
                conn.execute(sql.SQL("DELETE FROM {} WHERE name = %s").format(self._table), (replacing,))
            conn.execute(
                "CREATE TEMP TABLE IF NOT EXISTS rag_core_staging "
                "(id text, name text, content text, meta_data jsonb, embedding vector) ON COMMIT DELETE ROWS"
            )
            Jsonb = require("psycopg.types.json", extra="pgvector", feature="PgVector", package="psycopg").Jsonb
            with conn.cursor() as cur:
                # binary COPY: vectors travel as float32 arrays, not as decimal text
                with cur.copy("COPY rag_core_staging (id, name, content, meta_data, embedding) FROM STDIN "
                              "WITH (FORMAT BINARY)") as copy:
                    copy.set_types(["text", "text", "text", "jsonb", "vector"])
                    for d in documents:
                        copy.write_row((
                            d.id, d.name, d.content, Jsonb(d.meta_data),
                            _float32(embedding_of(d)) if embedding_of(d) is not None else None,
                        ))
            with self._bm25.first_load(conn) if first_load else nullcontext():
                inserted = conn.execute(
                    sql.SQL("INSERT INTO {} (id, name, content, meta_data, embedding) "
                            "SELECT id, name, content, meta_data, embedding FROM rag_core_staging {}").format(
                        self._table, conflict)
                ).rowcount
            if missing:
                conn.execute("SET LOCAL maintenance_work_mem = '256MB'")  # an HNSW build in memory
                for statement in missing.values():
                    conn.execute(statement)
        self._indexes_ready |= set(missing)  # committed
        return inserted  # rows really written: a concurrent writer may have stored some ids first

    def _delete(self, ids: list[str] | None, name: str | None) -> int:
        if not self._exists():
            return 0
        self._ensure_bm25()
        sql = self._sql()
        with self._connection().transaction():
            self._bm25.lock_writers(self._connection())
            cur = self._connection().execute(
                sql.SQL("DELETE FROM {} WHERE id = ANY(%s) OR name = %s").format(self._table), (ids or [], name)
            )
            return cur.rowcount

    def _fetch(self, ids: list[str]) -> dict[str, Document]:
        if not ids or not self._exists():
            return {}
        sql = self._sql()
        rows = self._connection().execute(
            sql.SQL("SELECT id, name, content, meta_data FROM {} WHERE id = ANY(%s)").format(self._table), (ids,)
        ).fetchall()
        return {r[0]: Document(content=r[2], meta_data=r[3], name=r[1], id=r[0]) for r in rows}

    # ----------------------------------------------------------- rankings
    def _filter(self, filters: dict[str, Any] | None) -> tuple[Any, tuple[Any, ...]]:
        sql = self._sql()
        if not filters:
            return sql.SQL("TRUE"), ()
        # containment uses the GIN index; for a scalar it is equality, for a list or a mapping it is
        # looser ({"tags": ["soup"]} would match ["soup", "thai"]), so those keys are also compared
        # whole: one filter meaning in every store (key equal to value)
        clause = [sql.SQL("meta_data @> %s::jsonb")]
        params: list[Any] = [json.dumps(filters)]
        for key, value in filters.items():
            if isinstance(value, (list, dict)):
                clause.append(sql.SQL("meta_data -> %s = %s::jsonb"))
                params += [key, json.dumps(value)]
        return sql.SQL(" AND ").join(clause), tuple(params)

    def _vector_cte(self, filters: dict[str, Any] | None) -> tuple[Any, tuple[Any, ...]]:
        sql = self._sql()
        where, params = self._filter(filters)
        query = sql.SQL(
            "SELECT id, 1 - (embedding <=> %s::vector) AS score FROM {} WHERE embedding IS NOT NULL AND {} "
            "ORDER BY embedding <=> %s::vector LIMIT %s"
        ).format(self._table, where)
        return query, params

    def _keyword_cte(self, filters: dict[str, Any] | None) -> Any:
        """BM25 in SQL (params: query text, *filter params, depth)."""
        self._ensure_bm25()
        where, params = self._filter(filters) if filters else (None, ())
        return self._bm25.ranking(where, self.bm25_k1, self.bm25_b), params

    @property
    def ef_search(self) -> int:
        """Candidates the HNSW index gives each query; read at every search, so changing it
        (``store.ef_search = 200``) needs no rebuild. The store's ``vector_index`` says the same."""
        return self._ef_search

    @ef_search.setter
    def ef_search(self, value: int) -> None:
        checked = HNSW(ef_search=value).ef_search  # a bad value fails here, not at the next search
        if self.vector_index is not None:
            self.vector_index = dataclasses.replace(self.vector_index, ef_search=checked)
        self._ef_search = checked

    def _search_settings(self, conn: Any) -> None:
        conn.execute(f"SET LOCAL hnsw.ef_search = {int(self.ef_search)}")
        conn.execute("SET LOCAL hnsw.iterative_scan = strict_order")  # filters must not starve the index scan

    def _vector_ranking(self, vector: list[float], depth: int, filters: dict[str, Any] | None) -> Ranking:
        """Candidates by pgvector's distance (HNSW or a scan), then ranked by the shared
        cosine (see similarity.py), so exact search agrees with the other stores."""
        if not self._exists():
            return []
        sql = self._sql()
        where, params = self._filter(filters)
        query = sql.SQL(
            "SELECT id, embedding FROM {} WHERE embedding IS NOT NULL AND {} "
            "ORDER BY embedding <=> %s::vector LIMIT %s"
        ).format(self._table, where)
        conn = self._connection()
        with conn.transaction():
            self._search_settings(conn)
            # binary results: candidate embeddings arrive as float32 arrays, not decimal text to parse
            rows = conn.execute(query, (*params, _float32(vector), self._candidates(depth)), binary=True).fetchall()
        return self._rescored([r[0] for r in rows], [r[1].to_numpy() for r in rows], vector, depth)

    def _keyword_ranking(self, query: str, depth: int, filters: dict[str, Any] | None) -> Ranking:
        if not self._exists():
            return []
        sql_query, params = self._keyword_cte(filters)
        rows = self._connection().execute(sql_query, (query, *params, depth)).fetchall()
        return [(r[0], float(r[1])) for r in rows]

    def _hybrid_ranking(self, query: str, vector: list[float], depth: int, filters: dict[str, Any] | None) -> Ranking:
        """Reciprocal rank fusion in one statement: 1/(k + rank) summed over both lists."""
        if not self._exists():
            return []
        sql = self._sql()
        vector_q, vector_params = self._vector_cte(filters)
        keyword_q, keyword_params = self._keyword_cte(filters)
        statement = sql.SQL(
            """WITH v0 AS ({vector}),
                    v AS (SELECT id, row_number() OVER (ORDER BY round(score::numeric, {precision}) DESC, id COLLATE "C") AS r FROM v0),
                    k0 AS ({keyword}),
                    k AS (SELECT id, row_number() OVER (ORDER BY score DESC, id COLLATE "C") AS r FROM k0)
               SELECT fused.id, fused.score FROM (
                   SELECT coalesce(v.id, k.id) AS id,
                          coalesce(1.0::float8 / (%s + v.r), 0::float8) + coalesce(1.0::float8 / (%s + k.r), 0::float8) AS score
                   FROM v FULL OUTER JOIN k ON v.id = k.id
               ) AS fused
               ORDER BY fused.score DESC, fused.id COLLATE "C" """
        ).format(vector=vector_q, keyword=keyword_q, precision=sql.Literal(SIMILARITY_PRECISION))
        literal = _float32(vector)
        params = (literal, *vector_params, literal, depth, query, *keyword_params, depth, self.hybrid_rrf_k, self.hybrid_rrf_k)
        conn = self._connection()
        with conn.transaction():
            self._search_settings(conn)
            rows = conn.execute(statement, params).fetchall()
        return [(r[0], float(r[1])) for r in rows]
