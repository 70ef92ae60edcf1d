"""ChromaDb: the embedded default store (a folder on disk, no server).

Chroma stores documents and vectors and answers vector queries. It has no keyword
search of its own, so keyword and hybrid search use a BM25 index persisted beside the
collection; it is saved after every write and, when opened, checked against the
collection's ids and rebuilt from the collection if they differ, so the two never drift.

Metadata: Chroma accepts only flat scalar values, so each document's metadata is kept
whole as JSON, and its scalar entries are also stored flat for filtering (except keys Chroma
reserves, ``chroma:…``, which stay in the JSON only).

Replacing a named source is crash-safe. Chroma has no transaction across batches, so the
replace writes a journal beside the collection (the source's name, the ids it had, the ids it
will have), adds the new documents, removes the old ones, and deletes the journal. Whoever opens
the collection next finds an unfinished journal and finishes it when every new document made it
in (roll forward), or removes the new documents otherwise (roll back): either way the source is
complete, old or new. Everything Chroma could refuse is validated before the first write.

Several processes may share a persistent folder: opening (Chroma creates its database on first
use, and two processes creating it at once collide) and every write take one file lock beside
the collections, and a write re-checks inside the lock which documents are already there, so
two processes ingesting the same corpus store one copy and each reports what it really added.
"""

from __future__ import annotations

import json
import os
import re
import threading
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag_core._files import write_atomic
from rag_core._optional import require
from rag_core.document import Document
from rag_core.vectordb.base import Ranking, VectorDb, VectorDbError
from rag_core.vectordb.bm25_index import BM25Index
from rag_core.vectordb.search_type import SearchType

if TYPE_CHECKING:
    from rag_core.embedder.base import Embedder
    from rag_core.reranker.base import Reranker

# SearchType too: Agno programs import it from here (from agno.vectordb.chroma import ChromaDb, SearchType)
__all__ = ["ChromaDb", "SearchType"]

_META = "_rag_meta"
_GENERATION = "rag_core_generation"  # collection metadata: changes with every rag-core write
_NAME = "_rag_name"
# chromadb shares one in-process system among its clients and starts it unguarded: threads
# opening stores at once got "'RustBindingsAPI' object has no attribute 'bindings'" or
# "Could not connect to tenant default_tenant" instead of a client
_CLIENTS_STARTING = threading.Lock()
_COLLECTION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{1,510}[A-Za-z0-9]$")


def _embedding_function(embedder: Any) -> Any:
    chromadb = require("chromadb", extra="chroma", feature="ChromaDb")

    class RagCoreEmbeddingFunction(chromadb.EmbeddingFunction):
        """Chroma's hook for computing vectors, backed by the store's embedder (never a download)."""

        def __init__(self, embedder: Any) -> None:
            self._embedder = embedder

        def _embed(self, input: Any, input_type: str) -> Any:
            np = require("numpy", extra="chroma", feature="ChromaDb")

            if self._embedder is None:
                raise VectorDbError("this collection was opened without an embedder: open it through rag_core's ChromaDb")
            return [np.asarray(v, dtype=np.float32) for v in self._embedder.embed(list(input), input_type)]

        def __call__(self, input: Any) -> Any:
            return self._embed(input, "document")

        def embed_query(self, input: Any) -> Any:
            return self._embed(input, "query")

        @staticmethod
        def name() -> str:
            return "rag_core"

        def get_config(self) -> dict[str, Any]:
            return {"embedder": self._embedder.cache_key if self._embedder is not None else None}

        @staticmethod
        def build_from_config(config: dict[str, Any]) -> Any:
            # Chroma rebuilds the function from its saved config; the embedder itself is not
            # serialisable, so this copy refuses to embed (ChromaDb always passes the real one)
            return RagCoreEmbeddingFunction(None)

    return RagCoreEmbeddingFunction(embedder)


def _flat(meta: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in meta.items()
            if isinstance(v, (str, int, float, bool)) and k and not k.startswith(("_rag_", "chroma:"))}


def _where(filters: dict[str, Any] | None) -> dict[str, Any] | None:
    if not filters:
        return None
    for key, value in filters.items():
        if not isinstance(value, (str, int, float, bool)):
            raise VectorDbError(f"ChromaDb filters need scalar values; {key!r} is {type(value).__name__}")
    clauses = [{k: {"$eq": v}} for k, v in filters.items()]
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


