"""Texts in a retrieval replay are held once, as UTF-8: the session reads a suite's dataset without
its texts (each store reads them from the corpus file as it indexes), and the memory store holds
each text as UTF-8, decoded when a result is made or the BM25 index is built. Rankings and
returned documents are what they were."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_core import Document
from rag_core.evals.retrieval.datasets import load_beir
from rag_core.evals.retrieval.evaluate import build_embedder, load_dataset, run_retriever
from rag_core.evals.retrieval.suite import load_suite
from rag_core.vectordb import InMemoryVectorDb

ROOT = Path(__file__).resolve().parents[1]


HELD_PER_UTF8_BYTE = """
import gc, tracemalloc
from rag_core import Document
from rag_core.vectordb import InMemoryVectorDb

warm = InMemoryVectorDb()  # bm25s and the stemmer imported before measuring
warm.insert([Document(content="warm the tokenizer up")])
warm.search("tokenizer", 1)
store = InMemoryVectorDb()
tracemalloc.start()
before = tracemalloc.get_traced_memory()[0]
# made inside the measurement and dropped by the caller once inserted: what stays is the store's
store.insert([Document(content=f"β-catenin {n} " + "wnt signalling in colon epithelium " * 80, id=f"d{n}")
              for n in range(1000)])
assert len(store.search("catenin", 1)) == 1  # the BM25 index built, as a search builds it
gc.collect()
held = tracemalloc.get_traced_memory()[0] - before
print(held / sum(len(f"β-catenin {n} ".encode()) + 35 * 80 for n in range(1000)))
"""


def test_the_memory_store_holds_a_text_in_about_its_utf8_size():
    """Greek letters make Python hold every character of these texts in two bytes; the store held
    the string itself (and the BM25 index a reference to it): 2.2x the UTF-8 size. Measured in a
    fresh process: a session's retrieval suites index in background threads, which tracemalloc
    would count too."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", HELD_PER_UTF8_BYTE], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    ratio = float(done.stdout.strip().splitlines()[-1])
    assert ratio < 1.3, f"{ratio:.2f}x the texts' UTF-8 size"


@pytest.mark.parametrize("search_type", ["keyword", "vector", "hybrid"])
def test_returned_documents_are_the_inserted_ones(search_type):
    from tests.fakes import HashEmbedder

    texts = ["plain ascii braise", "café crème brûlée braise", "β-catenin 🧪 braise", "ﬁ ligature braise"]
    store = InMemoryVectorDb(embedder=HashEmbedder(16), search_type=search_type)
    store.insert([Document(content=t, id=f"d{n}", name=f"n{n}", meta_data={"n": n}) for n, t in enumerate(texts)])
    found = {d.id: d for d in store.search("braise", 10)}
    assert {i: (d.content, d.name, d.meta_data) for i, d in found.items()} == {
        f"d{n}": (t, f"n{n}", {"n": n}) for n, t in enumerate(texts)}
    assert store.delete(ids=["d2"]) == 1
    assert "d2" not in {d.id for d in store.search("braise", 10)}  # the index is rebuilt without it


def _beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    corpus = [{"_id": "d1", "title": "Tête", "text": "à tête"}, {"_id": "d2", "text": ""},
              {"_id": "d3", "title": "", "text": "  "}, {"_id": 4, "text": "β 🧪"}]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "tête"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return folder


def test_a_dataset_read_without_texts_reads_them_from_its_file(tmp_path):
    folder = _beir(tmp_path / "beir")
    whole, bare = load_beir(folder), load_beir(folder, texts=False)
    assert list(bare.texts()) == list(whole.texts()) == list(whole.corpus.items())
    assert bare.corpus == dict.fromkeys(whole.corpus, "")  # ids only
    assert bare.blank == whole.blank == 2


def test_memory_retrievers_rank_a_dataset_read_without_texts_as_one_read_with_them():
    suite = load_suite(ROOT / "fixtures" / "retrieval" / "kitchen.yaml")
    embedder = build_embedder(suite.embedder, ROOT, "replay")
    with_texts, without = load_dataset(suite, ROOT), load_dataset(suite, ROOT, texts=False)
    for spec in (r for r in suite.retrievers if r.store == "memory"):
        expected = run_retriever(suite, spec, with_texts, embedder, lambda: "")
        got = run_retriever(suite, spec, without, embedder, lambda: "")
        assert got.rankings == expected.rankings and got.metrics == expected.metrics
        assert got.empty_documents == expected.empty_documents


@pytest.mark.parametrize(("line", "expected"), [
    ({"_id": "d1", "title": "T", "text": "one"}, ("d1", "T one")),
    ({"_id": 7, "text": "seven"}, ("7", "seven")),  # an integer id, as YAML and some BEIR files have
    ({"_id": "d1", "title": None, "text": None, "metadata": {"x": 1}}, ("d1", "")),
    ({"_id": "d1", "title": 5, "text": "x"}, "corpus.jsonl:1: title"),
    ({"_id": "", "text": "x"}, "corpus.jsonl:1: _id"),
    ({"_id": True, "text": "x"}, "corpus.jsonl:1: _id"),
])
def test_a_corpus_line_reads_as_corpus_line_validates_it(tmp_path, line, expected):
    from rag_core.evals.retrieval.datasets import DatasetError, iter_corpus

    (tmp_path / "corpus.jsonl").write_text(json.dumps(line) + "\n")
    if isinstance(expected, tuple):
        assert list(iter_corpus(tmp_path / "corpus.jsonl")) == [expected]
    else:
        with pytest.raises(DatasetError, match=expected):
            list(iter_corpus(tmp_path / "corpus.jsonl"))
