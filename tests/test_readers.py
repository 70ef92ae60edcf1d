from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_core import Knowledge
from rag_core.knowledge.chunking import ChunkingStrategy
from rag_core.knowledge.readers import ReaderError, html_to_text
from tests.documents import minimal_pdf, serve

CASSETTES = Path(__file__).resolve().parents[1] / "cassettes"




def test_pdf_chunks_keep_name_source_page_and_chunk(tmp_path):
    path = tmp_path / "ThaiRecipes.pdf"
    path.write_bytes(minimal_pdf(["Pad thai uses tamarind.", "Tom kha uses galangal."]))
    docs = Knowledge().read(path=path)
    assert [d.content for d in docs] == ["Pad thai uses tamarind.", "Tom kha uses galangal."]
    assert [d.meta_data for d in docs] == [
        {"source": "ThaiRecipes.pdf", "page": 1, "chunk": 0},
        {"source": "ThaiRecipes.pdf", "page": 2, "chunk": 1},
    ]
    assert {d.name for d in docs} == {"ThaiRecipes"}


def test_a_corrupt_pdf_is_a_clear_error(tmp_path):
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.4\nthis is not really a pdf")
    with pytest.raises(ReaderError, match=r"broken.pdf: (not a readable PDF|the PDF has no extractable text)"):
        Knowledge().insert(path=path)


