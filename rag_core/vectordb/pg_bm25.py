"""Okapi BM25 computed by PostgreSQL for a PgVector table, with no extension beyond pgvector.

PostgreSQL tokenises and stems (the table's generated ``tsv`` column, ``to_tsvector`` with
the store's text search configuration). Two side tables hold what BM25 needs:

- ``<table>_bm25_postings (lexeme, id, tf, len)``: one row per distinct lexeme of each
  document, with its term frequency (the lexeme's positions in ``tsv``) and the document's
  length (all its positions). The document frequency of a lexeme is its number of postings.
- ``<table>_bm25_stats (docs, length)``: one row, the number of documents and their total
  length (documents without a lexeme count, with length 0, as in the in-memory index).

Statement-level triggers on the table keep both exact in the writing transaction, whoever
writes (insert, upsert, update, delete, truncate). The score is the in-memory BM25's
(bm25_index.py, Lucene variant): for each distinct query lexeme present in the document,
ln(1 + (N - df + 0.5) / (df + 0.5)) * tf / (tf + k1 * (1 - b + b * len / avgdl)).

Why postings and not the GIN index over ``tsv``: BM25 needs each candidate's term
frequencies, and reading them out of every matching ``tsv`` cost 20-90 ms per SciFact query
here, against 8 ms reading the query lexemes' postings.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from rag_core._optional import require
from rag_core.vectordb.bm25_index import BM25_B, BM25_K1

# suffixes of the names made from the table's (the caller checks they fit PostgreSQL's 63 bytes)
NAME_SUFFIXES = ("_bm25_postings", "_bm25_stats", "_bm25_sync", "_bm25_insert", "_bm25_update",
                 "_bm25_delete", "_bm25_truncate")

# one posting per lexeme of a document; the key holds what scoring reads, so a query's postings
# are read from the index alone
_POSTINGS_KEY = "PRIMARY KEY (lexeme, id) INCLUDE (tf, len)"

# The terms and lengths of a set of rows (id, tsv), as a query over ``{rows}``.
# The side tables compare bytes (COLLATE "C"): the fastest sort and index order, and lexemes
# and ids only ever need equality.
_TERMS = ('SELECT r.id COLLATE "C" AS id, x.lexeme COLLATE "C" AS lexeme, cardinality(x.positions) AS tf '
          "FROM {rows} AS r, unnest(r.tsv) AS x")

# What one trigger statement does to the side tables: rows leaving take their postings and
# their share of the statistics with them, rows arriving add theirs. Postings go in lexeme
# order, so the rows a query reads for one lexeme sit together on disk.
_LEAVE = f"""
    WITH terms AS ({_TERMS}),
         dropped AS (DELETE FROM {{postings}} AS p USING terms
                     WHERE p.lexeme = terms.lexeme AND p.id = terms.id)
    UPDATE {{stats}} SET docs = docs - (SELECT count(*) FROM {{rows}} AS counted),
                         length = length - coalesce((SELECT sum(tf) FROM terms), 0);"""
_ARRIVE = f"""
    WITH terms AS ({_TERMS}),
         lengths AS (SELECT id, sum(tf)::integer AS len FROM terms GROUP BY id),
         added AS (INSERT INTO {{postings}} (lexeme, id, tf, len)
                   SELECT terms.lexeme, terms.id, terms.tf, lengths.len FROM terms JOIN lengths USING (id)
                   ORDER BY terms.lexeme, terms.id)
    UPDATE {{stats}} SET docs = docs + (SELECT count(*) FROM {{rows}} AS counted),
                         length = length + coalesce((SELECT sum(tf) FROM terms), 0);"""
# an update touches only the rows whose id or lexemes changed (an upsert that rewrites the
# same content, or a metadata change, leaves the postings alone)
_CHANGED = "(SELECT * FROM {this} AS c WHERE NOT EXISTS (SELECT 1 FROM {other} AS o WHERE o.id = c.id AND o.tsv = c.tsv))"


class Bm25Tables:
    """The BM25 side tables, their trigger and the ranking query of one PgVector table."""

    def __init__(self, schema: str, table: str, text_search_config: str) -> None:
        self._sql = sql = require("psycopg.sql", extra="pgvector", feature="PgVector", package="psycopg")
        self.schema, self.table, self.config = schema, table, text_search_config
        self.postings = sql.Identifier(schema, f"{table}_bm25_postings")
        self.stats = sql.Identifier(schema, f"{table}_bm25_stats")
        self.function = sql.Identifier(schema, f"{table}_bm25_sync")
        self.main = sql.Identifier(schema, table)

    def installed(self, conn: Any) -> bool:
        row = conn.execute("SELECT to_regclass(%s)", (f'"{self.schema}"."{self.table}_bm25_stats"',)).fetchone()
        return row[0] is not None

    def install(self, conn: Any) -> None:
        """Create the side tables and triggers and fill them from the rows already there (a table
        made before BM25 moved into SQL). The caller holds the DDL lock in a transaction; the
        table is locked against writers while its statistics are counted, so they start exact."""
        sql = self._sql
        conn.execute(sql.SQL("LOCK TABLE {} IN SHARE ROW EXCLUSIVE MODE").format(self.main))
        conn.execute(sql.SQL(
            "CREATE TABLE {} (lexeme text COLLATE \"C\" NOT NULL, id text COLLATE \"C\" NOT NULL, "
            "tf integer NOT NULL, len integer NOT NULL, " + _POSTINGS_KEY + ")").format(self.postings))
        conn.execute(sql.SQL("CREATE TABLE {} (docs bigint NOT NULL, length bigint NOT NULL)").format(self.stats))
        conn.execute(sql.SQL("INSERT INTO {} VALUES (0, 0)").format(self.stats))
        conn.execute(self._function())
        for event, referencing in (("INSERT", "NEW TABLE AS arriving"), ("DELETE", "OLD TABLE AS leaving"),
                                   ("UPDATE", "OLD TABLE AS leaving NEW TABLE AS arriving")):
            conn.execute(sql.SQL(
                "CREATE TRIGGER {} AFTER " + event + " ON {} REFERENCING " + referencing +
                " FOR EACH STATEMENT EXECUTE FUNCTION {}()"
            ).format(sql.Identifier(f"{self.table}_bm25_{event.lower()}"), self.main, self.function))
        conn.execute(sql.SQL("CREATE TRIGGER {} AFTER TRUNCATE ON {} FOR EACH STATEMENT EXECUTE FUNCTION {}()").format(
            sql.Identifier(f"{self.table}_bm25_truncate"), self.main, self.function))
        conn.execute(sql.SQL(_ARRIVE).format(postings=self.postings, stats=self.stats, rows=self.main))

    def _function(self) -> Any:
        sql = self._sql
        tables = {"postings": self.postings, "stats": self.stats}

        def step(template: str, rows: str) -> Any:
            return sql.SQL(template).format(rows=sql.SQL(rows), **tables)

        changed_leaving = _CHANGED.format(this="leaving", other="arriving")
        changed_arriving = _CHANGED.format(this="arriving", other="leaving")
        return sql.SQL(
            """CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $bm25$
               BEGIN
                 IF TG_OP = 'INSERT' THEN {insert}
                 ELSIF TG_OP = 'DELETE' THEN {delete}
                 ELSIF TG_OP = 'UPDATE' THEN {update_leave} {update_arrive}
                 ELSE TRUNCATE {postings}; UPDATE {stats} SET docs = 0, length = 0;
                 END IF;
                 RETURN NULL;
               END $bm25$"""
        ).format(
            function=self.function, insert=step(_ARRIVE, "arriving"), delete=step(_LEAVE, "leaving"),
            update_leave=step(_LEAVE, changed_leaving), update_arrive=step(_ARRIVE, changed_arriving), **tables,
        )

    def drop(self, conn: Any) -> None:
        """The side tables and the trigger function (the triggers go with the table)."""
        sql = self._sql
        for table in (self.postings, self.stats):
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(table))
        conn.execute(sql.SQL("DROP FUNCTION IF EXISTS {}() CASCADE").format(self.function))

    def lock_writers(self, conn: Any) -> int:
        """Writers of the table take turns from the start of their transaction: each one updates
        the statistics row, and taking it first (not halfway, from a trigger) rules out two
        writers each holding what the other waits for. Returns the number of documents."""
        return conn.execute(self._sql.SQL("SELECT docs FROM {} FOR UPDATE").format(self.stats)).fetchone()[0]

    @contextmanager
    def first_load(self, conn: Any) -> Iterator[None]:
        """Around the first write into an empty table, in its transaction: the postings' key is
        dropped and built once the postings are in. Entering SciFact's 490,000 postings into the
        key one by one took 1.3 s here; writing them without it and building it after, 0.7 s.

        Until the transaction ends, keyword searches of this table wait for it (the table is
        locked while its key is rebuilt); a failed load rolls the key back with the rows."""
        sql = self._sql
        key = conn.execute("SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'p'",
                           (self.postings.as_string(conn),)).fetchone()[0]
        conn.execute(sql.SQL("ALTER TABLE {} DROP CONSTRAINT {}").format(self.postings, sql.Identifier(key)))
        yield
        conn.execute(sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} " + _POSTINGS_KEY).format(
            self.postings, sql.Identifier(key)))

    def ranking(self, where: Any = None, k1: float = BM25_K1, b: float = BM25_B) -> Any:
        """The query ranking documents by BM25, best first, ties by id (params: query text,
        *filter params, depth); ``where`` filters the table's rows (their scores stay those of
        the whole table, as in the in-memory index)."""
        sql = self._sql
        filtered = (sql.SQL('JOIN {} AS t ON t.id = scored.id COLLATE "default" WHERE {}').format(self.main, where)
                    if where is not None else sql.SQL(""))
        return sql.SQL(
            """WITH stats AS (SELECT docs::float8 AS docs, length::float8 / greatest(docs, 1) AS avgdl FROM {stats}),
                    lexemes AS (SELECT unnest(tsvector_to_array(to_tsvector({config}, %s))) COLLATE "C" AS lexeme),
                    hits AS (SELECT p.id, p.tf, p.len, count(*) OVER (PARTITION BY p.lexeme) AS df
                             FROM lexemes CROSS JOIN LATERAL
                                  (SELECT * FROM {postings} AS p WHERE p.lexeme = lexemes.lexeme OFFSET 0) AS p),
                    scored AS (SELECT hits.id,
                                      sum(ln(1 + (stats.docs - hits.df + 0.5) / (hits.df + 0.5::float8))
                                          * hits.tf / (hits.tf + {k1} * (1 - {b} + {b} * hits.len / stats.avgdl))) AS score
                               FROM hits CROSS JOIN stats GROUP BY hits.id)
               SELECT scored.id COLLATE "default" AS id, scored.score FROM scored {filtered}
               ORDER BY scored.score DESC, scored.id COLLATE "C" LIMIT %s"""
        ).format(stats=self.stats, postings=self.postings, filtered=filtered,
                 config=sql.Literal(self.config), k1=sql.Literal(float(k1)), b=sql.Literal(float(b)))
