"""Any retriever in a retrieval suite (issue 31; issue 28, item 11): retriever targets
(``target: "package.module:factory"``), their provider traffic recorded and replayed with their
rankings pinned, built-in stores' provider rerankers replayed the same way, run files, and the
one clear error each kind of mistake is."""

from __future__ import annotations

import json
import shlex
import textwrap
from pathlib import Path

import pytest
import yaml

pytest_plugins = ["pytester"]

import bm25s  # noqa: E402,F401  (imported before pytester's in-process runs; see test_harness.py)
import numpy  # noqa: E402,F401

ROOT = Path(__file__).resolve().parents[1]

EVALS = "def test_retrieval(retrieval_target, retrieval_check):\n    retrieval_check(retrieval_target)\n"
NODE = "evals/test_retrieval.py::test_retrieval"

CORPUS = "".join(json.dumps({"_id": doc_id, "text": text}) + "\n" for doc_id, text in [
    ("d1", "pad thai with tamarind and rice noodles"),
    ("d2", "green curry with basil and coconut milk"),
    ("d3", "tom yum soup with lemongrass and prawns"),
    ("d4", "mango sticky rice with coconut cream"),
    ("d5", "massaman curry with beef and peanuts"),
])
QUERIES = """corpus: corpus.jsonl
queries:
  - {id: q1, text: rice noodles with tamarind, relevant: [d1]}
  - {id: q2, text: a curry with coconut, relevant: {d2: 2, d5: 1}}
  - {id: q3, text: lemongrass soup, relevant: [d3]}
"""


def suite(*retrievers: str, extra: str = "") -> str:
    return ("name: tiny\ndataset: {judged: data/queries.yaml}\ndepth: 5\nmetrics: [ndcg@5, recall@5]\nretrievers:\n"
            + "".join(f"  - {r}\n" for r in retrievers) + extra)


# a retriever that embeds through a provider's HTTP API (httpx, as a plain SDK-less program does)
# and ranks by dot product; ORDER reverses its ranking, to make a replay stale
EMBEDDING_TARGET = '''
import os
import httpx

ORDER = 1
EXTRA_CALL = False


def _embed(texts):
    response = httpx.post("https://api.openai.com/v1/embeddings", timeout=30,
                          headers={"Authorization": f"Bearer {os.environ['OPENAI_API_KEY']}"},
                          json={"model": "text-embedding-3-small", "input": texts, "dimensions": 32})
    response.raise_for_status()
    return [item["embedding"] for item in response.json()["data"]]


class Embedded:
    def index(self, documents):
        self.ids = [d.id for d in documents]
        self.vectors = _embed([d.text for d in documents])

    def search(self, query, k):
        if EXTRA_CALL:
            _embed(["one more call"])
        [q] = _embed([query])
        scores = [sum(a * b for a, b in zip(q, v)) for v in self.vectors]
        ranked = sorted(range(len(self.ids)), key=lambda i: (-scores[i] * ORDER, self.ids[i]))
        return [{"doc": {"id": self.ids[i]}, "score": scores[i]} for i in ranked[:k]]


def retriever():
    return Embedded()
'''

# a retriever that calls no provider: word overlap, with a query-time setting a sweep can vary
LOCAL_TARGETS = '''
import asyncio


class Overlap:
    def index(self, documents):
        self.words = {d.id: set(d.text.split()) for d in documents}

    def search(self, query, k, boost_word=None, weight=0):
        def score(doc_id):
            words = self.words[doc_id]
            return len(words & set(query.split())) + (weight if boost_word in words else 0)
        return sorted(self.words, key=lambda d: (-score(d), d))[:k]


def retriever():
    return Overlap()


def as_pair():
    overlap = Overlap()
    return overlap.index, overlap.search


def async_search(context):
    assert context.suite == "tiny" and context.retriever == "overlap"
    overlap = Overlap()

    async def search(query, k):
        await asyncio.sleep(0)
        return [(doc_id, 1.0 / rank) for rank, doc_id in enumerate(overlap.search(query, k), start=1)]

    return overlap.index, search


def reversed_ids():
    overlap = Overlap()

    def search(query, k):
        return list(reversed(overlap.search(query, k)))

    return overlap.index, search
'''


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    # the tests set the strictness they check themselves (CI sets both for the whole run)
    for variable in ("CI", "RAG_CORE_REQUIRE_ALL_CASES"):
        monkeypatch.delenv(variable, raising=False)
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    data = pytester.path / "data"
    data.mkdir()
    (data / "corpus.jsonl").write_text(CORPUS)
    (data / "queries.yaml").write_text(QUERIES)
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "test_retrieval.py").write_text(EVALS)
    (pytester.path / "embedding_target.py").write_text(EMBEDDING_TARGET)
    (pytester.path / "local_targets.py").write_text(LOCAL_TARGETS)
    (pytester.path / "fixtures" / "retrieval").mkdir(parents=True)
    pytester.syspathinsert()
    return pytester


