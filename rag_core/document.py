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
