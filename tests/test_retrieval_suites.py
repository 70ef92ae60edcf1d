"""Meta-tests: retrieval suites gate on thresholds and baselines, and write their reports."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

import bm25s  # noqa: E402,F401  (imported before pytester's in-process runs; see test_harness.py)
import numpy  # noqa: E402,F401

try:  # the report's figures: imported here too, or a run inside pytester imports a second matplotlib
    import matplotlib.pyplot  # noqa: E402,F401
    import matplotlib.ticker  # noqa: E402,F401
except ImportError:
    pass

ROOT = Path(__file__).resolve().parents[1]

SUITE = """
name: mini
dataset: {judged: fixtures/retrieval/kitchen/queries.yaml}
depth: 10
metrics: [ndcg@10, recall@10]
retrievers:
  - {name: bm25, store: memory, search_type: keyword}
thresholds: {bm25: {ndcg@10: THRESHOLD}}
baseline: fixtures/retrieval/baselines/mini
tolerance: 0.001
"""


def with_retrievers(*retrievers: str) -> str:
    """The mini suite (threshold 0.5) with these retrievers (YAML flow mappings) instead of its one."""
    return SUITE.replace("THRESHOLD", "0.5").replace(
        "  - {name: bm25, store: memory, search_type: keyword}", "\n".join(f"  - {r}" for r in retrievers))


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    kitchen = pytester.path / "fixtures" / "retrieval" / "kitchen"
    kitchen.mkdir(parents=True)
    for name in ("corpus.jsonl", "queries.yaml"):
        shutil.copy(ROOT / "fixtures" / "retrieval" / "kitchen" / name, kitchen)
    (pytester.path / "fixtures" / "retrieval" / "mini.yaml").write_text(SUITE.replace("THRESHOLD", "0.5"))
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "test_retrieval.py").write_text(
        "def test_retrieval(retrieval_target, retrieval_check):\n    retrieval_check(retrieval_target)\n"
    )
    return pytester


def test_baselines_are_written_then_held(project):
    project.runpytest("evals", "--update-baselines").assert_outcomes(passed=1)
    baseline = json.loads((project.path / "fixtures/retrieval/baselines/mini/bm25.json").read_text())
    assert set(baseline["metrics"]) == {"ndcg@10", "recall@10"} and len(baseline["per_query"]["ndcg@10"]) == 48
    result = project.runpytest("evals", "--report-dir=out")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*suite mini*", "bm25 *"])
    assert {p.name for p in (project.path / "out").iterdir()} == {"retrieval.json", "retrieval.md", "recall_at_k.png",
                                                                  "per_query_vs_baseline.png", "trec"}
    report = json.loads((project.path / "out" / "retrieval.json").read_text())
    assert len(report["results"][0]["per_query"]["recall@10"]) == 48
    assert len(report["results"][0]["rankings"]) == 48  # every query's ranking, to re-score elsewhere


def test_the_exported_trec_run_and_qrels_rescore_to_the_suites_numbers_with_trec_eval(project):
    """trec_eval's own code (pytrec_eval, through ir-measures) on the exported files gives the
    suite's metrics: the run file keeps the retriever's order, ties and all."""
    ir_measures = pytest.importorskip("ir_measures")
    (project.path / "fixtures" / "retrieval" / "mini.yaml").write_text(SUITE.replace("THRESHOLD", "0.5").replace(
        "metrics: [ndcg@10, recall@10]", "metrics: [ndcg@10, recall@10, precision@5, hit_rate@3, map@10]"))
    project.runpytest("evals", "--update-baselines", "--report-dir=out")
    report = json.loads((project.path / "out" / "retrieval.json").read_text())
    qrels = list(ir_measures.read_trec_qrels(str(project.path / "out" / "trec" / "mini.qrels")))
    measures = {"ndcg@10": ir_measures.nDCG @ 10, "recall@10": ir_measures.R @ 10, "precision@5": ir_measures.P @ 5,
                "hit_rate@3": ir_measures.Success @ 3, "map@10": ir_measures.AP @ 10}
    provider = ir_measures.providers.registry["pytrec_eval"]
    checked = 0
    for result in report["results"]:
        run = list(ir_measures.read_trec_run(str(project.path / "out" / "trec" / f"mini.{result['retriever']}.run")))
        for name, measure in measures.items():
            by_query = {r.query_id: r.value for r in provider.iter_calc([measure], qrels, run)}
            for query, value in result["per_query"][name].items():
                assert abs(by_query.get(query, 0.0) - value) < 1e-6, (result["retriever"], name, query)
                checked += 1
    assert checked == 5 * 48


def test_a_regression_fails_with_a_before_after_table_and_the_worse_queries(project):
    project.runpytest("evals", "--update-baselines").assert_outcomes(passed=1)
    path = project.path / "fixtures/retrieval/baselines/mini/bm25.json"
    baseline = json.loads(path.read_text())
    baseline["metrics"]["ndcg@10"] += 0.05
    query = next(iter(baseline["per_query"]["ndcg@10"]))
    baseline["per_query"]["ndcg@10"][query] = 2.0  # pretend this query used to do better
    path.write_text(json.dumps(baseline))
    result = project.runpytest("evals")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*ndcg@10 = * fell below the baseline * by more than 0.001*",
        "metric *threshold *baseline *now *delta *p  status",
        "ndcg@10 *0.5 * -0.0500 *  REGRESSED",
        "queries worse than the baseline (ndcg@10):",
        f"  {query}: 2.0000 -> *",
    ])
    project.runpytest("evals", "--update-baselines").assert_outcomes(passed=1)


def _shift_baseline(project, queries: int, by: float) -> None:
    """Pretend the first ``queries`` queries used to score ``by`` higher on every metric."""
    path = project.path / "fixtures/retrieval/baselines/mini/bm25.json"
    baseline = json.loads(path.read_text())
    for metric, values in baseline["per_query"].items():
        for query in sorted(values)[:queries]:
            values[query] += by
        baseline["metrics"][metric] = sum(values.values()) / len(values)
    path.write_text(json.dumps(baseline))


def test_with_a_significance_level_only_a_significant_drop_fails(project):
    """48 queries: one query worse by 0.3 moves the mean by 0.006, beyond the tolerance, but a
    paired randomization test calls it chance; every query worse by 0.05 is not chance."""
    suite = project.path / "fixtures" / "retrieval" / "mini.yaml"
    suite.write_text(SUITE.replace("THRESHOLD", "0.5") + "significance: 0.05\n")
    project.runpytest("evals", "--update-baselines").assert_outcomes(passed=1)
    _shift_baseline(project, queries=1, by=0.3)
    result = project.runpytest("evals")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["bm25 * pass"])

    suite.write_text(SUITE.replace("THRESHOLD", "0.5"))  # no significance level: the same drop fails
    result = project.runpytest("evals")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*fell below the baseline * by more than 0.001 (p = 0.99*, paired randomization test)*",
                                 "bm25 * FAIL"])

    suite.write_text(SUITE.replace("THRESHOLD", "0.5") + "significance: 0.05\n")
    project.runpytest("evals", "--update-baselines").assert_outcomes(passed=1)
    _shift_baseline(project, queries=48, by=0.05)
    result = project.runpytest("evals")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*ndcg@10 = * fell below the baseline * (p = 0.000*, paired randomization test)*",
                                 "(a drop beyond 0.001 fails only with p < 0.05)"])


def test_the_report_gives_the_p_value_of_every_pair_of_retrievers(project):
    (project.path / "fixtures" / "retrieval" / "mini.yaml").write_text(with_retrievers(
        "{name: bm25, store: memory, search_type: keyword}",
        "{name: bm25_again, store: memory, search_type: keyword}",
        "{name: bm25_loose, store: memory, search_type: keyword, candidate_depth: 10}"))
    project.runpytest("evals", "--update-baselines", "--report-dir=out").assert_outcomes(passed=3)
    report = json.loads((project.path / "out" / "retrieval.json").read_text())
    tested = report["significance"]["mini"]
    assert tested["metric"] == "ndcg@10" and set(tested["p"]) == {
        "bm25 vs bm25_again", "bm25 vs bm25_loose", "bm25_again vs bm25_loose"}
    assert tested["p"]["bm25 vs bm25_again"] == 1.0  # the same rankings
    markdown = (project.path / "out" / "retrieval.md").read_text()
    assert "| | bm25_again | bm25_loose |" in markdown and "| bm25 | 1.0000 | 1.0000 |" in markdown


SWEEP = "sweep: {retriever: bm25, grid: {bm25_k1: [0.3, 1.5, 3.0], bm25_b: [0.2, 0.75, 1.0]}, keep_best: ndcg@10}\n"


def test_a_sweep_reports_every_setting_and_fails_when_the_pinned_one_is_no_longer_the_best(project):
    suite = project.path / "fixtures" / "retrieval" / "mini.yaml"
    suite.write_text(SUITE.replace("THRESHOLD", "0.5") + SWEEP)
    result = project.runpytest("evals", "--update-baselines", "--report-dir=out")
    result.assert_outcomes(passed=2)  # the retriever and its sweep
    result.stdout.fnmatch_lines([
        "sweep mini/bm25 (keep_best: ndcg@10)",
        "bm25_k1 *bm25_b *ndcg@10 *recall@10",
        "default *default *0.8992 *0.8402 *(pinned)",
        "1.5 *1.0 *0.8994[*] *0.8402 *",  # the best nDCG@10 of the grid, marked
    ])
    report = json.loads((project.path / "out" / "retrieval.json").read_text())
    assert len(report["sweeps"][0]["points"]) == 9
    assert report["sweeps"][0]["best"]["ndcg@10"] == "bm25[bm25_k1=1.5,bm25_b=1.0]"

    # pinned to a worse setting: the sweep names the better one
    suite.write_text(SUITE.replace("THRESHOLD", "0.5").replace(
        "search_type: keyword}", "search_type: keyword, bm25_k1: 3.0, bm25_b: 1.0}") + SWEEP)
    result = project.runpytest("evals", "--update-baselines")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*mini/sweep:bm25: bm25[[]bm25_k1=1.5,bm25_b=1.0[]] scores ndcg@10 0.8994, above the "
                                 "pinned setting's 0.8884 by 0.0110 (more than the tolerance 0.001; p = *): "
                                 "set it on retriever bm25 in the suite*"])


def test_a_sweep_of_a_setting_that_cannot_vary_is_a_suite_error():
    from rag_core.evals.retrieval.suite import SuiteSpec

    base = {"name": "s", "dataset": {"judged": "q.yaml"}, "metrics": ["ndcg@10"], "depth": 10,
            "retrievers": [{"name": "r", "search_type": "keyword"}]}
    for sweep, message in [
        ({"retriever": "r", "grid": {"store": ["memory"]}}, "'store' cannot be swept"),
        ({"retriever": "x", "grid": {"bm25_k1": [1.0]}}, "no retriever named 'x'"),
        ({"retriever": "r", "grid": {"bm25_b": [0.5, 1.5]}}, "bm25_b=1.5: bm25_b: Input should be less than or equal to 1"),
        ({"retriever": "r", "grid": {"candidate_depth": [5]}}, "candidate_depth 5 is below the suite's depth 10"),
        ({"retriever": "r", "grid": {"bm25_k1": [1.0]}, "keep_best": "mrr@10"}, "keep_best 'mrr@10' is not in metrics"),
    ]:
        with pytest.raises(ValueError, match=re.escape(message)):
            SuiteSpec.model_validate(base | {"sweep": sweep})


def test_a_threshold_still_fails_when_updating_baselines(project):
    (project.path / "fixtures" / "retrieval" / "mini.yaml").write_text(SUITE.replace("THRESHOLD", "0.99"))
    result = project.runpytest("evals", "--update-baselines")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*ndcg@10 = * is below its threshold 0.9900*", "*BELOW THRESHOLD*"])


def test_a_missing_beir_dataset_skips_with_how_to_get_it(project):
    (project.path / "fixtures" / "retrieval" / "mini.yaml").write_text(
        SUITE.replace("THRESHOLD", "0.5").replace("{judged: fixtures/retrieval/kitchen/queries.yaml}", "{beir: datasets/nfcorpus}")
    )
    result = project.runpytest("evals", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*the BEIR dataset folder */datasets/nfcorpus is not here*BEIR datasets are published*"])


def test_a_malformed_suite_is_one_clear_error(project):
    (project.path / "fixtures" / "retrieval" / "mini.yaml").write_text(SUITE.replace("THRESHOLD", "0.5").replace("ndcg@10, recall@10", "ndcg@10, f1@3"))
    result = project.runpytest("evals")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*mini.yaml: metrics: Value error, unknown metric 'f1@3'*"])


CACHED_SUITE = """
name: cached
dataset: {judged: fixtures/retrieval/kitchen/queries.yaml}
embedder: {kind: openai, id: text-embedding-3-small, cache: cassettes/embeddings/cached}
depth: 10
metrics: [ndcg@10]
retrievers:
  - {name: dense, store: memory, search_type: vector}