def write_suite(project: pytest.Pytester, text: str) -> None:
    (project.path / "fixtures" / "retrieval" / "tiny.yaml").write_text(text)


def output(result: pytest.RunResult) -> str:
    return result.stdout.str() + result.stderr.str()


def assert_clear_failure(result: pytest.RunResult, message: str) -> None:
    """A failure that is its message alone: no traceback, no raw exception lines."""
    text = output(result)
    assert message in text, text
    assert not any(line.startswith("E  ") for line in result.stdout.lines), text
    assert "Traceback" not in text and "INTERNALERROR" not in text, text


RECORDED = "cassettes/retrieval/tiny"


# ---------------------------------------------------------------- issue 28, item 11


PROVIDER_COUNTER = '''
import json
import os

import httpcore
import pytest


@pytest.fixture(autouse=True, scope="session")
def provider_behind_the_transport():
    """What lies behind the HTTP clients vcrpy intercepts: the provider itself. Every request that
    gets this far is counted (in PROVIDER_CALLS) and answered as Cohere's /v2/rerank would."""
    original = httpcore.ConnectionPool.handle_request

    def provider(pool, request):
        with open(os.environ["PROVIDER_CALLS"], "a") as calls:
            calls.write(f"{request.method.decode()} {request.url.target.decode()}\\n")
        body = json.loads(b"".join(request.stream))
        results = [{"index": i, "relevance_score": 1.0 / (i + 1)} for i in range(len(body["documents"]))]
        answer = json.dumps({"id": "r", "results": results, "meta": {"api_version": {"version": "2"}}}).encode()
        return httpcore.Response(200, headers=[(b"content-type", b"application/json")], content=answer)

    httpcore.ConnectionPool.handle_request = provider
    yield
    httpcore.ConnectionPool.handle_request = original
'''


def test_a_provider_reranker_in_a_suite_is_recorded_once_and_never_called_on_a_plain_run(project, monkeypatch):
    """Issue 28, item 11: a built-in store with Cohere's reranker called Cohere on every plain
    `pytest evals/`. Now its rerank calls are recorded (here against the emulator) into the
    retriever's cassette, and a plain run replays them: nothing reaches the provider."""
    calls = project.path / "provider-calls.txt"
    calls.write_text("")
    monkeypatch.setenv("PROVIDER_CALLS", str(calls))
    monkeypatch.setenv("CO_API_KEY", "a-key-the-old-code-needed-to-reach-the-provider")
    (project.path / "conftest.py").write_text(PROVIDER_COUNTER)
    write_suite(project, suite("{name: reranked, store: memory, search_type: keyword, candidate_depth: 5, "
                               "reranker: 'rag_core.reranker.cohere:CohereReranker'}"))
    project.runpytest("evals", "--record-mode=once", "--emulator").assert_outcomes(passed=1)
    assert calls.read_text() == ""  # the emulator answered in-process
    monkeypatch.delenv("CO_API_KEY")  # CI has no key
    result = project.runpytest("evals")
    result.assert_outcomes(passed=1)
    assert calls.read_text() == "", f"a plain run called the provider:\n{calls.read_text()}"
    cassette = (project.path / RECORDED / "reranked.yaml").read_text()
    assert cassette.count("uri: https://api.cohere.com/v2/rerank") == 3  # one per query


def test_a_reranker_reaching_past_the_cassette_fails_naming_the_request_and_the_command(project, monkeypatch):
    write_suite(project, suite("{name: reranked, store: memory, search_type: keyword, candidate_depth: 5, "
                               "reranker: 'rag_core.reranker.cohere:CohereReranker'}"))
    project.runpytest("evals", "--record-mode=once", "--emulator").assert_outcomes(passed=1)
    cassette = project.path / RECORDED / "reranked.yaml"
    recorded = yaml.safe_load(cassette.read_text())
    recorded["interactions"] = recorded["interactions"][:1]  # the first query's rerank call only
    cassette.write_text(yaml.safe_dump(recorded, sort_keys=False))
    result = project.runpytest("evals")
    result.assert_outcomes(failed=1)
    assert_clear_failure(result, "suite tiny, retriever reranked: sent POST /v2/rerank (request #2), which "
                                 f"{RECORDED}/reranked.yaml does not hold")
    assert_clear_failure(result, f"Record it again: pytest '{NODE}[tiny/reranked]' --record-mode=rewrite --emulator")


