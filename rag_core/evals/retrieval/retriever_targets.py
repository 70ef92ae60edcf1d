"""Retriever targets: any program's retriever in a suite, as ``target: "package.module:factory"``.

The factory builds the retriever as its library's docs build it, and returns one of:

- an object with ``search(query, k, **settings)`` and, optionally, ``index(documents)``;
- a pair ``(index, search)`` of callables (``index`` may be None: a service indexed already);
- a callable: ``search`` alone.

``index`` is given the suite's corpus once, every document in the dataset's order, those with no
text too, each a :class:`CorpusRecord` holding the dataset's fields by key and by attribute
(``doc["title"]``, ``doc.text``; ``doc.title_and_text`` is what the built-in stores index).
``search`` answers with the ranked document ids, best first, or with documents (objects or
mappings) whose id the suite names with ``id_field:`` (a dotted path: ``metadata.doc_id``);
``(document, score)`` pairs are read the same way. Either may be ``async def`` (awaited); search
may return any ordered iterable, lazy ones too, of which at most ``k`` items are read. The
suite's ``settings:`` are passed to every ``search`` as keyword arguments, so a sweep can vary them.

A factory with a parameter is given a :class:`RetrieverContext`: the suite's embedding cache
(replayed vectors, no model or provider needed) and whether the run is emulated.

Whatever goes wrong in the program (an import, the factory, ``index``, a ``search`` of one query,
an answer of the wrong shape) is one :class:`RetrieverTargetError` naming the suite, the retriever
and, for a search, the query: never a traceback from inside the program.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import numbers
import traceback
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from rag_core.evals.common.paths import shown
from rag_core.evals.retrieval.corpus_record import CorpusRecord


class RetrieverTargetError(ValueError):
    """A retriever target failed or answered in a shape a suite cannot score. ``cause`` is what the
    program raised, if anything (the recording looks in it for a request no cassette holds)."""

    def __init__(self, message: str, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.cause = cause


@dataclass
class RetrieverContext:
    """What a factory may ask for besides nothing: a target written as its library's docs write
    it needs none of it."""

    suite: str
    retriever: str
    root: Path  # the project root: suite paths are relative to it
    embedder: Any = None  # the suite's embedding cache (``embedder:`` of the suite), or None
    emulated: bool = False  # recording against the emulator, or replaying such a recording

    def embed(self, texts: list[str], input_type: str = "document") -> list[list[float]]:
        """Vectors of ``texts`` from the suite's embedding cache (``input_type``: document or query)."""
        if self.embedder is None:
            raise RetrieverTargetError(f"suite {self.suite}, retriever {self.retriever}: the target asked for the "
                                       "suite's embeddings, but the suite names no embedder: give it one (embedder:)")
        return self.embedder.embed(texts, input_type)  # type: ignore[arg-type]


@dataclass
class LoadedTarget:
    """A target's retriever, made callable the one way the suite calls it."""

    where: str  # "suite kitchen, retriever bm25_lib": how every message names it
    index: Callable[[list[CorpusRecord]], Any] | None
    search: Callable[..., Any]
    id_field: str | None
    settings: dict[str, Any]

    def load_corpus(self, records: list[CorpusRecord]) -> None:
        if self.index is None:
            return
        try:
            settle(self.index(records))
        except (Exception, SystemExit) as exc:
            raise _failed(f"{self.where}: index() of {len(records)} documents", exc) from None

    def ranking(self, query_id: str, text: str, k: int) -> list[str]:
        """The ids ``search`` returns for one query, best first, at most ``k``."""
        call = f"{self.where}: search() of query {query_id} ({_brief(text)})"
        try:
            returned = settle(self.search(text, k, **self.settings), limit=k)
            return ranked_ids(returned, self.id_field, call, limit=k)
        except (Exception, SystemExit) as exc:  # a lazy ranking runs the program as it is read
            raise _failed(call, exc) from None


def load_target(spec: str, id_field: str | None, settings: dict[str, Any], where: str,
                context: RetrieverContext) -> LoadedTarget:
    """Import the factory ``spec`` names, call it, and read what it returned."""
    from rag_core.evals.common.imports import import_named
    from rag_core.evals.common.errors import CaseFileError

    try:
        factory = import_named(spec, f"{where}: target")
    except CaseFileError as exc:
        raise RetrieverTargetError(str(exc)) from None
    if not callable(factory):
        raise RetrieverTargetError(f"{where}: target: {spec} is a {type(factory).__name__}, not a factory to call")
    try:
        made = settle(factory(context) if _takes_context(factory) else factory())
    except (Exception, SystemExit) as exc:
        raise _failed(f"{where}: the factory {spec}", exc) from None
    index, search = _parts(made, spec, where)
    return LoadedTarget(where, index, search, id_field, dict(settings))


def _parts(made: Any, spec: str, where: str) -> tuple[Callable[..., Any] | None, Callable[..., Any]]:
    """(index, search) of what a factory returned."""
    search = getattr(made, "search", None)
    if callable(search):
        index = getattr(made, "index", None)
        return (index if callable(index) else None), search
    if isinstance(made, tuple) and len(made) == 2 and callable(made[1]) and (made[0] is None or callable(made[0])):
        return made[0], made[1]
    if callable(made):
        return None, made
    raise RetrieverTargetError(
        f"{where}: the factory {spec} returned a {type(made).__name__}: return an object with search(query, k) "
        "(and, if it indexes the corpus itself, index(documents)), a pair (index, search) of callables, or "
        "the search callable alone")


