"""What a retriever target is given: the corpus as the dataset holds it (every document, empty
ones too, in the dataset's order, each with the dataset's fields by key and by attribute), so a
retriever written over BEIR's records runs unchanged."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

pytest_plugins = ["pytester"]

import bm25s  # noqa: E402,F401  (imported before pytester's in-process runs; see test_harness.py)
import numpy  # noqa: E402,F401

EVALS = "def test_retrieval(retrieval_target, retrieval_check):\n    retrieval_check(retrieval_target)\n"

# a BEIR folder as BEIR publishes one: titles beside texts, metadata on some lines, a document with
# neither title nor text that is judged relevant (Cranfield has two), one with a title alone
CORPUS = [
    {"_id": "d1", "title": "Pad thai", "text": "rice noodles with tamarind and peanuts",
     "metadata": {"url": "https://example.org/pad-thai"}},
    {"_id": "d2", "title": "", "text": ""},
    {"_id": "d3", "title": "Green curry", "text": ""},
    {"_id": "d4", "title": "Tom yum", "text": "lemongrass soup with prawns"},
    {"_id": "d5", "text": "mango sticky rice with coconut cream"},
    {"_id": "d6", "title": "Massaman curry", "text": "beef and peanuts with coconut milk"},
]
QUERIES = [{"_id": "q1", "text": "pad thai tamarind"}, {"_id": "q2", "text": "green curry coconut"},
           {"_id": "q3", "text": "lemongrass prawns soup"}, {"_id": "q9", "text": "not judged in this split"}]
QRELS = {"q1": {"d1": 2, "d2": 1}, "q2": {"d3": 1, "d6": 2}, "q3": {"d4": 1}}

# a retriever written over BEIR's records, as BEIR's and ir_datasets' examples write one: by key,
# title and text as fields of their own (a title word counts twice); it keeps what it was given
TITLE_AND_TEXT = '''
import json
from collections import Counter


class TitleAndText:
    def index(self, documents):
        self.order = [doc["id"] for doc in documents]
        self.fields = {doc["id"]: (Counter(doc["title"].lower().split()), Counter(doc["text"].lower().split()))
                       for doc in documents}
        self.urls = {doc["id"]: doc["metadata"]["url"] for doc in documents if "metadata" in doc}
        with open("indexed.json", "w") as given:
            json.dump(documents, given)

    def search(self, query, k):
        def score(doc_id):
            title, text = self.fields[doc_id]
            return sum(2 * title[word] + text[word] for word in query.lower().split())
        ranked = sorted(self.order, key=lambda doc_id: -score(doc_id))  # ties in corpus order
        return [(doc_id, float(score(doc_id))) for doc_id in ranked[:k]]


def retriever():
    return TitleAndText()
'''

@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    for variable in ("CI", "RAG_CORE_REQUIRE_ALL_CASES"):
        monkeypatch.delenv(variable, raising=False)
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    beir = pytester.path / "data" / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text("".join(json.dumps(line) + "\n" for line in CORPUS))
    (beir / "queries.jsonl").write_text("".join(json.dumps(line) + "\n" for line in QUERIES))
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{query}\t{doc}\t{grade}\n" for query, judged in QRELS.items() for doc, grade in judged.items()))
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "test_retrieval.py").write_text(EVALS)
    (pytester.path / "title_and_text.py").write_text(TITLE_AND_TEXT)
    (pytester.path / "fixtures" / "retrieval").mkdir(parents=True)
    pytester.syspathinsert()
    return pytester


def write_suite(project: pytest.Pytester, *retrievers: str, depth: int = 6, extra: str = "") -> None:
    (project.path / "fixtures" / "retrieval" / "beir.yaml").write_text(
        f"name: beir\ndataset: {{beir: data/beir}}\ndepth: {depth}\nmetrics: [ndcg@{depth}, recall@{depth}, "
        f"mrr@{depth}]\nbaseline: fixtures/retrieval/baselines/beir\nretrievers:\n"
        + "".join(f"  - {r}\n" for r in retrievers) + extra)


def output(result: pytest.RunResult) -> str:
    return result.stdout.str() + result.stderr.str()


def assert_clear_failure(result: pytest.RunResult, message: str) -> None:
    text = output(result)
    assert message in text, text
    assert "Traceback" not in text and "INTERNALERROR" not in text, text


# ---------------------------------------------------------------- the corpus as the dataset holds it


def test_a_retriever_written_over_beir_records_runs_unchanged_on_every_document_and_pytrec_eval_agrees(project):
    """It failed with `TypeError: 'CorpusRecord' object is not subscriptable`; the title was joined
    into the text, and the document with neither was left out. Now it is given every document as
    the file holds it, in the file's order, and its metrics are trec_eval's on its rankings."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    write_suite(project, "{name: by_key, target: 'title_and_text:retriever'}")
    result = project.runpytest("evals", "--record-mode=once", "--report-dir=out")
    result.assert_outcomes(passed=1)

    given = json.loads((project.path / "indexed.json").read_text())
    assert given == [{"id": line["_id"], "title": line.get("title", ""), "text": line["text"],
                      **({"metadata": line["metadata"]} if "metadata" in line else {})} for line in CORPUS]

    report = json.loads((project.path / "out" / "retrieval.json").read_text())["results"][0]
    rankings = report["rankings"]
    assert rankings["q1"][:2] == ["d1", "d2"]  # the empty document is ranked (last among the ties), as judged
    run = {query: {doc: float(len(ranking) - rank) for rank, doc in enumerate(ranking)}
           for query, ranking in rankings.items()}
    measured = pytrec_eval.RelevanceEvaluator(QRELS, {"ndcg_cut.6", "recall.6", "recip_rank"}).evaluate(run)
    for metric, measure in (("ndcg@6", "ndcg_cut_6"), ("recall@6", "recall_6"), ("mrr@6", "recip_rank")):
        assert report["per_query"][metric].keys() == QRELS.keys()
        for query, value in report["per_query"][metric].items():
            assert abs(measured[query][measure] - value) < 1e-9, (metric, query)
    assert report["per_query"]["recall@6"]["q1"] == 1.0  # the empty relevant document was retrievable
    assert report["empty_documents"] == 0  # given to the retriever: none kept out of its index