# ---------------------------------------------------------------- targets: record, replay, stale


def test_a_target_is_recorded_against_the_emulator_then_replays_with_no_key_and_no_network(project, monkeypatch):
    write_suite(project, suite("{name: embedded, target: 'embedding_target:retriever', id_field: doc.id}"))
    first = project.runpytest("evals")
    first.assert_outcomes(failed=1)
    command = f"pytest '{NODE}[tiny/embedded]' --record-mode=once --emulator"
    assert_clear_failure(first, f"suite tiny, retriever embedded: not recorded yet (no {RECORDED}/embedded.rankings.json)")
    assert command in output(first)
    project.runpytest(*shlex.split(command)[1:]).assert_outcomes(passed=1)  # the command the message gives, as given
    recording = json.loads((project.path / RECORDED / "embedded.rankings.json").read_text())
    assert recording["recorded_with"] == "rag-core provider emulator" and set(recording["rankings"]) == {"q1", "q2", "q3"}
    cassette = (project.path / RECORDED / "embedded.yaml").read_text()
    assert cassette.count("uri: https://api.openai.com/v1/embeddings") == 4  # the corpus, then each query
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("CI", "true")
    replay = project.runpytest("evals", "--report-dir=out")
    replay.assert_outcomes(passed=1)
    report = json.loads((project.path / "out" / "retrieval.json").read_text())["results"][0]
    assert report["rankings"] == recording["rankings"]


def test_a_replay_that_ranks_differently_fails_as_stale_naming_the_first_query(project):
    write_suite(project, suite("{name: embedded, target: 'embedding_target:retriever', id_field: doc.id}"))
    project.runpytest("evals", "--record-mode=once", "--emulator").assert_outcomes(passed=1)
    target = project.path / "embedding_target.py"
    target.write_text(target.read_text().replace("ORDER = 1", "ORDER = -1"))
    result = project.runpytest("evals")
    result.assert_outcomes(failed=1)
    assert_clear_failure(result, "suite tiny, retriever embedded: stale recording: query q1 ranks differently from "
                                 "rank 1 on: recorded [d1, ")
    rerecord = f"pytest '{NODE}[tiny/embedded]' --record-mode=rewrite --emulator"
    assert rerecord in output(result)
    project.runpytest(*shlex.split(rerecord)[1:]).assert_outcomes(passed=1)
    project.runpytest("evals").assert_outcomes(passed=1)


def test_a_target_making_other_calls_than_recorded_fails_naming_the_request(project):
    write_suite(project, suite("{name: embedded, target: 'embedding_target:retriever', id_field: doc.id}"))
    project.runpytest("evals", "--record-mode=once", "--emulator").assert_outcomes(passed=1)
    target = project.path / "embedding_target.py"
    target.write_text(target.read_text().replace("EXTRA_CALL = False", "EXTRA_CALL = True"))
    result = project.runpytest("evals")
    result.assert_outcomes(failed=1)
    # vcrpy pairs requests by method and path: the extra calls take the next queries' answers until none is left
    assert_clear_failure(result, f"sent POST /v1/embeddings (request #5), which {RECORDED}/embedded.yaml does not hold")


def test_a_changed_request_that_ranks_the_same_is_a_warning_and_fails_under_ci(project, monkeypatch):
    write_suite(project, suite("{name: embedded, target: 'embedding_target:retriever', id_field: doc.id}"))
    project.runpytest("evals", "--record-mode=once", "--emulator").assert_outcomes(passed=1)
    target = project.path / "embedding_target.py"
    target.write_text(target.read_text().replace('"dimensions": 32', '"dimensions": 32, "user": "someone"'))
    warned = project.runpytest("evals")
    warned.assert_outcomes(passed=1, warnings=1)
    assert "stale cassette cassettes/retrieval/tiny/embedded.yaml: request #1 (/v1/embeddings) differs" in output(warned)
    monkeypatch.setenv("CI", "true")
    project.runpytest("evals").assert_outcomes(failed=1)


def test_a_target_reaching_past_the_clients_the_harness_records_is_refused(project):
    (project.path / "raw_socket.py").write_text(textwrap.dedent('''
        import socket

        def retriever():
            def search(query, k):
                socket.create_connection(("203.0.113.7", 443), timeout=2)
                return []
            return search
    '''))
    write_suite(project, suite("{name: raw, target: 'raw_socket:retriever'}"))
    result = project.runpytest("evals", "--record-mode=once", "--emulator")
    result.assert_outcomes(failed=1)
    assert_clear_failure(result, "suite tiny, retriever raw: it reached for the network, which is closed while a case "
                                 "runs: name resolution of 203.0.113.7 by raw_socket")
    assert not (project.path / RECORDED / "raw.rankings.json").exists()  # nothing was recorded


