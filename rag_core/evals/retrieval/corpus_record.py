"""One document of a suite's corpus as a retriever target's ``index(documents)`` is given it.

A record holds what the dataset holds, under the dataset's names: ``id`` (BEIR's ``_id``),
``title`` and ``text`` (each "" where the line has none), then every other field of the line as
it is (a BEIR line's ``metadata``). It is a ``dict``, so a retriever written over BEIR's corpus
records (``doc["title"]``, ``doc.get("metadata", {})``, ``json.dumps(doc)``) runs unchanged, and
its fields read as attributes too (``doc.id``, ``doc.title``, ``doc.text``), as ir_datasets' and
LangChain's documents read theirs.

``title_and_text`` is the text the built-in stores index and the suite's embedding cache holds
vectors for: ``title + " " + text``, the BEIR/MTEB convention.
"""

from __future__ import annotations

from typing import Any


def title_and_text(title: str | None, text: str | None) -> str:
    """``title + " " + text``, the BEIR/MTEB convention (the text alone where there is no title)."""
    text = text or ""
    return f"{title} {text}".strip() if title else text


class CorpusRecord(dict):  # type: ignore[type-arg]
    """A corpus document's fields by key and by attribute (a key the ``dict`` methods do not
    shadow: ``doc["items"]`` always, ``doc.items`` is the method)."""

    __slots__ = ()  # no attributes of its own: an attribute is a field, read from the dict

    def __init__(self, id: str, text: str = "", title: str = "", **fields: Any) -> None:
        super().__init__(id=id, title=title, text=text, **fields)

    @classmethod
    def of(cls, fields: dict[str, Any]) -> CorpusRecord:
        """A record of these fields, in their order (``id``, ``title`` and ``text`` among them)."""
        record = cls.__new__(cls)
        dict.update(record, fields)
        return record

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"this corpus record has no field {name!r} (its fields: "
                                 f"{', '.join(map(str, self))})") from None

    @property
    def title_and_text(self) -> str:
        """The text the built-in stores index: ``title + " " + text``."""
        return title_and_text(self.get("title"), self.get("text"))

    def __reduce__(self) -> tuple[Any, ...]:  # pickled and copied as the record it is, not a plain dict
        return CorpusRecord.of, (dict(self),)

    def __repr__(self) -> str:
        return f"CorpusRecord({dict.__repr__(self)})"
