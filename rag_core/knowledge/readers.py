"""Readers: turn a text, a file (text, markdown, PDF) or a URL into chunked Documents.

Every chunk keeps where it came from: ``source`` (file name or URL), ``chunk`` (its
index in the source) and, for PDFs, ``page``.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from rag_core._optional import require
from rag_core.document import Document
from rag_core.errors import RagCoreError
from rag_core.knowledge.chunking import ChunkingStrategy


class ReaderError(RagCoreError, ValueError):
    """A source could not be read: the message names it and says why."""


def chunk_documents(
    text: str, *, name: str | None, source: str | None, metadata: dict[str, Any], chunking: ChunkingStrategy,
    extra: dict[str, Any] | None = None, first_chunk: int = 0,
) -> list[Document]:
    docs = []
    for index, piece in enumerate(chunking.chunk(text), start=first_chunk):
        meta = dict(metadata)
        if source is not None:
            meta.setdefault("source", source)
        meta.update(extra or {})
        meta["chunk"] = index
        docs.append(Document(content=piece, meta_data=meta, name=name))
    return docs


def read_text(text: str, *, name: str | None, metadata: dict[str, Any], chunking: ChunkingStrategy) -> list[Document]:
    if not text.strip():
        raise ReaderError(f"the text of {name or 'the document'!r} is empty")
    return chunk_documents(text, name=name, source=metadata.get("source"), metadata=metadata, chunking=chunking)


def read_path(path: str | Path, *, name: str | None, metadata: dict[str, Any], chunking: ChunkingStrategy) -> list[Document]:
    path = Path(path)
    if not path.is_file():
        raise ReaderError(f"{path}: no such file")
    name = name or path.stem
    if path.suffix.lower() == ".pdf":
        return read_pdf(path, name=name, metadata=metadata, chunking=chunking)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReaderError(f"{path}: cannot be read as UTF-8 text ({exc})") from exc
    if not text.strip():
        raise ReaderError(f"{path}: the file is empty")
    return chunk_documents(text, name=name, source=path.name, metadata=metadata, chunking=chunking)


def read_pdf(path: Path, *, name: str, metadata: dict[str, Any], chunking: ChunkingStrategy) -> list[Document]:
    pypdf = require("pypdf", extra="pdf", feature="reading PDF files")
    try:
        reader = pypdf.PdfReader(str(path))
        if reader.is_encrypted:
            raise ReaderError(f"{path}: the PDF is encrypted")
        pages = [page.extract_text() or "" for page in reader.pages]
    except ReaderError:
        raise
    except Exception as exc:  # pypdf raises many types for damaged files
        raise ReaderError(f"{path}: not a readable PDF ({type(exc).__name__}: {exc})") from exc
    docs: list[Document] = []
    for number, text in enumerate(pages, start=1):
        if text.strip():
            docs.extend(
                chunk_documents(text, name=name, source=path.name, metadata=metadata, chunking=chunking,
                                extra={"page": number}, first_chunk=len(docs))
            )
    if not docs:
        raise ReaderError(f"{path}: the PDF has no extractable text ({len(pages)} page(s))")
    return docs


class _TextExtractor(HTMLParser):
    _SKIP = {"script", "style", "noscript", "head"}
    _BLOCK = {"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "section", "article", "pre"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in self._SKIP:
            self._skipping += 1
        elif tag in self._BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP and self._skipping:
            self._skipping -= 1
        elif tag in self._BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def html_to_text(markup: str) -> str:
    parser = _TextExtractor()
    parser.feed(markup)
    text = html.unescape("".join(parser.parts))
    text = re.sub(r"[ \t]+", " ", text)
    return re.sub(r"\n\s*\n\s*", "\n\n", text).strip()


def _from_response(url: str, status: int, content_type: str, body: str, *, name: str | None,
                   metadata: dict[str, Any], chunking: ChunkingStrategy) -> list[Document]:
    if status >= 400:
        raise ReaderError(f"{url}: the server answered HTTP {status}")
    text = html_to_text(body) if "html" in content_type else body
    if not text.strip():
        raise ReaderError(f"{url}: the page has no text")
    default_name = url.rstrip("/").rsplit("/", 1)[-1] or url
    return chunk_documents(text, name=name or default_name, source=url, metadata=metadata, chunking=chunking)


def read_url(url: str, *, name: str | None, metadata: dict[str, Any], chunking: ChunkingStrategy, timeout: float = 30.0) -> list[Document]:
    import httpx2

    try:
        response = httpx2.get(url, follow_redirects=True, timeout=timeout)
    except httpx2.HTTPError as exc:
        raise ReaderError(f"{url}: could not be fetched ({type(exc).__name__}: {exc})") from exc
    return _from_response(url, response.status_code, response.headers.get("content-type", ""), response.text,
                          name=name, metadata=metadata, chunking=chunking)


async def aread_url(url: str, client: Any, *, name: str | None, metadata: dict[str, Any], chunking: ChunkingStrategy) -> list[Document]:
    import httpx2

    try:
        response = await client.get(url, follow_redirects=True)
    except httpx2.HTTPError as exc:
        raise ReaderError(f"{url}: could not be fetched ({type(exc).__name__}: {exc})") from exc
    return _from_response(url, response.status_code, response.headers.get("content-type", ""), response.text,
                          name=name, metadata=metadata, chunking=chunking)