# ---------------------------------------------------------------- target shapes and settings


@pytest.mark.parametrize("spec", [
    "{name: overlap, target: 'local_targets:retriever'}",
    "{name: overlap, target: 'local_targets:as_pair'}",
    "{name: overlap, target: 'local_targets:async_search'}",
])
def test_an_object_a_pair_of_callables_or_an_async_search_all_run(project, spec):
    write_suite(project, suite(spec))
    project.runpytest("evals", "--record-mode=once").assert_outcomes(passed=1)
    project.runpytest("evals").assert_outcomes(passed=1)
    assert (project.path / RECORDED / "overlap.rankings.json").exists()


def test_query_time_settings_reach_search_and_a_sweep_varies_them(project):
    write_suite(project, suite("{name: overlap, target: 'local_targets:retriever', settings: {boost_word: basil, weight: 0}}",
                               extra="sweep: {retriever: overlap, grid: {weight: [0, 5]}}\n"))
    recorded = project.runpytest("evals", "--record-mode=once")
    recorded.assert_outcomes(passed=2)
    recorded.stdout.fnmatch_lines(["sweep tiny/overlap", "weight *ndcg@5*", "0 *(pinned)",
                                   "0 *", "5 *"])
    assert {p.name for p in (project.path / RECORDED).glob("*.rankings.json")} == {
        "overlap.rankings.json", "overlap@weight=0.rankings.json", "overlap@weight=5.rankings.json"}
    boosted = json.loads((project.path / RECORDED / "overlap@weight=5.rankings.json").read_text())["rankings"]
    assert all(ranking[0] == "d2" for ranking in boosted.values())  # basil's document first, whatever the query
    project.runpytest("evals").assert_outcomes(passed=2)


def test_live_targets_skip_unless_live_and_fail_where_nothing_may_skip(project, monkeypatch):
    write_suite(project, suite("{name: database, target: 'local_targets:retriever', live: true}",
                               "{name: absent, target: 'local_targets:retriever', requires: [no_such_module_here]}"))
    skipped = project.runpytest("evals", "-rs")
    skipped.assert_outcomes(skipped=2)
    skipped.stdout.fnmatch_lines([
        "*suite tiny, retriever database requires --live: it is marked live: true in fixtures/retrieval/tiny.yaml*"
        f"where the service runs: pytest '{NODE}[[]tiny/database]' --live*",
        "*suite tiny, retriever absent requires no_such_module_here, which is not installed*"])
    project.runpytest("evals", "--live").assert_outcomes(passed=1, skipped=1)
    assert not (project.path / RECORDED / "database.rankings.json").exists()  # a live run keeps nothing
    monkeypatch.setenv("RAG_CORE_REQUIRE_ALL_CASES", "1")
    project.runpytest("evals").assert_outcomes(failed=2)


# ---------------------------------------------------------------- one clear error


BROKEN_TARGETS = '''
import sys

class Answers:
    def __init__(self, answer):
        self.answer = answer
    def search(self, query, k):
        if query == "a curry with coconut":
            return self.answer
        return ["d1"]

def raising():
    def search(query, k):
        if "curry" in query:
            raise KeyError("the index has no shard 3")
        return ["d1"]
    return search

def failing_factory():
    raise RuntimeError("cannot reach the index")

def exiting():
    def index(documents):
        sys.exit(3)
    return index, lambda query, k: []

def text():
    return Answers("d1 d2")

def objects():
    return Answers([{"title": "green curry"}])

def duplicates():
    return Answers(["d2", "d5", "d2"])

def nothing():
    return 42
'''

ERRORS = {
    "import": ("'no_module_here:retriever'", "suite tiny, retriever broken: target: cannot import "
               "'no_module_here:retriever': no module named 'no_module_here'"),
    "search-raises": ("'broken_targets:raising'", "suite tiny, retriever broken: search() of query q2 ('a curry with "
                      "coconut') raised KeyError: 'the index has no shard 3' (at broken_targets.py:"),
    "factory-raises": ("'broken_targets:failing_factory'", "suite tiny, retriever broken: the factory "
                       "broken_targets:failing_factory raised RuntimeError: cannot reach the index (at broken_targets.py:"),
    "exits": ("'broken_targets:exiting'", "suite tiny, retriever broken: index() of 5 documents called sys.exit(3)"),
    "text": ("'broken_targets:text'", "suite tiny, retriever broken: search() of query q2 ('a curry with coconut') "
             "returned a str: return the ranked documents"),
    "no-id-field": ("'broken_targets:objects'", "search() of query q2 ('a curry with coconut') returned, at rank 1, a "
                    "dict: search returns document ids, or documents whose id field the suite names"),
    "duplicates": ("'broken_targets:duplicates'", "search() of query q2 ('a curry with coconut') returned document "
                   "'d2' twice (ranks 1 and 3)"),
    "not-a-retriever": ("'broken_targets:nothing'", "the factory broken_targets:nothing returned a int: return an "
                        "object with search(query, k)"),
}


