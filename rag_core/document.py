"""Document: the unit of knowledge that is stored, searched and shown to the model."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Document"]


@dataclass
class Document:
    content: str
    meta_data: dict[str, Any] = field(default_factory=dict)
    name: str | None = None
    id: str | None = None
    # read as a list of floats, as Agno's Document has it; a store that embedded the document
    # from an embedding cache holds a float32 array row behind it (see _read_embedding)
    embedding: list[float] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The shape the agent formats for the model: content, meta_data, then name if set."""
        out: dict[str, Any] = {"content": self.content, "meta_data": self.meta_data}
        if self.name is not None:
            out["name"] = self.name
        return out

    @property
    def content_hash(self) -> str:
        """Identity of the text, used for idempotent ingestion."""
        return hashlib.sha256(self.content.encode("utf-8")).hexdigest()


def _read_embedding(doc: Document) -> list[float] | None:
    """``doc.embedding``: a list, made from the array row the first time it is read, and kept.

    Why an array behind it: a corpus ingested from an embedding cache made a list of 384 Python
    floats per document (12 KB, against 1.5 KB as float32) that only the caller reading it back
    needs; the stores read the row itself (``embedding_of``). The list, once made, is the
    embedding: a caller changing it changes the document's embedding, as before."""
    value = doc.__dict__.get("_embedding")
    if value is not None and not isinstance(value, list) and hasattr(value, "tolist"):  # a numpy array
        value = value.tolist()
        doc.__dict__["_embedding"] = value
    return value


def _write_embedding(doc: Document, value: Any) -> None:
    doc.__dict__["_embedding"] = value


# the dataclass's field stays (its __init__, __eq__, __repr__, replace and asdict read and write
# it through this property)
Document.embedding = property(_read_embedding, _write_embedding)  # type: ignore[assignment]


def embedding_of(doc: Document) -> Any:
    """The document's embedding as it is held, without making a list of it: a float32 array row
    (set by a store from an embedding cache), a sequence the caller set, or None."""
    return doc.__dict__.get("_embedding")