def test_a_corpus_record_reads_as_a_mapping_and_by_attribute_and_title_and_text_is_what_the_stores_index(tmp_path):
    from rag_core.evals.retrieval.datasets import iter_corpus, iter_records, load_beir

    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(line) + "\n" for line in CORPUS))
    (folder / "queries.jsonl").write_text("".join(json.dumps(line) + "\n" for line in QUERIES))
    (folder / "qrels" / "test.tsv").write_text("q1\td1\t1\n")
    records = list(load_beir(folder, texts=False).records())
    assert [record.id for record in records] == [line["_id"] for line in CORPUS]  # all of them, in file order
    first = records[0]
    assert first["title"] == first.title == first.get("title") == "Pad thai"
    assert first["text"] == first.text == "rice noodles with tamarind and peanuts"  # the text alone
    assert first.metadata == first["metadata"] == {"url": "https://example.org/pad-thai"}
    assert list(first) == list(first.keys()) == ["id", "title", "text", "metadata"] and "title" in first
    assert dict(first.items())["id"] == "d1" and len(first) == 4
    assert records[4].title == "" and records[4].get("metadata") is None and "metadata" not in records[4]
    assert json.loads(json.dumps(records)) == [dict(record) for record in records]
    for again in (pickle.loads(pickle.dumps(first)), copy.copy(first), copy.deepcopy(first)):
        assert again == first and type(again) is type(first) and again.title == "Pad thai"
    with pytest.raises(AttributeError, match="no field 'page_content'"):
        first.page_content  # noqa: B018
    assert getattr(first, "page_content", None) is None
    # the built-in stores' text, the one the suite's embedding cache holds vectors for
    stores = dict(iter_corpus(folder / "corpus.jsonl"))
    assert [record.title_and_text for record in records] == [stores[record.id] for record in records]
    assert list(iter_records(folder / "corpus.jsonl")) == records


def test_the_record_type_keeps_its_old_name_and_construction():
    from rag_core.evals.retrieval.target import CorpusRecord

    record = CorpusRecord("d1", "noodles")
    assert (record.id, record.text, record.title, record.title_and_text) == ("d1", "noodles", "", "noodles")
    assert CorpusRecord(id="d2", text="soup", title="Tom yum").title_and_text == "Tom yum soup"