@pytest.mark.parametrize("error", list(ERRORS))
def test_what_goes_wrong_in_a_target_is_one_clear_error_naming_the_retriever_and_the_query(project, error):
    (project.path / "broken_targets.py").write_text(BROKEN_TARGETS)
    target, message = ERRORS[error]
    write_suite(project, suite("{name: bm25, store: memory, search_type: keyword}", f"{{name: broken, target: {target}}}"))
    result = project.runpytest("evals", "--record-mode=once")
    result.assert_outcomes(failed=1, passed=1)
    assert_clear_failure(result, message)


def test_an_id_field_names_where_the_id_is(project):
    (project.path / "broken_targets.py").write_text(BROKEN_TARGETS)
    write_suite(project, suite("{name: broken, target: 'broken_targets:objects', id_field: metadata.id}"))
    result = project.runpytest("evals", "--record-mode=once")
    result.assert_outcomes(failed=1)
    assert_clear_failure(result, "search() of query q1 ('rice noodles with tamarind') returned, at rank 1, a str "
                                 "without metadata.id (id_field:)")


@pytest.mark.parametrize("retriever, message", [
    ("{name: both, search_type: keyword, target: 'local_targets:retriever'}",
     "retriever both: give exactly one of search_type (a built-in store), target"),
    ("{name: stored, target: 'local_targets:retriever', store: chroma}",
     "retriever stored: store do(es) not apply to a retriever target (target:)"),
    ("{name: file, run: data/run.trec, settings: {k: 1}}", "retriever file: settings do(es) not apply to a run file"),
    ("{name: nothing}", "retriever nothing: give exactly one of search_type"),
    ("{name: spaced, target: 'not a target'}", "target: String should match pattern"),
])
def test_a_retriever_entry_of_no_one_kind_is_a_suite_error(project, retriever, message):
    write_suite(project, suite(retriever))
    result = project.runpytest("evals")
    result.assert_outcomes(failed=1)
    assert_clear_failure(result, message)


def test_a_run_file_cannot_be_swept():
    from rag_core.evals.retrieval.suite import SuiteSpec

    data = {"name": "s", "dataset": {"judged": "q.yaml"}, "metrics": ["ndcg@5"], "depth": 5,
            "retrievers": [{"name": "file", "run": "run.trec"}], "sweep": {"retriever": "file", "grid": {"k": [1, 2]}}}
    with pytest.raises(ValueError, match="file is a run file: its rankings have no settings to vary"):
        SuiteSpec.model_validate(data)


# ---------------------------------------------------------------- run files


def test_run_files_are_scored_as_trec_eval_reads_them_and_a_bad_line_is_named(project):
    (project.path / "data" / "theirs.trec").write_text(
        "q1 Q0 d1 1 9.5 theirs\nq1 Q0 d4 2 3.0 theirs\n"
        "q2 Q0 d5 1 2.0 theirs\nq2 Q0 d2 2 2.0 theirs\n"  # a tie: trec_eval puts d5 first (ids descending)
        "q9 Q0 d1 1 1.0 theirs\n")  # a query nobody judged: not scored
    (project.path / "data" / "theirs.json").write_text(json.dumps({"q1": {"d1": 9.5, "d4": 3.0}, "q2": {"d2": 2, "d5": 2}}))
    write_suite(project, suite("{name: trec, run: data/theirs.trec}", "{name: beir, run: data/theirs.json}",
                               extra="identical: [[trec, beir]]\nallow_unmatched: {queries: 0.34}\n"))
    result = project.runpytest("evals", "--report-dir=out")
    result.assert_outcomes(passed=3)
    report = {r["retriever"]: r for r in json.loads((project.path / "out" / "retrieval.json").read_text())["results"]}
    assert report["trec"]["rankings"] == {"q1": ["d1", "d4"], "q2": ["d5", "d2"]}
    assert report["trec"]["per_query"]["recall@5"] == {"q1": 1.0, "q2": 1.0, "q3": 0.0}  # q3 unanswered: 0
    (project.path / "data" / "theirs.trec").write_text("q1 Q0 d1 1 9.5 theirs\nq1 Q0 d4 2 high theirs\n")
    broken = project.runpytest("evals")
    broken.assert_outcomes(failed=2, passed=1)
    assert_clear_failure(broken, "data/theirs.trec:2: score 'high' is not a number")