"""


def test_a_cache_miss_in_replay_names_the_suite_the_text_and_a_command_that_records_it(project, monkeypatch):
    import shlex
    import subprocess
    import sys

    from rag_core.evals.emulator.server import EmulatorServer

    (project.path / "fixtures" / "retrieval" / "mini.yaml").unlink()
    (project.path / "fixtures" / "retrieval" / "cached.yaml").write_text(CACHED_SUITE)
    monkeypatch.delenv("CI", raising=False)  # outside CI too, nothing is recorded unless asked for
    server = EmulatorServer()
    server.load([], seed="cache")
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "emulator")
    try:
        result = project.runpytest("evals")
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(["suite cached: the embedding cache cassettes/embeddings/cached has no vector for 300 "
                                     "of 300 document text(s) (first: *",
                                     "*Record the suite's embeddings: rag-core cache record fixtures/retrieval/cached.yaml"])
        assert not (project.path / "cassettes").exists()  # replay wrote nothing
        line = next(l for l in result.stdout.lines if "Record the suite's embeddings: " in l)
        command = shlex.split(line.split("Record the suite's embeddings: ", 1)[1])
        assert command[:3] == ["rag-core", "cache", "record"]
        ran = subprocess.run([sys.executable, "-m", "rag_core", *command[1:]], cwd=project.path, capture_output=True, text=True)
        assert ran.returncode == 0, ran.stderr
    finally:
        server.close()
    project.runpytest("evals").assert_outcomes(passed=1)


def test_a_query_within_the_tolerance_of_its_rounded_baseline_is_not_worse():
    from rag_core.evals.retrieval.evaluate import RetrieverResult
    from rag_core.evals.retrieval.gate import worse_queries
    from rag_core.evals.retrieval.suite import SuiteSpec

    suite = SuiteSpec.model_validate({"name": "s", "dataset": {"judged": "q.yaml"}, "metrics": ["ndcg@10"],
                                      "retrievers": [{"name": "r", "search_type": "keyword"}], "tolerance": 0.002})
    now = {"kq45": 0.62100004, "kq46": 0.6209996, "kq47": 0.61}
    result = RetrieverResult("s", "r", {"ndcg@10": 0.5}, {"ndcg@10": now}, [], 0.0, 0.0, 0.0)
    baseline = {"per_query": {"ndcg@10": {"kq45": 0.621, "kq46": 0.621, "kq47": 0.621}}}
    assert worse_queries(suite, result, baseline) == [("kq47", 0.621, 0.61)]


def test_baselines_of_removed_retrievers_are_orphans(project):
    project.runpytest("evals", "--update-baselines").assert_outcomes(passed=1)
    stale = project.path / "fixtures/retrieval/baselines/mini/removed.json"
    stale.write_text((project.path / "fixtures/retrieval/baselines/mini/bm25.json").read_text().replace('"bm25"', '"removed"'))
    result = project.runpytest("evals")
    result.stdout.fnmatch_lines(["*orphan (no retriever uses it): fixtures/retrieval/baselines/mini/removed.json"])
    project.runpytest("evals", "--prune-orphans").stdout.fnmatch_lines(["*orphan deleted: *removed.json"])
    assert not stale.exists() and (project.path / "fixtures/retrieval/baselines/mini/bm25.json").exists()


def test_empty_documents_stay_out_of_the_index_are_reported_once_and_count_as_unretrievable(pytester):
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    data = pytester.path / "data"
    data.mkdir()
    (data / "corpus.jsonl").write_text(
        '{"_id": "d1", "title": "Pad thai", "text": "rice noodles with tamarind"}\n'
        '{"_id": "d2", "title": "", "text": ""}\n'
        '{"_id": "d3", "title": "Green curry", "text": "coconut milk and basil"}\n'
        '{"_id": "d4", "title": " ", "text": "  "}\n')
    (data / "queries.yaml").write_text(
        "corpus: corpus.jsonl\nqueries:\n  - {id: q1, text: pad thai tamarind, relevant: [d1, d2]}\n"
        "  - {id: q2, text: green curry, relevant: [d3]}\n")
    (pytester.path / "fixtures" / "retrieval").mkdir(parents=True)
    (pytester.path / "fixtures" / "retrieval" / "empty.yaml").write_text(
        "name: empty\ndataset: {judged: data/queries.yaml}\ndepth: 10\nmetrics: [recall@10]\n"
        "retrievers:\n  - {name: bm25, store: memory, search_type: keyword}\n")
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "test_retrieval.py").write_text(
        "def test_retrieval(retrieval_target, retrieval_check):\n    retrieval_check(retrieval_target)\n")
    result = pytester.runpytest("evals", "--report-dir=out")
    result.assert_outcomes(passed=1)
    assert result.stdout.str().count("2 empty document(s) not indexed") == 1
    report = json.loads((pytester.path / "out" / "retrieval.json").read_text())["results"][0]
    assert report["empty_documents"] == 2
    assert report["per_query"]["recall@10"] == {"q1": 0.5, "q2": 1.0}  # d2 is relevant but cannot be retrieved


def test_lancedb_retrievers_run_in_a_suite_and_exact_search_matches_the_memory_store(project):
    cache = project.path / "cassettes" / "embeddings" / "kitchen-minilm"
    shutil.copytree(ROOT / "cassettes" / "embeddings" / "kitchen-minilm", cache)
    (project.path / "fixtures" / "retrieval" / "mini.yaml").write_text(
        "name: mini\ndataset: {judged: fixtures/retrieval/kitchen/queries.yaml}\n"
        "embedder: {kind: local, id: all-MiniLM-L6-v2, cache: cassettes/embeddings/kitchen-minilm}\n"
        "depth: 20\nmetrics: [ndcg@10, recall@20]\n"
        "retrievers:\n  - {name: dense, store: memory, search_type: vector}\n"
        "  - {name: dense_lancedb, store: lancedb, search_type: vector}\n"
        "  - {name: bm25_lancedb, store: lancedb, search_type: keyword}\n"
        "  - {name: hybrid_lancedb, store: lancedb, search_type: hybrid}\n"
        "thresholds: {bm25_lancedb: {ndcg@10: 0.5}}\n"
        "identical: [[dense, dense_lancedb]]\n")
    result = project.runpytest("evals", "-p", "no:randomly")
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(["*suite mini*", "dense_lancedb *"])


def test_fusion_depth_is_each_retrievers_own_setting_not_the_evaluation_depth(tmp_path):
    from rag_core.evals.retrieval.evaluate import build_store
    from rag_core.evals.retrieval.suite import SuiteFileError, load_suite
    from tests.fakes import HashEmbedder

    suite_file = tmp_path / "deep.yaml"
    suite_file.write_text(with_retrievers("{name: bm25, store: memory, search_type: keyword}",
                                          "{name: wide, store: memory, search_type: keyword, candidate_depth: 200}"))
    suite = load_suite(suite_file)
    default, wide = (build_store(r, HashEmbedder(), 10, lambda: "") for r in suite.retrievers)
    assert default.candidate_depth is None and default.depth_for(suite.depth) == 30  # the store's own: 3 × depth
    assert wide.depth_for(suite.depth) == 200
    suite_file.write_text(suite_file.read_text().replace("candidate_depth: 200", "candidate_depth: 5"))
    with pytest.raises(SuiteFileError, match="retriever wide: candidate_depth 5 is below the suite's depth 10"):
        load_suite(suite_file)


def test_tests_that_reuse_retriever_results_share_one_xdist_group(project):
    """An identical check or a sweep reads its retrievers' results from the process it runs in;
    under --dist loadgroup they all go to one worker instead of computing the retrievers again."""
    suite = project.path / "fixtures" / "retrieval" / "mini.yaml"
    suite.write_text(with_retrievers(
        "{name: bm25, store: memory, search_type: keyword}",
        "{name: bm25_again, store: memory, search_type: keyword}",
        "{name: alone, store: memory, search_type: keyword, bm25_k1: 1.0}",
        "{name: pg_keyword, store: pgvector, search_type: keyword}",
        "{name: pg_tuned, store: pgvector, search_type: keyword, bm25_k1: 1.0}",  # the same table
        "{name: pg_hnsw, store: pgvector, search_type: keyword, exact: false}",  # a table of its own
    ) + "identical:\n  - [bm25, bm25_again]\n")
    items = project.getitems(project.path / "evals" / "test_retrieval.py")
    groups = {item.callspec.id: [m.args for m in item.iter_markers("xdist_group")] for item in items}
    shared = [("mini/shared",)]
    assert groups == {"mini/bm25": shared, "mini/bm25_again": shared, "mini/alone": [],
                      "mini/identical:bm25=bm25_again": shared, "mini/pg_keyword": shared, "mini/pg_tuned": shared,
                      "mini/pg_hnsw": []}


def test_pgvector_retrievers_of_a_suite_share_one_loaded_table_and_score_as_if_alone(tmp_path, pg_url):
    """Search type, fusion and BM25 parameters apply at query time: retrievers differing only in
    those query one table, loaded once, and score exactly what a table of their own gives."""
    from rag_core.evals.retrieval.datasets import load_judged_yaml
    from rag_core.evals.retrieval.evaluate import SharedTables, run_retriever
    from rag_core.evals.retrieval.suite import load_suite
    from rag_core.vectordb import PgVector

    suite_file = tmp_path / "pg.yaml"
    suite_file.write_text(with_retrievers("{name: bm25, store: pgvector, search_type: keyword}",
                                          "{name: bm25_wide, store: pgvector, search_type: keyword, bm25_k1: 2.0, bm25_b: 0.5}"))
    suite = load_suite(suite_file)
    dataset = load_judged_yaml(ROOT / "fixtures" / "retrieval" / "kitchen" / "queries.yaml")
    shared = SharedTables()
    first, second = (run_retriever(suite, r, dataset, None, lambda: pg_url, shared) for r in suite.retrievers)
    [(table, seconds)] = shared.tables.values()  # one table, loaded once
    assert first.index_seconds == second.index_seconds == seconds
    alone = run_retriever(suite, suite.retrievers[1], dataset, None, lambda: pg_url)  # its own table, dropped after
    assert second.rankings == alone.rankings and second.metrics == alone.metrics
    assert first.rankings != second.rankings  # the query-time parameters did apply
    assert PgVector(table, db_url=pg_url).count() == len([t for t in dataset.corpus.values() if t.strip()])
    shared.drop_all()
    assert PgVector(table, db_url=pg_url).count() == 0 and not shared.tables


WAIT_FOR_THE_BACKGROUND = """
import time