def _takes_context(factory: Callable[..., Any]) -> bool:
    """Whether the factory asks for the context: a required positional parameter, or one named
    ``context``/``ctx``. A factory with only optional parameters of its own is called without."""
    try:
        parameters = list(inspect.signature(factory).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return bool(positional) and (positional[0].default is positional[0].empty
                                 or positional[0].name in ("context", "ctx"))


_MISSING = object()


def ranked_ids(returned: Any, id_field: str | None, call: str, limit: int | None = None) -> list[str]:
    """The document ids of a search's answer, in its order, the first ``limit`` of them (no more
    is read: a lazy ranking may be endless); a RetrieverTargetError naming ``call`` when the
    answer is not a ranking (unordered, or naming a document twice: a ranking lists each once)."""
    if isinstance(returned, (str, bytes, Mapping)) or not isinstance(returned, Iterable):
        raise RetrieverTargetError(f"{call} returned a {type(returned).__name__}: return the ranked documents "
                                   "(their ids, or documents with id_field: naming their id), best first")
    if isinstance(returned, Set):  # set, frozenset, dict keys: an order that changes with PYTHONHASHSEED
        raise RetrieverTargetError(f"{call} returned a {type(returned).__name__}, which has no order: its ranks "
                                   "would change from one run to the next. Return the ranked documents in order, "
                                   "best first (a list)")
    items = returned if limit is None else itertools.islice(returned, limit)
    try:
        return _read_ranking(items, id_field, call)
    finally:
        if inspect.isgenerator(returned):  # what it holds open (a cursor, a connection) is let go now
            returned.close()


def _read_ranking(items: Iterable[Any], id_field: str | None, call: str) -> list[str]:
    """Each item's document id, in order; a document named twice is an error."""
    ids: list[str] = []
    seen: dict[str, int] = {}
    for rank, item in enumerate(items, start=1):
        doc_id = _document_id(item, id_field, f"{call} returned, at rank {rank},")
        if doc_id in seen:
            raise RetrieverTargetError(f"{call} returned document {doc_id!r} twice (ranks {seen[doc_id]} and {rank}): "
                                       "a ranking names each document once")
        seen[doc_id] = rank
        ids.append(doc_id)
    return ids


def _document_id(item: Any, id_field: str | None, where: str) -> str:
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], numbers.Real):
        item = item[0]  # (document, score), as similarity_search_with_score and most clients answer
    if id_field is None:
        if isinstance(item, str) and item:
            return item
        if isinstance(item, numbers.Integral) and not isinstance(item, bool):  # numpy's integers too
            return str(item)
        raise RetrieverTargetError(f"{where} a {type(item).__name__}: search returns document ids, or documents "
                                   "whose id field the suite names (id_field: id, or a path such as metadata.doc_id)")
    value = item
    for part in id_field.split("."):
        value = value.get(part, _MISSING) if isinstance(value, Mapping) else getattr(value, part, _MISSING)
        if value is _MISSING:
            raise RetrieverTargetError(f"{where} a {type(item).__name__} without {id_field} (id_field:)")
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value:
        raise RetrieverTargetError(f"{where} a {type(item).__name__} whose {id_field} is {value!r}, not a document id")
    return value


_LOOP: asyncio.AbstractEventLoop | None = None


def settle(returned: Any, limit: int | None = None) -> Any:
    """A coroutine awaited, an async generator collected (its first ``limit`` items, no more
    read); anything else as it is. One loop serves the whole process: an async client made at
    import binds itself to the loop it first ran on."""
    global _LOOP
    if not (inspect.isawaitable(returned) or inspect.isasyncgen(returned)):
        return returned
    if _LOOP is None or _LOOP.is_closed():
        _LOOP = asyncio.new_event_loop()
    if inspect.isasyncgen(returned):
        return _LOOP.run_until_complete(_collect(returned, limit))
    return _LOOP.run_until_complete(returned)


async def _collect(stream: Any, limit: int | None) -> list[Any]:
    items: list[Any] = []
    try:
        if limit is None or limit > 0:
            async for item in stream:
                items.append(item)
                if limit is not None and len(items) >= limit:
                    break
    finally:
        await stream.aclose()
    return items


def _failed(what: str, exc: BaseException) -> RetrieverTargetError:
    if isinstance(exc, RetrieverTargetError):  # says what it is already (the context's embed())
        return exc
    if isinstance(exc, SystemExit):  # a target that exits must not end the test session
        return RetrieverTargetError(f"{what} called sys.exit({exc.code!r})", exc)
    return RetrieverTargetError(f"{what} raised {type(exc).__name__}: {exc}{_origin(exc)}", exc)


def _origin(exc: BaseException) -> str:
    """Where in the program it was raised: the innermost frame outside the harness and the libraries."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if "site-packages" not in f.filename and "/rag_core/evals/" not in f.filename.replace("\\", "/")]
    return f" (at {shown(Path(frames[-1].filename))}:{frames[-1].lineno})" if frames else ""


def _brief(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")
