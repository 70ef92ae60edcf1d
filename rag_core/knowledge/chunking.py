"""Chunking: split long text into overlapping, paragraph-aware pieces."""

from __future__ import annotations

import re
from dataclasses import dataclass

_PARAGRAPHS = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class ChunkingStrategy:
    """Pack whole paragraphs into chunks of at most ``chunk_size`` characters.

    A paragraph longer than a chunk is cut at sentence ends (words as a last resort).
    Each chunk after the first starts with the last ``overlap`` characters of the one
    before it (cut at a word boundary), so a fact split across a boundary survives.
    """

    chunk_size: int = 1500
    overlap: int = 150

    def __post_init__(self) -> None:
        if self.chunk_size < 1:
            raise ValueError(f"chunk_size must be positive, got {self.chunk_size}")
        if not 0 <= self.overlap < self.chunk_size:
            raise ValueError(f"overlap must be in [0, chunk_size), got {self.overlap}")

    def chunk(self, text: str) -> list[str]:
        pieces: list[str] = []
        for paragraph in _PARAGRAPHS.split(text.strip()):
            paragraph = paragraph.strip()
            if paragraph:
                pieces.extend(self._fit(paragraph))
        chunks: list[str] = []
        current = ""
        for piece in pieces:
            candidate = f"{current}\n\n{piece}" if current else piece
            if len(candidate) <= self.chunk_size:
                current = candidate
                continue
            chunks.append(current)
            tail = self._tail(current)
            current = f"{tail} {piece}" if tail and len(tail) + 1 + len(piece) <= self.chunk_size else piece
        if current:
            chunks.append(current)
        return chunks

    def _fit(self, paragraph: str) -> list[str]:
        """Cut a paragraph into pieces no longer than a chunk."""
        if len(paragraph) <= self.chunk_size:
            return [paragraph]
        out: list[str] = []
        current = ""
        for unit in _SENTENCE_END.split(paragraph):
            words = [unit] if len(unit) <= self.chunk_size else unit.split()
            for word in words:
                while len(word) > self.chunk_size:  # a single unbroken token: hard cut
                    if current:
                        out.append(current)
                        current = ""
                    out.append(word[: self.chunk_size])
                    word = word[self.chunk_size :]
                candidate = f"{current} {word}" if current else word
                if len(candidate) <= self.chunk_size:
                    current = candidate
                else:
                    out.append(current)
                    current = word
        if current:
            out.append(current)
        return out

    def _tail(self, chunk: str) -> str:
        if not self.overlap:
            return ""
        tail = chunk[-self.overlap :]
        cut = tail.find(" ")
        return tail[cut + 1 :].strip() if 0 <= cut < len(tail) - 1 else ""
