"""Readers: turn a text, a file (text, markdown, PDF) or a URL into chunked Documents.

Every chunk keeps where it came from: ``source`` (file name or URL), ``chunk`` (its
index in the source) and, for PDFs, ``page``.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rag_core._optional import http_library, require
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


def read_pdf(path: Path | str, *, name: str, metadata: dict[str, Any], chunking: ChunkingStrategy,
             data: bytes | None = None) -> list[Document]:
    """A PDF file, or (``data`` given) PDF bytes fetched from ``path``, a URL."""
    pypdf = require("pypdf", extra="pdf", feature="reading PDF files")
    source = path.name if isinstance(path, Path) else path
    try:
        reader = pypdf.PdfReader(io.BytesIO(data) if data is not None else str(path))
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
                chunk_documents(text, name=name, source=source, metadata=metadata, chunking=chunking,
                                extra={"page": number}, first_chunk=len(docs))
            )
    if not docs:
        raise ReaderError(f"{path}: the PDF has no extractable text ({len(pages)} page(s))")
    return docs


def html_to_text(markup: str | bytes, encoding: str | None = None) -> str:
    """The readable text of an HTML page: scripts, styles and other non-text removed, one blank
    line between blocks. Bytes are decoded with ``encoding``, else as the page itself declares."""
    BeautifulSoup = require("bs4", extra="agent", feature="reading HTML", package="beautifulsoup4").BeautifulSoup

    soup = BeautifulSoup(markup, "html.parser", from_encoding=encoding if isinstance(markup, bytes) else None)
    for tag in soup(["script", "style", "noscript", "template", "head", "svg", "iframe", "object"]):
        tag.decompose()
    for tag in soup.find_all(_BLOCKS):  # blocks become paragraphs; inline markup joins its text
        tag.insert_before("\n\n")
        tag.insert_after("\n\n")
    for tag in soup.find_all("br"):
        tag.replace_with("\n")
    text = re.sub(r"[ \t\r\f\v]+", " ", soup.get_text())
    text = re.sub(r" *\n *", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


_BLOCKS = ["p", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table", "section", "article",
           "header", "footer", "nav", "aside", "main", "pre", "blockquote", "dl", "dt", "dd", "figure", "form"]


# how a response is read, by media type; generic types fall through to the extension, then the bytes
_BY_MEDIA_TYPE = {"application/pdf": "pdf", "application/x-pdf": "pdf", "text/html": "html",
                  "application/xhtml+xml": "html", "text/markdown": "text", "text/x-markdown": "text",
                  "text/plain": "text"}
_GENERIC = {"", "application/octet-stream", "binary/octet-stream", "application/download", "application/force-download"}
_BY_EXTENSION = {".pdf": "pdf", ".html": "html", ".htm": "html", ".md": "text", ".markdown": "text", ".txt": "text",
                 ".text": "text", ".rst": "text"}


def _kind(url: str, media_type: str, content: bytes) -> str | None:
    """pdf | html | text, from the Content-Type, else the URL's extension, else the bytes' magic."""
    if media_type in _BY_MEDIA_TYPE:
        return _BY_MEDIA_TYPE[media_type]
    if media_type.startswith("text/"):
        return "text"
    if media_type not in _GENERIC:
        return None  # a type the server is explicit about and we do not read (an image, a zip, ...)
    path = urlsplit(url).path.lower()
    extension = path[path.rfind("."):] if "." in path.rsplit("/", 1)[-1] else ""
    if extension in _BY_EXTENSION:
        return _BY_EXTENSION[extension]
    head = content[:1024].lstrip().lower()
    if head.startswith(b"%pdf-"):
        return "pdf"
    if head.startswith((b"<!doctype html", b"<html")):
        return "html"
    return None


def _decode(url: str, content: bytes, charset: str | None) -> str:
    """Text in the charset the server declares; without one, UTF-8, else the best guess."""
    if charset:
        try:
            return content.decode(charset)
        except LookupError:
            raise ReaderError(f"{url}: the server declares an unknown charset {charset!r}") from None
        except UnicodeDecodeError as exc:
            raise ReaderError(f"{url}: the text is not valid {charset} as the server declares ({exc.reason} at "
                              f"byte {exc.start})") from None
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        UnicodeDammit = require("bs4", extra="agent", feature="reading text of an unknown encoding",
                                package="beautifulsoup4").UnicodeDammit

        guessed = UnicodeDammit(content, ["utf-8", "windows-1252", "iso-8859-1"]).unicode_markup
        if guessed is None:
            raise ReaderError(f"{url}: the text's encoding cannot be determined; the server declares none") from None
        return guessed


def _from_response(url: str, status: int, content_type: str, content: bytes, *, name: str | None,
                   metadata: dict[str, Any], chunking: ChunkingStrategy) -> list[Document]:
    if status >= 400:
        raise ReaderError(f"{url}: the server answered HTTP {status}")
    media_type, _, parameters = content_type.partition(";")
    media_type = media_type.strip().lower()
    charset = next((p.split("=", 1)[1].strip().strip('"\'') for p in parameters.split(";")
                    if p.strip().lower().startswith("charset=")), None)
    kind = _kind(url, media_type, content)
    default_name = urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1] or url
    name = name or (default_name.rsplit(".", 1)[0] if kind == "pdf" and "." in default_name else default_name)
    if kind is None:
        raise ReaderError(f"{url}: cannot read content of type {content_type or '(none declared)'!r}: rag-core reads "
                          "PDF, HTML, markdown and plain text")
    if kind == "pdf":
        return read_pdf(url, name=name, metadata=metadata, chunking=chunking, data=content)
    text = html_to_text(content, charset) if kind == "html" else _decode(url, content, charset)
    if not text.strip():
        raise ReaderError(f"{url}: the page has no text")
    return chunk_documents(text, name=name, source=url, metadata=metadata, chunking=chunking)


def read_url(url: str, *, name: str | None, metadata: dict[str, Any], chunking: ChunkingStrategy, timeout: float = 30.0) -> list[Document]:
    httpx = http_library("reading documents by URL")

    try:
        response = httpx.get(url, follow_redirects=True, timeout=timeout)
    except httpx.HTTPError as exc:
        raise ReaderError(f"{url}: could not be fetched ({type(exc).__name__}: {exc})") from exc
    return _from_response(url, response.status_code, response.headers.get("content-type", ""), response.content,
                          name=name, metadata=metadata, chunking=chunking)


async def aread_url(url: str, client: Any, *, name: str | None, metadata: dict[str, Any], chunking: ChunkingStrategy) -> list[Document]:
    httpx = http_library("reading documents by URL")

    try:
        response = await client.get(url, follow_redirects=True)
    except httpx.HTTPError as exc:
        raise ReaderError(f"{url}: could not be fetched ({type(exc).__name__}: {exc})") from exc
    return _from_response(url, response.status_code, response.headers.get("content-type", ""), response.content,
                          name=name, metadata=metadata, chunking=chunking)
