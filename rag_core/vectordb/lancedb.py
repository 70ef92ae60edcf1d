"""LanceDb: an embedded, persistent store on LanceDB (a folder at ``uri``, no server), or a
dataset on object storage (``uri="s3://bucket/path"``, ``gs://``, ``az://``: LanceDB's own URIs,
configured by its ``storage_options`` or the provider's environment variables).

Table layout: ``id`` (content hash), ``name``, ``content``, ``meta_data`` (the metadata as JSON)
and ``vector`` (a fixed-size list of float32).

* Vector search asks LanceDB for cosine candidates (an exhaustive scan: no ANN index is built),
  then ranks them with the same float64 cosine and tie rule as every other store, so exact
  search returns the same top-k everywhere.
* Keyword search uses LanceDB's own full-text index (BM25). The index covers the rows that
  existed when it was built, so it is rebuilt whenever the table's version moved since (this
  process's writes or another's).
* Hybrid search fuses the two rankings with the shared reciprocal rank fusion.
* Every write is one LanceDB commit (a new table version, atomic): a named-source replace is a
  single ``merge_insert`` that adds the new documents and deletes the old ones together.
* Writers are serialised across processes by a file lock beside the table: two concurrent
  ``merge_insert`` commits of the same new ids each insert them (measured with lancedb 0.40: 3 of
  10 runs of two processes ingesting one corpus ended with every document twice). On object
  storage there is no file to lock: writers are serialised within the process only, so one
  process at a time may write a table there (LanceDB commits each version atomically, but two
  processes inserting the same new ids would each insert them).
* On object storage nothing is ever deleted to recover: a table LanceDB cannot open is an error
  naming it (in a folder, a creation killed before its first commit is cleared and made anew).
* Metadata filters follow the shared rule (every key equal): the matching ids are worked out
  with it and handed to LanceDB as a prefilter, so a selective filter still fills the results.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from rag_core._optional import require
from rag_core.document import Document
from rag_core.vectordb.base import Ranking, VectorDb, VectorDbError, matches
from rag_core.vectordb.fusion import top_ranked
from rag_core.vectordb.search_type import SearchType

if TYPE_CHECKING:
    from rag_core.embedder.base import Embedder
    from rag_core.reranker.base import Reranker

# SearchType too: Agno programs import it from here (from agno.vectordb.lancedb import LanceDb, SearchType)
__all__ = ["LanceDb", "SearchType"]


def _quoted(value: str) -> str:
    """A SQL string literal (LanceDB filters are SQL expressions)."""
    return "'" + value.replace("'", "''") + "'"


def _id_list(ids: list[str]) -> str:
    return "id IN (" + ", ".join(_quoted(i) for i in ids) + ")"


# a URI with a scheme other than file:// names object storage (s3://, gs://, az://, ...)
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
# writers of a table on object storage, per (uri, table): the process is all a lock can cover there
_REMOTE_WRITERS: dict[tuple[str, str], threading.RLock] = {}
_REMOTE_WRITERS_LOCK = threading.Lock()


def _folder(uri: str) -> Path | None:
    """The local folder ``uri`` names, None for object storage."""
    scheme = _SCHEME.match(uri)
    if scheme is None:
        return Path(uri)
    return Path(uri[len(scheme.group(0)):]) if scheme.group(1).lower() == "file" else None


class LanceDb(VectorDb):
    def __init__(
        self,
        uri: str = "tmp/lancedb",
        table_name: str = "documents",
        embedder: Embedder | None = None,
        search_type: SearchType | str | None = None,
        hybrid_rrf_k: int = 60,
        reranker: Reranker | None = None,
        candidate_depth: int | None = None,
        name: str | None = None,
        description: str | None = None,
        storage_options: dict[str, str] | None = None,
    ) -> None:
        super().__init__(embedder, search_type, hybrid_rrf_k, reranker, candidate_depth, name, description)
        self.uri = str(uri)
        # LanceDB's settings for object storage (region, endpoint, credentials); None: the
        # provider's environment variables, as LanceDB reads them
        self.storage_options = dict(storage_options) if storage_options else None
        self.table_name = table_name
        self._db: Any = None
        self._table: Any = None
        self._fts_version: int | None = None  # table version the full-text index was built at

    # ----------------------------------------------------------- connection
    def _connect(self) -> Any:
        if self._db is None:
            lancedb = require("lancedb", extra="lancedb", feature="LanceDb")
            from datetime import timedelta

            folder = _folder(self.uri)
            if folder is not None:
                folder.mkdir(parents=True, exist_ok=True)
            # every read checks for newer versions: another process's writes are seen at once
            self._db = lancedb.connect(self.uri, read_consistency_interval=timedelta(0),
                                       storage_options=self.storage_options)
        return self._db

    def _open(self) -> Any | None:
        """The table, or None while it does not exist yet."""
        if self._table is None:
            db = self._connect()
            if self.table_name not in db.list_tables().tables:
                return None
            for last_try in (False, True):
                try:
                    self._table = db.open_table(self.table_name)
                    self._table.schema  # noqa: B018 (reads the manifest: a damaged table fails here)
                    break
                except Exception as exc:  # LanceDB raises its own and Arrow's errors for damaged data
                    self._table = None
                    if not self._committed():
                        return None  # a creation that never committed: no table yet (``_create`` clears it)
                    # committed now, but perhaps not when we opened: another process's creation may
                    # have committed in between ("Table ... was not found"), so one more try first
                    if last_try:
                        raise VectorDbError(f"LanceDB table {self.table_name!r} at {self.uri} cannot be opened "
                                            f"({type(exc).__name__}: {exc}); move the folder aside to start anew") from exc
        return self._table

    def _committed(self) -> bool:
        """Whether the table's folder holds a committed version (a manifest); on object storage,
        taken as yes (nothing there is removed to recover)."""
        folder = _folder(self.uri)
        return folder is None or any((folder / f"{self.table_name}.lance" / "_versions").glob("*.manifest"))

    def _stored_dimensions(self) -> int | None:
        table = self._open()
        if table is None:
            return None
        return table.schema.field("vector").type.list_size

    @property
    def _keeps_embeddings(self) -> bool:
        return self.embedder is not None  # a keyword-only table's vector column holds a placeholder

    def _describe(self) -> str:
        return f"LanceDb table {self.table_name!r} at {self.uri}"

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        """The table's cross-process write lock; inside it, the table is read at its latest version,
        so a commit goes on top of what other writers committed."""
        folder = _folder(self.uri)
        with self._file_lock_at(folder / f".{self.table_name}.lock", "lancedb") if folder is not None else self._process_lock():
            table = self._open()
            if table is not None:
                table.checkout_latest()
            yield

    def _process_lock(self) -> threading.RLock:
        """The writers' lock of a table on object storage, shared by this process's stores of it."""
        with _REMOTE_WRITERS_LOCK:
            return _REMOTE_WRITERS.setdefault((self.uri.rstrip("/"), self.table_name), threading.RLock())

    def _create(self, dimensions: int) -> Any:
        """Create the table, or open it if another process just did (the caller holds the lock)."""
        pa = require("pyarrow", extra="lancedb", feature="LanceDb")
        schema = pa.schema([("id", pa.string()), ("name", pa.string()), ("content", pa.string()),
                            ("meta_data", pa.string()), ("vector", pa.list_(pa.float32(), dimensions))])
        db = self._connect()
        try:
            self._table = db.create_table(self.table_name, schema=schema)
        except Exception:
            try:  # the listing can miss a table another writer has just created: open it
                self._table = db.open_table(self.table_name)
                return self._table
            except Exception:
                pass
            # a writer killed while creating the table can leave its folder with no committed
            # version: it holds no rows, and nothing else can open it, so it is made anew
            folder = _folder(self.uri)
            leftover = folder / f"{self.table_name}.lance" if folder is not None else None
            if leftover is None or not leftover.is_dir() or self._committed():
                raise VectorDbError(f"cannot create LanceDB table {self.table_name!r} at {self.uri}: a table "
                                    "folder exists that LanceDB cannot open; move it aside") from None
            shutil.rmtree(leftover)
            try:
                self._table = db.create_table(self.table_name, schema=schema)
            except Exception as exc:
                raise VectorDbError(f"cannot create LanceDB table {self.table_name!r} at {self.uri}: {exc}") from exc
        return self._table

    def drop(self) -> None:
        """Remove the table and everything in it."""
        if self._open() is not None:
            self._connect().drop_table(self.table_name)
        self._table = None
        self._fts_version = None

    # ----------------------------------------------------------- storage
    def count(self) -> int:
        table = self._open()
        return 0 if table is None else table.count_rows()

    def _existing_ids(self, ids: list[str]) -> set[str]:
        table = self._open()
        if table is None or not ids:
            return set()
        found: set[str] = set()
        for start in range(0, len(ids), 1000):
            rows = table.search().where(_id_list(ids[start:start + 1000])).select(["id"]).limit(None).to_list()
            found.update(r["id"] for r in rows)
        return found

    def _rows(self, documents: list[Document]) -> list[dict[str, Any]]:
        def vector(d: Document) -> list[float] | None:
            if self.embedder is None:  # keyword-only tables still need a vector column: a placeholder
                return [0.0]
            return [float(x) for x in d.embedding] if d.embedding is not None else None

        return [{"id": d.id, "name": d.name, "content": d.content, "meta_data": json.dumps(d.meta_data, ensure_ascii=False),
                 "vector": vector(d)} for d in documents]

    def _table_for(self, documents: list[Document]) -> Any:
        """The table, created at the size of the documents' embeddings if it does not exist yet."""
        sizes = [len(d.embedding) for d in documents if d.embedding is not None] if self._keeps_embeddings else []
        return self._open() or self._create(sizes[0] if sizes else 1)

    def _insert(self, documents: list[Document]) -> int:
        table = self._table_for(documents)
        # insert-if-absent in one commit: ids another writer stored meanwhile are left alone
        result = table.merge_insert("id").when_not_matched_insert_all().execute(self._rows(documents))
        inserted = getattr(result, "num_inserted_rows", None)
        return len(documents) if inserted is None else int(inserted)

    def _upsert(self, documents: list[Document]) -> None:
        table = self._table_for(documents)
        table.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(self._rows(documents))

    def _replace(self, name: str, documents: list[Document]) -> None:
        table = self._table_for(documents)
        # one commit: new and changed rows in, the source's other rows out (atomic, as a new version)
        (table.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
         .when_not_matched_by_source_delete(f"name = {_quoted(name)}").execute(self._rows(documents)))

    def _delete(self, ids: list[str] | None, name: str | None) -> int:
        table = self._open()
        if table is None:
            return 0
        clauses = ([_id_list(ids)] if ids else []) + ([f"name = {_quoted(name)}"] if name is not None else [])
        if not clauses:
            return 0
        where = " OR ".join(clauses)
        doomed = table.count_rows(where)
        table.delete(where)
        return doomed

    def _fetch(self, ids: list[str]) -> dict[str, Document]:
        table = self._open()
        if table is None or not ids:
            return {}
        rows = table.search().where(_id_list(ids)).select(["id", "name", "content", "meta_data"]).limit(None).to_list()
        return {r["id"]: Document(content=r["content"], meta_data=json.loads(r["meta_data"] or "{}"), name=r["name"],
                                  id=r["id"]) for r in rows}

    # ----------------------------------------------------------- rankings
    def _allowed(self, table: Any, filters: dict[str, Any] | None) -> str | None:
        """The prefilter (SQL) for ``filters``: the ids whose metadata matches, by the shared rule."""
        if not filters:
            return None
        rows = table.search().select(["id", "meta_data"]).limit(None).to_list()
        ids = [r["id"] for r in rows if matches(json.loads(r["meta_data"] or "{}"), filters)]
        return _id_list(ids) if ids else "false"

    def _vector_ranking(self, vector: list[float], depth: int, filters: dict[str, Any] | None) -> Ranking:
        table = self._open()
        if table is None or not table.count_rows():
            return []
        query = table.search(vector, query_type="vector", vector_column_name="vector").distance_type("cosine")
        where = self._allowed(table, filters)
        if where is not None:
            query = query.where(where, prefilter=True)
        rows = query.select(["id", "vector", "_distance"]).limit(self._candidates(depth)).to_list()
        return self._rescored([r["id"] for r in rows], [r["vector"] for r in rows], vector, depth)

    def _fts_index(self, table: Any) -> None:
        if self._fts_version == table.version:
            return
        FTS = require("lancedb.index", extra="lancedb", feature="LanceDb").FTS

        table.create_index("content", config=FTS(), replace=True)
        self._fts_version = table.version

    def _keyword_ranking(self, query: str, depth: int, filters: dict[str, Any] | None) -> Ranking:
        table = self._open()
        if table is None or not table.count_rows():
            return []
        self._fts_index(table)
        search = table.search(query, query_type="fts", fts_columns="content")
        where = self._allowed(table, filters)
        if where is not None:
            search = search.where(where, prefilter=True)
        rows = search.select(["id", "_score"]).limit(self._candidates(depth)).to_list()  # ties at the cut: by id
        return top_ranked([r["id"] for r in rows], [float(r["_score"]) for r in rows], depth)