def test_text_and_markdown_files(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("# Curry\n\nGreen curry needs basil.\n\nRed curry needs dried chillies.\n")
    docs = Knowledge(chunking=ChunkingStrategy(chunk_size=40, overlap=0)).read(path=path, metadata={"cuisine": "thai"})
    assert [d.content for d in docs] == ["# Curry\n\nGreen curry needs basil.", "Red curry needs dried chillies."]
    assert docs[1].meta_data == {"cuisine": "thai", "source": "notes.md", "chunk": 1}
    with pytest.raises(ReaderError, match="no such file"):
        Knowledge().read(path=tmp_path / "missing.txt")
    (tmp_path / "empty.txt").write_text("  \n")
    with pytest.raises(ReaderError, match="empty.txt: the file is empty"):
        Knowledge().read(path=tmp_path / "empty.txt")


def test_read_needs_exactly_one_source():
    with pytest.raises(ValueError, match="exactly one"):
        Knowledge().read("text", url="http://x")


# ---------------------------------------------------------------- URLs
def test_a_url_is_replayed_from_its_cassette():
    import vcr

    with vcr.VCR(record_mode="none").use_cassette(str(CASSETTES / "readers" / "recipe_page.yaml")):
        docs = Knowledge().read(url="http://127.0.0.1:8765/recipes/som-tam.html")
    assert docs[0].name == "som-tam.html"
    assert docs[0].meta_data == {"source": "http://127.0.0.1:8765/recipes/som-tam.html", "chunk": 0}
    assert docs[0].content.startswith("Som Tam\n\nPound garlic and chillies")
    assert "<" not in docs[0].content and "console.log" not in docs[0].content


def test_failing_urls_are_clear_errors():
    with serve({}) as site:  # every path answers 404
        url = f"{site}/missing"
        with pytest.raises(ReaderError, match="answered HTTP 404"):
            Knowledge().insert(url=url)
    with pytest.raises(ReaderError, match="could not be fetched"):
        Knowledge().insert(url=url)


def test_html_to_text_drops_markup_and_scripts():
    text = html_to_text("<html><head><title>x</title></head><body><h1>A &amp; B</h1><script>bad()</script><p>one <b>two</b></p></body></html>")
    assert text == "A & B\n\none two"


# ---------------------------------------------------------------- chunking
paragraph = st.lists(st.text("abcdefgh ", min_size=1, max_size=12).map(str.strip).filter(bool), min_size=1, max_size=30).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(st.lists(paragraph, min_size=1, max_size=8), st.integers(20, 200), st.data())
def test_chunks_fit_keep_every_word_in_order_and_overlap(paragraphs, size, data):
    overlap = data.draw(st.integers(0, size // 2))
    text = "\n\n".join(paragraphs)
    chunks = ChunkingStrategy(chunk_size=size, overlap=overlap).chunk(text)
    assert all(0 < len(c) <= size for c in chunks)
    if overlap == 0:  # without overlap, the chunks are exactly the text's words, in order
        assert " ".join(" ".join(chunks).split()) == " ".join(text.split())
    else:
        words = text.split()
        joined = " ".join(chunks).split()
        position = 0
        for word in words:  # every word survives, in order (overlap only repeats some)
            position = joined.index(word, position) + 1


def test_paragraphs_are_kept_whole_when_they_fit():
    chunks = ChunkingStrategy(chunk_size=40, overlap=0).chunk("First para.\n\nSecond para.\n\nA third, longer paragraph here.")
    assert chunks == ["First para.\n\nSecond para.", "A third, longer paragraph here."]


def test_bad_chunking_settings_are_refused():
    with pytest.raises(ValueError, match="overlap"):
        ChunkingStrategy(chunk_size=10, overlap=10)


def test_ainsert_many_fetches_urls_concurrently_and_inserts_the_rest(site):
    import asyncio

    knowledge = Knowledge()
    added = asyncio.run(knowledge.ainsert_many([{"text": "Green curry uses basil.", "name": "curry"}],
                                               urls=[f"{site}/a", f"{site}/b"]))
    assert added == 3
    assert knowledge.search("galangal", max_results=1)[0].meta_data["source"] == f"{site}/b"


# ---------------------------------------------------------------- what a URL serves decides how it is read
PAGES = {
    "/a": ("text/html", b"<p>Pad thai uses tamarind.</p>"),
    "/b": ("text/html", b"<p>Tom kha uses galangal.</p>"),
    "/ThaiRecipes.pdf": ("application/pdf", minimal_pdf(["Pad thai uses tamarind.", "Tom kha uses galangal."])),
    "/download/ThaiRecipes.pdf": ("application/octet-stream", minimal_pdf(["Pad thai uses tamarind."])),
    "/download/file": ("application/octet-stream", minimal_pdf(["Green curry uses basil."])),
    "/page": ("text/html; charset=utf-8", b"<html><head><style>p{}</style></head><body><h1>Pad thai</h1>"
              b"<script>track()</script><p>Soak the <b>noodles</b>.</p></body></html>"),
    "/notes.md": ("text/markdown; charset=iso-8859-1", "# Café\n\nCrème brûlée needs a torch.".encode("latin-1")),
    "/undeclared.txt": ("text/plain", "Jalapeño salsa, café style.".encode("latin-1")),
    "/picture": ("image/png", b"\x89PNG\r\n\x1a\n0000"),
    "/odd": ("text/plain; charset=klingon", b"hello"),
}


@pytest.fixture(scope="module")
def site():
    with serve(PAGES) as url:
        yield url


@pytest.mark.parametrize(("path", "texts", "page"), [
    ("/ThaiRecipes.pdf", ["Pad thai uses tamarind.", "Tom kha uses galangal."], 1),
    ("/download/ThaiRecipes.pdf", ["Pad thai uses tamarind."], 1),  # generic type: the extension decides
    ("/download/file", ["Green curry uses basil."], 1),  # no extension: the bytes' magic decides
], ids=["content-type", "extension", "magic"])
def test_a_url_serving_a_pdf_is_read_as_a_pdf(site, path, texts, page):
    docs = Knowledge().read(url=site + path)
    assert [d.content for d in docs] == texts
    assert docs[0].meta_data["page"] == page and docs[0].meta_data["source"] == site + path
    assert not any("%PDF" in d.content for d in docs)


def test_html_becomes_readable_text(site):
    [doc] = Knowledge().read(url=site + "/page")
    assert doc.content == "Pad thai\n\nSoak the noodles."


@pytest.mark.parametrize(("path", "text"), [
    ("/notes.md", "# Café\n\nCrème brûlée needs a torch."),  # the declared charset
    ("/undeclared.txt", "Jalapeño salsa, café style."),  # none declared, not UTF-8: guessed
])
def test_text_is_decoded_with_the_charset_the_server_declares(site, path, text):
    assert "\n\n".join(d.content for d in Knowledge().read(url=site + path)) == text


@pytest.mark.parametrize(("path", "message"), [
    ("/picture", "cannot read content of type 'image/png'"),
    ("/odd", "the server declares an unknown charset 'klingon'"),
])
def test_content_rag_core_cannot_read_is_a_clear_error_naming_the_url(site, path, message):
    with pytest.raises(ReaderError, match=re.escape(f"{site}{path}: {message}")):
        Knowledge().read(url=site + path)