RUN_ERRORS = {
    "fields": ("q1 Q0 d1 1\n", "run.trec:1: expected 6 fields (qid Q0 docid rank score tag), got 4"),
    "twice": ("q1 Q0 d1 1 2 t\nq1 Q0 d1 2 1 t\n", "run.trec:2: document 'd1' is ranked twice for query 'q1'"),
    "empty": ("\n", "run.trec: no rankings in it"),
    "json-shape": ('{"q1": ["d1"]}', "run.trec: query 'q1': expected {document id: score}, got [\"d1\"]"),
    "json-score": ('{"q1": {"d1": "high"}}', "run.trec: query 'q1', document 'd1': score \"high\" is not a finite number"),
    "not-json": ('{"q1": ', "run.trec:1: not valid JSON"),
    "not-utf8": (b"q1 Q0 d\xe9 1 1 t\n", "run.trec:1: not UTF-8 text"),
    # a JSON reader keeps the last of a repeated key: the same error as the TREC line that repeats it
    "json-twice": ('{"q1": {"d1": 2, "d4": 1, "d1": 0.5}}', "run.trec: document 'd1' is ranked twice for query 'q1'"),
    "json-query-twice": ('{"q1": {"d1": 2}, "q2": {"d2": 1}, "q1": {"d4": 1}}',
                         "run.trec: query 'q1' is named twice; a result JSON names each query once"),
}


@pytest.mark.parametrize("damage", list(RUN_ERRORS))
def test_a_bad_run_file_is_one_clear_error(tmp_path, damage):
    from rag_core.evals.retrieval.run_files import RunFileError, read_run

    content, message = RUN_ERRORS[damage]
    path = tmp_path / "run.trec"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(RunFileError) as raised:
        read_run(path)
    assert message in str(raised.value)


def test_every_retrievers_exported_run_reimports_to_the_same_numbers_and_trec_eval_agrees(project):
    """Export (--report-dir's trec/ files) -> import (run:) -> the same metrics, query by query;
    and trec_eval's own code (pytrec_eval through ir-measures) scores the exported runs alike."""
    ir_measures = pytest.importorskip("ir_measures")
    metrics = "metrics: [ndcg@5, recall@5, mrr@5, map@5, precision@3, hit_rate@1]"
    write_suite(project, suite("{name: bm25, store: memory, search_type: keyword}",
                               "{name: overlap, target: 'local_targets:reversed_ids'}").replace(
        "metrics: [ndcg@5, recall@5]", metrics))
    project.runpytest("evals", "--record-mode=once", "--report-dir=first").assert_outcomes(passed=2)
    exported = {r["retriever"]: r for r in json.loads((project.path / "first" / "retrieval.json").read_text())["results"]}
    runs = project.path / "first" / "trec"
    write_suite(project, suite("{name: bm25, run: first/trec/tiny.bm25.run}",
                               "{name: overlap, run: first/trec/tiny.overlap.run}").replace(
        "metrics: [ndcg@5, recall@5]", metrics))
    project.runpytest("evals", "--report-dir=second").assert_outcomes(passed=2)
    reimported = {r["retriever"]: r for r in json.loads((project.path / "second" / "retrieval.json").read_text())["results"]}
    for name in ("bm25", "overlap"):
        assert reimported[name]["per_query"] == exported[name]["per_query"], name
        assert reimported[name]["metrics"] == exported[name]["metrics"], name
        assert reimported[name]["rankings"] == exported[name]["rankings"], name
    measures = {"ndcg@5": ir_measures.nDCG @ 5, "recall@5": ir_measures.R @ 5, "mrr@5": ir_measures.RR @ 5,
                "map@5": ir_measures.AP @ 5, "precision@3": ir_measures.P @ 3, "hit_rate@1": ir_measures.Success @ 1}
    qrels = list(ir_measures.read_trec_qrels(str(runs / "tiny.qrels")))
    provider = ir_measures.providers.registry["pytrec_eval"]
    for name, result in exported.items():
        run = list(ir_measures.read_trec_run(str(runs / f"tiny.{name}.run")))
        for metric, measure in measures.items():
            by_query = {r.query_id: r.value for r in provider.iter_calc([measure], qrels, run)}
            for query, value in result["per_query"][metric].items():
                assert abs(by_query.get(query, 0.0) - value) < 1e-9, (name, metric, query)


