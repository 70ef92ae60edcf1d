"""What a retriever target is given, and how what it answers is read.

Given: the corpus as the dataset holds it (every document, empty ones too, in the dataset's
order, each with the dataset's fields by key and by attribute), so a retriever written over
BEIR's records runs unchanged. Read: rankings as the retriever meant them (at most k of a lazy
one, never an unordered one), and ids or queries that match nothing in the dataset fail the
suite instead of scoring 0 and becoming a baseline; run files are read as trec_eval reads them
(a byte order mark, a key a result JSON names twice)."""

from __future__ import annotations

import codecs
import copy
import itertools
import json
import pickle

import pytest

pytest_plugins = ["pytester"]

import bm25s  # noqa: E402,F401  (imported before pytester's in-process runs; see test_harness.py)
import numpy  # noqa: E402,F401

# imported before pytester's in-process runs too: a record pickled after one is of the class loaded here
from rag_core.evals.retrieval import corpus_record, datasets  # noqa: E402,F401

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

# retrievers whose ids are not the corpus's: chunk ids where the suite scores document ids (the
# id_field mistake), and one id outside the corpus in every ranking
MISMATCHED = '''
def chunks():
    def search(query, k):
        return [{"id": f"chunk-{n}", "doc_id": f"d{n}"} for n in range(1, k + 1)]
    return search


def one_extra():
    def search(query, k):
        return ["d1", "d3", "not-in-the-corpus"][:k]
    return search
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
    (pytester.path / "mismatched.py").write_text(MISMATCHED)
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


BASELINES = "fixtures/retrieval/baselines/beir"
RECORDED = "cassettes/retrieval/beir"


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
    from rag_core.evals.retrieval.retriever_targets import CorpusRecord

    record = CorpusRecord("d1", "noodles")
    assert (record.id, record.text, record.title, record.title_and_text) == ("d1", "noodles", "", "noodles")
    assert CorpusRecord(id="d2", text="soup", title="Tom yum").title_and_text == "Tom yum soup"


# ---------------------------------------------------------------- rankings as the retriever meant them


def loaded(search):
    from rag_core.evals.retrieval.retriever_targets import LoadedTarget

    return LoadedTarget("suite s, retriever r", None, search, None, {})


def test_a_lazy_ranking_is_read_no_further_than_k():
    """A generator was read to its end before the cut at k (an endless one hung, its memory growing)."""
    pulled, closed = [], []

    def search(query, k):
        try:
            for number in itertools.count(1):
                pulled.append(number)
                if number > 10_000:  # what the old code did, stopped here instead of running forever
                    raise RuntimeError("read past k")
                yield f"d{number}"
        finally:
            closed.append(True)

    assert loaded(search).ranking("q1", "text", 5) == ["d1", "d2", "d3", "d4", "d5"]
    assert pulled == [1, 2, 3, 4, 5] and closed == [True]


def test_a_lazy_async_ranking_is_read_no_further_than_k():
    pulled = []

    async def search(query, k):
        for number in itertools.count(1):
            pulled.append(number)
            if number > 10_000:
                raise RuntimeError("read past k")
            yield (f"d{number}", 1.0 / number)

    assert loaded(search).ranking("q1", "text", 3) == ["d1", "d2", "d3"]
    assert pulled == [1, 2, 3]


def test_a_program_failing_while_its_lazy_ranking_is_read_is_one_clear_error():
    def search(query, k):
        yield "d1"
        raise KeyError("the index has no shard 3")

    from rag_core.evals.retrieval.retriever_targets import RetrieverTargetError

    with pytest.raises(RetrieverTargetError, match=r"search\(\) of query q1 \('text'\) raised KeyError: 'the index has "
                                                   r"no shard 3' \(at .*test_retriever_inputs.py:\d+\)"):
        loaded(search).ranking("q1", "text", 5)


@pytest.mark.parametrize("answer, kind", [
    ({"d1", "d2", "d3"}, "set"),
    (frozenset({"d1", "d2"}), "frozenset"),
    (dict.fromkeys(["d1", "d2"]).keys(), "dict_keys"),
    ({"d1": 0.5, "d2": 0.25}.items(), "dict_items"),
])
def test_an_unordered_collection_is_refused_naming_its_type(answer, kind):
    """A set was read as a ranking: its order, and so nDCG, changed with PYTHONHASHSEED."""
    from rag_core.evals.retrieval.retriever_targets import RetrieverTargetError

    with pytest.raises(RetrieverTargetError) as raised:
        loaded(lambda query, k: answer).ranking("q1", "text", 5)
    assert str(raised.value).startswith(f"suite s, retriever r: search() of query q1 ('text') returned a {kind}, "
                                        "which has no order")


@pytest.mark.parametrize("answer, message", [
    ([None], "returned, at rank 1, a NoneType: search returns document ids"),
    (["d1", True], "returned, at rank 2, a bool: search returns document ids"),
    ([{"id": "d1"}], "returned, at rank 1, a dict: search returns document ids"),
    ("d1 d2", "returned a str: return the ranked documents"),
    (["d1", "d2", "d1"], "returned document 'd1' twice (ranks 1 and 3)"),
])
def test_what_held_before_still_holds(answer, message):
    from rag_core.evals.retrieval.retriever_targets import RetrieverTargetError

    with pytest.raises(RetrieverTargetError, match="^suite s, retriever r: search") as raised:
        loaded(lambda query, k: answer).ranking("q1", "text", 5)
    assert message in str(raised.value)


def test_ranked_ids_of_no_corpus_document_fail_the_suite_and_write_no_baseline_nor_recording(project):
    """The id_field mistake scored 0 with the gate "pass", and --update-baselines wrote the zeros."""
    write_suite(project, "{name: chunks, target: 'mismatched:chunks', id_field: id}")
    result = project.runpytest("evals", "--record-mode=once", "--update-baselines")
    result.assert_outcomes(failed=1)
    assert_clear_failure(result, "suite beir, retriever chunks: 18 of 18 (100.0%) of the document ids search() "
                                 "returned match no document of the corpus (first: 'chunk-1' (query q1, rank 1))")
    assert "allow_unmatched: {documents: 1}" in output(result)
    assert not (project.path / BASELINES).exists() and not (project.path / RECORDED / "chunks.rankings.json").exists()
    write_suite(project, "{name: chunks, target: 'mismatched:chunks', id_field: doc_id}")  # the fix
    project.runpytest("evals", "--record-mode=once", "--update-baselines").assert_outcomes(passed=1)
    assert (project.path / BASELINES / "chunks.json").is_file()


def test_a_known_share_of_ids_outside_the_corpus_is_allowed_by_the_suite(project):
    write_suite(project, "{name: extra, target: 'mismatched:one_extra'}", depth=3)
    refused = project.runpytest("evals", "--record-mode=once")
    refused.assert_outcomes(failed=1)
    assert_clear_failure(refused, "3 of 9 (33.3%) of the document ids search() returned match no document of the "
                                  "corpus (first: 'not-in-the-corpus' (query q1, rank 3))")
    assert "allow_unmatched: {documents: 0.34}" in output(refused)
    write_suite(project, "{name: extra, target: 'mismatched:one_extra'}", depth=3,
                extra="allow_unmatched: {documents: 0.34}\n")
    project.runpytest("evals", "--record-mode=once").assert_outcomes(passed=1)
    write_suite(project, "{name: extra, target: 'mismatched:one_extra'}", depth=3,
                extra="allow_unmatched: {documents: 0.3}\n")
    project.runpytest("evals").assert_outcomes(failed=1)


def test_a_run_file_of_other_query_ids_fails_the_suite_and_writes_no_baseline(project):
    runs = project.path / "runs"
    runs.mkdir()
    (runs / "upper.trec").write_text("".join(f"Q{n} Q0 d{n} 1 1.0 theirs\n" for n in (1, 2, 3)))
    write_suite(project, "{name: theirs, run: runs/upper.trec}")
    result = project.runpytest("evals", "--update-baselines")
    result.assert_outcomes(failed=1)
    assert_clear_failure(result, "suite beir, retriever theirs: runs/upper.trec: 3 of 3 (100.0%) of its queries match "
                                 "no judged query (first: 'Q1')")
    assert not (project.path / BASELINES).exists()


def test_a_run_file_of_other_document_ids_fails_and_a_run_over_unjudged_queries_too_is_allowed(project):
    runs = project.path / "runs"
    runs.mkdir()
    (runs / "prefixed.json").write_text(json.dumps({q: {f"doc-{d}": float(grade) for d, grade in judged.items()}
                                                          for q, judged in QRELS.items()}))
    (runs / "all.trec").write_text("q1 Q0 d1 1 2.0 all\nq2 Q0 d6 1 2.0 all\nq3 Q0 d4 1 2.0 all\nq9 Q0 d5 1 1.0 all\n")
    write_suite(project, "{name: prefixed, run: runs/prefixed.json}", "{name: all, run: runs/all.trec}")
    result = project.runpytest("evals")
    result.assert_outcomes(failed=2)
    assert_clear_failure(result, "runs/prefixed.json: 5 of 5 (100.0%) of the document ids the run file ranks match no "
                                 "document of the corpus (first: 'doc-d1' (query q1, rank 1))")
    assert_clear_failure(result, "runs/all.trec: 1 of 4 (25.0%) of its queries match no judged query (first: 'q9')")
    assert "allow_unmatched: {queries: 0.25}" in output(result)
    write_suite(project, "{name: all, run: runs/all.trec}", extra="allow_unmatched: {queries: 0.25}\n")
    project.runpytest("evals").assert_outcomes(passed=1)


# ---------------------------------------------------------------- run files as trec_eval reads them


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-32"])
@pytest.mark.parametrize("content", ["q1 Q0 d1 1 2.0 t\nq1 Q0 d4 2 1.0 t\nq2 Q0 d6 1 1.0 t\n",
                                     '{"q1": {"d1": 2.0, "d4": 1.0}, "q2": {"d6": 1.0}}'])
def test_a_run_file_with_a_byte_order_mark_is_read_in_the_encoding_it_marks(tmp_path, encoding, content):
    """With a UTF-8 mark the first query's id was "\\ufeffq1", a query nobody judged: q1 scored 0."""
    from rag_core.evals.retrieval.run_files import read_run

    path = tmp_path / "run.trec"
    path.write_bytes(content.encode(encoding))
    assert path.read_bytes().startswith((codecs.BOM_UTF8, codecs.BOM_UTF16, codecs.BOM_UTF32))
    assert read_run(path) == {"q1": ["d1", "d4"], "q2": ["d6"]}


def test_a_file_marked_utf16_that_is_not_is_one_clear_error(tmp_path):
    from rag_core.evals.retrieval.run_files import RunFileError, read_run

    path = tmp_path / "run.trec"
    path.write_bytes(codecs.BOM_UTF16_LE + b"q")  # an odd number of bytes: no UTF-16 text
    with pytest.raises(RunFileError, match="run.trec: starts with a UTF-16 byte order mark, but is not UTF-16 text"):
        read_run(path)