class ChromaDb(VectorDb):
    def __init__(
        self,
        collection: str,
        name: str | None = None,
        description: str | None = None,
        path: str = "tmp/chromadb",
        persistent_client: bool = False,
        embedder: Embedder | None = None,
        search_type: SearchType | str | None = None,
        hybrid_rrf_k: int = 60,
        reranker: Reranker | None = None,
        candidate_depth: int | None = None,
        ef_search: int = 100,
        ef_construction: int = 100,
        batch_size: int | None = None,
        host: str | None = None,
        port: int = 8000,
        ssl: bool = False,
        headers: dict[str, str] | None = None,
    ) -> None:
        if embedder is None:
            raise VectorDbError(
                "ChromaDb needs an embedder (Chroma's own default downloads a model at run time): "
                "pass embedder=OpenAIEmbedder(...), LocalEmbedder() or another"
            )
        if not _COLLECTION_NAME.match(collection):
            raise VectorDbError(f"invalid Chroma collection name {collection!r}: use 3-512 letters, digits, '.', '_' or '-'")
        super().__init__(embedder, search_type, hybrid_rrf_k, reranker, candidate_depth, name, description)
        self.collection_name = collection
        self.path = Path(path)
        self.persistent_client = persistent_client
        self.ef_search = ef_search
        self.ef_construction = ef_construction
        self._collection: Any = None
        self._bm25: BM25Index | None = None
        self._batch_size = batch_size  # at most Chroma's own maximum
        self._dimensions: int | None = None
        # server mode: a Chroma server shared by several clients (everything else is unchanged)
        self.host, self.port, self.ssl, self.headers = host, port, ssl, headers
        self._generation: str | None = None  # the collection's write token the keyword index was built at

    # ----------------------------------------------------------- connection
    def _write_lock(self) -> Any:
        """The folder's cross-process lock, also held while opening (re-entrant within this store);
        none for an in-memory client, nor for a server (which orders its clients' writes itself)."""
        if not self.persistent_client or self.host is not None:
            return nullcontext()
        return self._file_lock_at(self.path / ".rag_core.lock", "chroma")

    def _describe(self) -> str:
        return f"ChromaDb collection {self.collection_name!r}"

    @property
    def collection(self) -> Any:
        if self._collection is None:
            with self._write_lock():
                self._open()
        return self._collection

    def _open(self) -> None:
        if self._collection is None:
            chromadb = require("chromadb", extra="chroma", feature="ChromaDb")
            from chromadb.config import Settings

            settings = Settings(anonymized_telemetry=False)
            with _CLIENTS_STARTING:
                if self.host is not None:
                    try:
                        client = chromadb.HttpClient(host=self.host, port=self.port, ssl=self.ssl, headers=self.headers,
                                                     settings=settings)
                    except Exception as exc:  # chromadb raises ValueError, httpx and its own errors here
                        raise VectorDbError(f"cannot reach the Chroma server at {self.host}:{self.port} "
                                            f"({type(exc).__name__}: {exc})") from exc
                elif self.persistent_client:
                    client = chromadb.PersistentClient(path=str(self.path), settings=settings)
                else:
                    client = chromadb.EphemeralClient(settings=settings)
            self._client = client
            self._collection = client.get_or_create_collection(
                self.collection_name,
                embedding_function=_embedding_function(self.embedder),
                configuration={"hnsw": {"space": "cosine", "ef_search": self.ef_search, "ef_construction": self.ef_construction}},
            )
            self._batch = min(self._batch_size or client.get_max_batch_size(), client.get_max_batch_size())
            self._recover()

    @property
    def _bm25_folder(self) -> Path:
        return self.path / f"{self.collection_name}.bm25"

    def _server_generation(self) -> str:
        """The collection's write token, as the server has it now, with its count: every rag-core
        write stamps a new token; the count catches writers that do not."""
        current = self._client.get_collection(self.collection_name)
        return f"{(current.metadata or {}).get(_GENERATION)}:{current.count()}"

    def _stamp(self) -> None:
        """Tell other clients of a server that the collection changed (a new random token)."""
        if self.host is not None:
            metadata = {k: v for k, v in (self.collection.metadata or {}).items() if not k.startswith("hnsw:")}
            # from the OS: unique across clients even where a test seeds uuid4
            self.collection.modify(metadata={**metadata, _GENERATION: os.urandom(16).hex()})
            self._generation = self._server_generation()

    def _keyword_index(self) -> BM25Index:
        if self.host is not None and self._bm25 is not None and self._server_generation() != self._generation:
            self._bm25 = None  # another client wrote: rebuild from the collection
        if self._bm25 is None:
            index = BM25Index(load_texts=self._all_texts)
            ids = set(self.collection.get(include=[])["ids"])
            if self.host is not None:
                self._generation = self._server_generation()
            if not (self.persistent_client and self.host is None and index.load(self._bm25_folder, ids)):
                index.add(self._all_texts().items())
                if self.host is None:  # a server's clients build in memory; building is not a write
                    self._save_keyword_index(index)
            self._bm25 = index
        return self._bm25

    def _save_keyword_index(self, index: BM25Index) -> None:
        if self.host is not None:
            self._stamp()  # a server's clients keep their indexes in memory: tell them to rebuild
        elif self.persistent_client:
            index.save(self._bm25_folder)

    def _all_texts(self) -> dict[str, str]:
        got = self.collection.get(include=["documents"])
        return dict(zip(got["ids"], got["documents"]))

    # ----------------------------------------------------------- storage
    def count(self) -> int:
        return self.collection.count()

    def _existing_ids(self, ids: list[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(ids), 1000):
            found.update(self.collection.get(ids=ids[start : start + 1000], include=[])["ids"])
        return found

    def _stored_dimensions(self) -> int | None:
        # a collection's vector size is fixed by its first vector, so once known it is kept
        if self._dimensions is None:
            embeddings = self.collection.peek(1).get("embeddings")
            self._dimensions = None if embeddings is None or len(embeddings) == 0 else len(embeddings[0])
        return self._dimensions

    @property
    def _journal(self) -> Path:
        return self.path / f"{self.collection_name}.replace.json"

    def _records(self, documents: list[Document]) -> list[dict[str, Any]]:
        """What Chroma will store for each document, validated by Chroma's own rules first, so a
        refusal comes before anything is written."""
        validate_metadata = require("chromadb.api.types", extra="chroma", feature="ChromaDb").validate_metadata

        metadatas = []
        for doc in documents:
            meta = {**_flat(doc.meta_data), _META: json.dumps(doc.meta_data, ensure_ascii=False),
                    **({_NAME: doc.name} if doc.name is not None else {})}
            try:
                validate_metadata(meta)
            except ValueError as exc:
                raise VectorDbError(f"collection {self.collection_name!r}: document {doc.name or doc.id!r}: "
                                    f"Chroma refuses its metadata ({exc})") from None
            metadatas.append(meta)
        return metadatas

    def _add(self, documents: list[Document], metadatas: list[dict[str, Any]], upsert: bool) -> None:
        write = self.collection.upsert if upsert else self.collection.add
        for start in range(0, len(documents), self._batch):
            batch = documents[start : start + self._batch]
            write(ids=[d.id for d in batch], documents=[d.content for d in batch],
                  embeddings=[d.embedding for d in batch], metadatas=metadatas[start : start + self._batch])

    def _refresh_keyword_index(self) -> BM25Index:
        """The keyword index, reloaded (and checked) when another process wrote since (the caller
        holds the write lock)."""
        if self._bm25 is not None and len(self._bm25) != self.count():
            self._bm25 = None
        return self._keyword_index()

    def _insert(self, documents: list[Document]) -> int:
        present = self._existing_ids([d.id for d in documents])  # inside the lock: what another process added
        documents = [d for d in documents if d.id not in present]
        if not documents:
            return 0
        self._add_indexed(documents, upsert=False)
        return len(documents)

    def _upsert(self, documents: list[Document]) -> None:
        self._add_indexed(documents, upsert=True)

    def _add_indexed(self, documents: list[Document], upsert: bool) -> None:
        metadatas = self._records(documents)
        index = self._refresh_keyword_index()
        self._add(documents, metadatas, upsert)
        index.add((d.id, d.content) for d in documents)  # type: ignore[misc]
        self._save_keyword_index(index)

    def _replace(self, name: str, documents: list[Document]) -> None:
        metadatas = self._records(documents)
        index = self._refresh_keyword_index()
        old = self.collection.get(where={_NAME: {"$eq": name}}, include=[])["ids"]
        new = [d.id for d in documents]
        journal = {"name": name, "old": old, "new": new}
        if self.persistent_client and self.host is None:
            write_atomic(self._journal, json.dumps(journal))
        try:
            self._add(documents, metadatas, upsert=True)
        except BaseException:
            self._close_journal(journal, forward=False)  # in this process; a killed process is rolled back on the next open
            raise
        self._close_journal(journal, forward=True)
        index.remove(old)
        index.add((d.id, d.content) for d in documents)  # type: ignore[misc]
        self._save_keyword_index(index)

    def _close_journal(self, journal: dict[str, Any], forward: bool) -> None:
        """Finish a replace (remove the old documents not in the new source), or roll it back
        (remove the new documents that were not there before), then drop the journal."""
        # ids are content hashes, so a new document that kept an old id holds the old content:
        # rolling back removes only the ids that were not there before, which restores the old source
        keep = set(journal["new"] if forward else journal["old"])
        doomed = [i for i in (journal["old"] if forward else journal["new"]) if i not in keep]
        for start in range(0, len(doomed), self._batch):
            self.collection.delete(ids=doomed[start : start + self._batch])
        self._journal.unlink(missing_ok=True)

    def _recover(self) -> None:
        """Finish or roll back a replace that a crashed process left half done."""
        if not self.persistent_client or self.host is not None or not self._journal.exists():
            return
        try:
            journal = json.loads(self._journal.read_text(encoding="utf-8"))
            journal["old"], journal["new"]  # noqa: B018 (shape check)
        except (OSError, ValueError, KeyError, TypeError):
            # written atomically, so an unreadable journal is not ours to act on: leave it, say so
            raise VectorDbError(f"{self._journal}: an unfinished replace journal that cannot be read; "
                                "move it aside to open the collection as it is") from None
        present = set()
        for start in range(0, len(journal["new"]), 1000):
            present.update(self._collection.get(ids=journal["new"][start : start + 1000], include=[])["ids"])
        if present == set(journal["new"]):
            self._close_journal(journal, forward=True)
        else:
            self._close_journal(journal, forward=False)
        self._bm25 = None  # checked against the collection's ids, and rebuilt, on next use

    def _delete(self, ids: list[str] | None, name: str | None) -> int:
        doomed: list[str] = list(self._existing_ids(ids)) if ids else []
        if name is not None:
            doomed += self.collection.get(where={_NAME: {"$eq": name}}, include=[])["ids"]
        if doomed:
            self.collection.delete(ids=doomed)
            index = self._keyword_index()
            index.remove(doomed)
            self._save_keyword_index(index)
        return len(set(doomed))

    def _fetch(self, ids: list[str]) -> dict[str, Document]:
        if not ids:
            return {}
        got = self.collection.get(ids=ids, include=["documents", "metadatas"])
        out = {}
        for doc_id, content, meta in zip(got["ids"], got["documents"], got["metadatas"]):
            out[doc_id] = Document(content=content, meta_data=json.loads(meta[_META]), name=meta.get(_NAME), id=doc_id)
        return out

    # ----------------------------------------------------------- rankings
    def _vector_ranking(self, vector: list[float], depth: int, filters: dict[str, Any] | None) -> Ranking:
        if self._stored_dimensions() is None:
            return []  # nothing stored yet
        # Chroma (1.0 and later) returns fewer results when fewer match: no count is needed first
        # (a round trip per query, about 0.7 ms in process and more against a server)
        got = self.collection.query(
            query_embeddings=[vector], n_results=self._candidates(depth),
            where=_where(filters), include=["embeddings"],
        )
        ids = got["ids"][0]
        return self._rescored(ids, got["embeddings"][0], vector, depth) if ids else []

    def _keyword_ranking(self, query: str, depth: int, filters: dict[str, Any] | None) -> Ranking:
        index = self._keyword_index()
        allowed = None
        if filters:
            allowed = set(self.collection.get(where=_where(filters), include=[])["ids"])
        return index.rank(query, depth, allowed)