# ---------------------------------------------------------------- pieces


def test_the_rankings_file_says_what_recorded_it_as_the_cassettes_do():
    from rag_core.evals.recording.recorder import EMULATOR_TARGET
    from rag_core.evals.retrieval import recording

    assert recording._EMULATED == EMULATOR_TARGET


def test_sweep_points_are_file_names():
    from rag_core.evals.retrieval.recording import file_stem

    assert file_stem("bm25[k1=1.2,b=0.75]") == "bm25@k1=1.2,b=0.75"
    assert file_stem("x[reranker=pkg.mod:Factory,exact=True]") == "x@reranker=pkg.mod_Factory,exact=True"


def test_the_first_difference_names_the_query_and_the_rank():
    from rag_core.evals.retrieval.recording import first_difference

    assert first_difference({"q1": ["a", "b"], "q2": ["c", "d", "e"]}, {"q1": ["a", "b"], "q2": ["c", "e", "d"]}) == (
        "query q2 ranks differently from rank 2 on: recorded [d, e], now [e, d]")
    assert first_difference({"q1": ["a"]}, {"q1": ["a"], "q2": []}) == "query q2 is new"
    assert first_difference({"q1": ["a", "b"]}, {"q1": ["a"]}) == (
        "query q1 ranks differently from rank 2 on: recorded [b], now nothing more")
    assert first_difference({"q1": ["a"]}, {"q1": ["a"]}) is None


def test_the_numbers_of_the_retrievers_page_are_the_committed_baselines():
    """Each row of docs/retrievers.md's table naming a baseline (`name`) gives its metrics, to 4 decimals."""
    import re

    page = (ROOT / "docs" / "retrievers.md").read_text(encoding="utf-8")
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in page.splitlines()
            if line.startswith("| ")]
    header = [cell.lower() for cell in rows[0]]
    checked = 0
    for row in rows[1:]:
        name = re.search(r"\(`(\w+)`\)", row[0])
        if not name:
            continue
        baseline = json.loads((ROOT / "fixtures/retrieval/baselines/kitchen_targets" / f"{name.group(1)}.json")
                              .read_text(encoding="utf-8"))["metrics"]
        for column, cell in zip(header, row):
            if column in baseline:
                assert abs(float(cell) - baseline[column]) < 1e-4 + 1e-9, (name.group(1), column, cell)
                checked += 1
    assert checked == 8 * 3


# ---------------------------------------------------------------- --prune-orphans: retrievers' recordings


def orphan_lines(result: pytest.RunResult) -> list[str]:
    """What the session summary said about orphans."""
    return sorted(line.strip() for line in result.stdout.lines if line.strip().startswith(("orphan ", "orphans ")))


def test_recordings_no_retriever_uses_are_listed_and_pruned_and_those_in_use_are_kept(project):
    """Recordings under cassettes/retrieval/ were never looked at: a removed retriever's or suite's
    stayed forever. Now they are orphans like stale cassettes; the recordings the suite replays
    (a target's, its sweep points', and one of a retriever skipped here) are neither listed nor
    deleted, and neither is any file there that is not a recording."""
    import os
    import time

    write_suite(project, suite("{name: overlap, target: 'local_targets:retriever'}",
                               "{name: gone, target: 'local_targets:as_pair'}",
                               "{name: elsewhere, target: 'local_targets:retriever'}",
                               extra="sweep: {retriever: overlap, grid: {weight: [0, 2]}}\n"))
    project.runpytest("evals", "--record-mode=once").assert_outcomes(passed=4)
    recorded = project.path / RECORDED
    in_use = sorted(p.name for p in recorded.iterdir())
    assert "overlap@weight=2.rankings.json" in in_use and "gone.yaml" in in_use
    # gone is removed from the suite; elsewhere now needs a module this environment lacks (as the
    # LlamaIndex retriever does outside the frameworks-legacy one): skipped, its recording still its own
    write_suite(project, suite("{name: overlap, target: 'local_targets:retriever'}",
                               "{name: elsewhere, target: 'local_targets:retriever', requires: [no_such_module]}",
                               extra="sweep: {retriever: overlap, grid: {weight: [0, 2]}}\n"))
    removed_suite = project.path / "cassettes" / "retrieval" / "old_suite"
    removed_suite.mkdir()
    for name in ("overlap.yaml", "overlap.rankings.json"):
        (removed_suite / name).write_bytes((recorded / name).read_bytes())
    others = {"notes.yaml": "title: not a cassette\n", "other.rankings.json": "{}", "README.md": "recordings\n"}
    for name, text in others.items():
        (recorded / name).write_text(text)
    old = time.time() - 3600  # as if written before the session: only such a file may be pruned
    for path in [*recorded.iterdir(), *removed_suite.iterdir()]:
        os.utime(path, (old, old))

    listed = project.runpytest("evals")
    listed.assert_outcomes(passed=2, skipped=1)
    orphans = ["cassettes/retrieval/old_suite/overlap.rankings.json", "cassettes/retrieval/old_suite/overlap.yaml",
               f"{RECORDED}/gone.rankings.json", f"{RECORDED}/gone.yaml"]
    assert orphan_lines(listed) == [f"orphan (no retriever uses it): {path}" for path in orphans]

    pruned = project.runpytest("evals", "--prune-orphans")
    pruned.assert_outcomes(passed=2, skipped=1)
    assert orphan_lines(pruned) == [f"orphan deleted: {path}" for path in orphans]
    assert sorted(p.name for p in recorded.iterdir()) == sorted(
        [name for name in in_use if not name.startswith("gone.")] + list(others))
    assert list(removed_suite.iterdir()) == []
    for name, text in others.items():
        assert (recorded / name).read_text() == text
    replayed = project.runpytest("evals", "--prune-orphans")  # what is left replays, and nothing more goes
    replayed.assert_outcomes(passed=2, skipped=1)
    assert orphan_lines(replayed) == []