def test_the_external_retrievers_finish_before_any_retrieval_test_runs(retrieval_runner):
    deadline = time.monotonic() + 120
    while not all(f.done() for f in retrieval_runner.results.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sorted(retrieval_runner.results) == [("mini", "bm25_pg"), ("mini", "dense_chroma"), ("mini", "dense_pg")]
    assert all(f.done() and f.exception() is None for f in retrieval_runner.results.values())
"""


def test_retrievers_over_external_stores_run_in_background_threads_and_score_as_if_run_alone(project, pg_url):
    """Chroma and PgVector retrievers start in background threads at the session's first test
    (in-memory ones stay in their test's thread); their results are exactly those of a session
    that runs each in its own test, and the report says the timings were taken side by side."""
    shutil.copytree(ROOT / "cassettes" / "embeddings" / "kitchen-minilm", project.path / "cassettes" / "embeddings" / "kitchen-minilm")
    (project.path / "fixtures" / "retrieval" / "mini.yaml").write_text(
        "name: mini\ndataset: {judged: fixtures/retrieval/kitchen/queries.yaml}\n"
        "embedder: {kind: local, id: all-MiniLM-L6-v2, cache: cassettes/embeddings/kitchen-minilm}\n"
        "depth: 20\nmetrics: [ndcg@10, recall@20]\n"
        "retrievers:\n  - {name: dense, store: memory, search_type: vector}\n"
        "  - {name: dense_chroma, store: chroma, search_type: vector}\n"
        "  - {name: dense_pg, store: pgvector, search_type: vector}\n"
        "  - {name: bm25_pg, store: pgvector, search_type: keyword}\n"
        "identical: [[dense, dense_chroma, dense_pg]]\n")
    (project.path / "evals" / "test_0_first.py").write_text(WAIT_FOR_THE_BACKGROUND)
    side_by_side = project.runpytest("evals", "-p", "no:randomly", "--retrieval-threads", "2", "--report-dir=threads")
    side_by_side.assert_outcomes(passed=6)
    side_by_side.stdout.fnmatch_lines(["timed while other retrievers ran in 2 background thread(s)*"])
    alone = project.runpytest("evals", "-p", "no:randomly", "--retrieval-threads", "0", "--report-dir=alone",
                              "-k", "not the_external_retrievers_finish")
    alone.assert_outcomes(passed=5, deselected=1)
    assert "timed while" not in alone.stdout.str()

    def scored(folder: str) -> dict[str, tuple]:
        results = json.loads((project.path / folder / "retrieval.json").read_text())["results"]
        return {r["retriever"]: (r["rankings"], r["metrics"], r["per_query"]) for r in results}

    assert scored("threads") == scored("alone")


def test_a_test_computes_a_queued_retriever_itself_instead_of_waiting_for_a_busy_thread(tmp_path, monkeypatch):
    import threading
    import types

    from rag_core.evals.retrieval import evaluate
    from rag_core.evals.plugins.retrieval_runner import RetrievalRunner
    from rag_core.evals.retrieval.suite import load_suite

    suite_file = tmp_path / "mini.yaml"
    suite_file.write_text("name: mini\ndataset: {judged: fixtures/retrieval/kitchen/queries.yaml}\nmetrics: [ndcg@10]\nretrievers:\n"
                          + "".join(f"  - {{name: {n}, store: chroma, search_type: keyword}}\n"
                                    for n in ("no_server", "busy", "queued", "broken")))
    suite = load_suite(suite_file)
    release, busy_started = threading.Event(), threading.Event()
    computed_in: dict[str, list[str]] = {}

    def fake_run(suite, spec, *args):
        computed_in.setdefault(spec.name, []).append(threading.current_thread().name)
        if spec.name == "busy":
            busy_started.set()
            assert release.wait(30)
        if spec.name == "broken":
            raise RuntimeError("the store refused")
        if spec.name == "no_server":  # what a missing PostgreSQL does: the test waiting for it skips
            pytest.skip("no PostgreSQL for PgVector")
        return types.SimpleNamespace(name=spec.name)

    monkeypatch.setattr(evaluate, "run_retriever", fake_run)
    config = types.SimpleNamespace(rootpath=ROOT, getoption=lambda name, default=None: default)
    runner = RetrievalRunner(config, None)  # type: ignore[arg-type]
    runner.start([(suite, r) for r in suite.retrievers], threads=1)
    assert busy_started.wait(30)
    with pytest.raises(pytest.skip.Exception, match="no PostgreSQL"):
        runner.result(suite, "no_server")
    assert runner.result(suite, "queued").name == "queued"  # while the only thread is busy
    with pytest.raises(RuntimeError, match="the store refused"):
        runner.result(suite, "broken")
    release.set()
    assert runner.result(suite, "busy").name == "busy"
    runner.close()
    main = threading.current_thread().name
    background = "rag-core-retriever_0"
    assert computed_in == {"no_server": [background], "busy": [background], "queued": [main], "broken": [main]}  # each once


def test_a_report_folder_that_cannot_be_written_fails_the_session(project, monkeypatch):
    """The report was written in the terminal summary, after pytest had settled the exit status:
    a full disk ended the run with exit status 0."""
    import errno
    import importlib

    report = importlib.import_module("rag_core.evals.retrieval.report")  # as sys.modules holds it

    def disk_full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    project.runpytest("evals", "--update-baselines").assert_outcomes(passed=1)
    monkeypatch.setattr(report, "write", disk_full)
    result = project.runpytest("evals", "--report-dir=out")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["report: not written: [[]Errno 28[]] No space left on device"])
