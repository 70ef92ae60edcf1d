"""Orders that change from process to process, made one order within a case's run, as its ids
and keys are seeded (``seeded_randomness.py``): the same program given the same answers sends the
same bytes when it is recorded and when it is replayed, in any process.

Each source below hands a program a mapping whose key order is not the program's but the
process's; within a run (the code ``seeded_randomness.current()`` finds a sequence for), the
mapping comes with its keys sorted instead:

- chromadb's local client (``chromadb.api.rust.RustBindingsAPI``): its Rust core keeps each
  record's metadata in a ``HashMap`` (``chroma_types::Metadata``), whose hasher Rust seeds from
  the OS for every map, and the binding turns it into a ``dict`` in that map's order; so the keys
  of every metadata ``query`` and ``get`` (and ``peek``) return come in another order in every
  process, and from map to map in one. No setting, option or documented order changes that.
- Agno's ``Document.to_dict`` (``agno.knowledge.document.base``): it builds the document from a
  Python ``set`` of its field names, iterated in the order of the process's string hashing
  (``PYTHONHASHSEED``).

Sorted is one of the orders each source gives outside a run, so within a run the program sends
what it could send in production: only which of those orders is no longer left to the process.
Outside a run (pytest, other tests, the harness between runs, code a run left running after it
ended) every source gives its own order.

Each is wrapped for good (``install``, at every run's start) in the module imported now, or when
its module is imported (``wrapt``'s post-import hooks), so a module first imported within a run, or
imported again since the last, is covered too. What
is not covered: the key order of a Chroma server's answers (``chromadb.HttpClient``), a
collection's own metadata, and every other order that follows the process's string hashing.
"""

from __future__ import annotations

import functools
import sys
import threading
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rag_core.evals.recording import seeded_randomness


def sorted_keys(mapping: Any) -> Any:
    """``mapping`` as a dict with its keys in sorted order; anything else (None: a record without
    metadata) as it is."""
    return dict(sorted(mapping.items())) if isinstance(mapping, Mapping) else mapping


def _query_metadatas_sorted(result: Any) -> Any:
    """A Chroma ``QueryResult``: one list of metadata per query embedding."""
    if isinstance(result, dict) and result.get("metadatas") is not None:
        result["metadatas"] = [[sorted_keys(each) for each in group] for group in result["metadatas"]]
    return result


def _get_metadatas_sorted(result: Any) -> Any:
    """A Chroma ``GetResult``: one metadata per record."""
    if isinstance(result, dict) and result.get("metadatas") is not None:
        result["metadatas"] = [sorted_keys(each) for each in result["metadatas"]]
    return result


@dataclass(frozen=True)
class Source:
    """A function whose result's key order is the process's: ``module``'s ``function`` (a dotted
    path within it), and what gives its result one order."""

    module: str
    function: str
    ordered: Callable[[Any], Any]


SOURCES = (
    Source("chromadb.api.rust", "RustBindingsAPI._query", _query_metadatas_sorted),
    Source("chromadb.api.rust", "RustBindingsAPI._get", _get_metadatas_sorted),
    Source("agno.knowledge.document.base", "Document.to_dict", sorted_keys),
)


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.waiting: set[str] = set()  # modules a post-import hook waits for
        self.wrapped: dict[Source, weakref.WeakSet] = {source: weakref.WeakSet() for source in SOURCES}


_STATE = _State()


def install() -> None:
    """Wrap every source whose module is imported now and wait for the others' import; called at
    every run's start, as a module may be imported again as a new module object since the last
    run (``importlib.reload``, or pytest's in-process runs restoring ``sys.modules``), and
    ``wrapt``'s hooks fire once per name. Never undone: other code may have wrapped them since."""
    import wrapt

    for source in SOURCES:
        module = sys.modules.get(source.module)
        if module is not None:
            _wrap(source, module)
            continue
        with _STATE.lock:
            if source.module in _STATE.waiting:
                continue
            _STATE.waiting.add(source.module)
        wrapt.register_post_import_hook(_on_import, source.module)


def _on_import(module: Any) -> None:
    with _STATE.lock:
        _STATE.waiting.discard(module.__name__)
    for source in SOURCES:
        if source.module == module.__name__:
            _wrap(source, module)


def _wrap(source: Source, module: Any) -> None:
    """``source``'s function in ``module`` wrapped, unless it already is (its owner, a class, is
    remembered weakly: a module imported again brings new classes)."""
    import wrapt

    owner_path, _, name = source.function.rpartition(".")
    owner = functools.reduce(lambda found, part: getattr(found, part, None),
                             owner_path.split(".") if owner_path else [], module)
    if not callable(getattr(owner, name, None)):  # another version, without this source: nothing to order
        return
    with _STATE.lock:
        if owner in _STATE.wrapped[source]:
            return
        _STATE.wrapped[source].add(owner)

    def in_one_order(wrapped: Callable[..., Any], instance: Any, args: tuple, kwargs: dict) -> Any:
        result = wrapped(*args, **kwargs)
        return result if seeded_randomness.current() is None else source.ordered(result)

    wrapt.wrap_function_wrapper(owner, name, in_one_order)