def test_a_recording_a_golden_case_names_as_its_cassette_is_no_orphan(tmp_path):
    """A case's ``cassette:`` may be any path in the cassettes folder, a retriever's folder too."""
    from rag_core.evals.orphans import RetrieverRecordings

    cases, cassettes, suites = tmp_path / "goldens", tmp_path / "cassettes", tmp_path / "suites"
    folder = cassettes / "retrieval" / "tiny"
    for made in (cases, folder, suites):
        made.mkdir(parents=True)
    (suites / "tiny.yaml").write_text(suite("{name: overlap, target: 'local_targets:retriever'}"))
    for name in ("overlap.yaml", "by_case.yaml"):
        (folder / name).write_text("interactions: []\nversion: 1\n")
    files = RetrieverRecordings(cassettes, suites, cases)
    assert files.orphans() == ([folder / "by_case.yaml"], None)
    (cases / "c.yaml").write_text("id: c\ninput: hi\ncassette: retrieval/tiny/by_case.yaml\nemulate: [{text: hello}]\n")
    assert files.orphans() == ([], None)
    (suites / "broken.yaml").write_text("name: [")  # a suite that does not load may own anything
    assert files.orphans() == ([], "orphans not checked: 1 retrieval suite file(s) did not load")


def test_the_projects_own_recordings_are_all_in_use():
    """This repository's recordings, the LlamaIndex one included (its retriever is skipped outside
    the frameworks-legacy environment), are owned by its suites: --prune-orphans leaves them."""
    from rag_core.evals.orphans import RetrieverRecordings

    files = RetrieverRecordings(ROOT / "cassettes", ROOT / "fixtures" / "retrieval", ROOT / "fixtures" / "goldens")
    assert ROOT / "cassettes/retrieval/kitchen_targets/llamaindex_openai.yaml" in files.candidates()
    assert files.orphans() == ([], None)


def test_a_retrievers_tags_mark_every_test_that_runs_it(project):
    """``tags:`` (here ``other_env``; this repository's LlamaIndex retriever has ``legacy_sdk``) keep
    a retriever, and the identical and sweep tests that run it, to the environment that selects
    the tag and out of the one that deselects it; a test module may mark with the tag too, under
    --strict-markers. (A tag this process has not seen: pytest remembers known markers across
    pytester's in-process sessions.)"""
    write_suite(project, suite("{name: overlap, target: 'local_targets:retriever'}",
                               "{name: pair, target: 'local_targets:as_pair', tags: [other_env]}",
                               extra="identical: [[overlap, pair]]\nsweep: {retriever: pair, grid: {weight: [0, 1]}}\n"))
    (project.path / "evals" / "test_marked.py").write_text(
        "import pytest\n\n\n@pytest.mark.other_env\ndef test_marked():\n    pass\n")

    def selected(expression: str) -> list[str]:
        result = project.runpytest("evals", "--strict-markers", "--collect-only", "-q", "-m", expression)
        assert result.ret == 0, output(result)
        return sorted(line.split("::", 1)[1] for line in result.stdout.lines if "::" in line)

    assert selected("other_env") == ["test_marked", "test_retrieval[tiny/identical:overlap=pair]",
                                      "test_retrieval[tiny/pair]", "test_retrieval[tiny/sweep:pair]"]
    assert selected("not other_env") == ["test_retrieval[tiny/overlap]"]
