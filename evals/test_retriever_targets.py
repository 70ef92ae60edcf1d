"""The retrievers of other libraries in the kitchen_targets suite (evals/retrievers/), beyond the
gates `test_retrieval` holds them to: each one's exported run file re-imports to the same numbers,
and trec_eval's own code (pytrec_eval through ir-measures) scores it alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_core.evals.retrieval.evaluate import rank_run_file, score
from rag_core.evals.retrieval.recording import FOLDER, RecordingFiles, ReplaySettings, read_rankings
from rag_core.evals.retrieval.report import trec_qrels, trec_run
from rag_core.evals.retrieval.suite import load_suite

ROOT = Path(__file__).resolve().parents[1]
SUITE = load_suite(ROOT / "fixtures" / "retrieval" / "kitchen_targets.yaml")


# a retriever's tags mark its parameter as they mark its test_retrieval test (legacy_sdk: run in the
# frameworks-legacy environment, deselected in the main one)
@pytest.mark.parametrize("name", [pytest.param(r.name, marks=[getattr(pytest.mark, t) for t in r.tags])
                                  for r in SUITE.retrievers])
def test_the_exported_run_reimports_to_the_same_numbers_and_trec_eval_agrees(retrieval_runner, tmp_path, name):
    result = retrieval_runner.result(SUITE, name)  # the session's own: computed once, shared with test_retrieval
    exported = tmp_path / f"{SUITE.name}.{name}.run"
    exported.write_text(trec_run(result.summary()))
    reimported = SUITE.retrievers[0].model_copy(update={"name": f"{name}_run", "search_type": None,
                                                        "run": str(exported)})
    dataset = retrieval_runner.datasets[SUITE.name]
    again = score(SUITE, reimported.name, dataset, rank_run_file(SUITE, reimported, dataset, tmp_path))
    assert again.rankings == result.rankings
    assert again.per_query == result.per_query and again.metrics == result.metrics

    ir_measures = pytest.importorskip("ir_measures")
    qrels_file = tmp_path / "kitchen.qrels"
    qrels_file.write_text(trec_qrels(result.qrels))
    measures = {"ndcg@10": ir_measures.nDCG @ 10, "recall@10": ir_measures.R @ 10, "recall@20": ir_measures.R @ 20,
                "mrr@10": ir_measures.RR @ 10}
    assert set(measures) == set(SUITE.metrics)
    provider = ir_measures.providers.registry["pytrec_eval"]
    qrels = list(ir_measures.read_trec_qrels(str(qrels_file)))
    run = list(ir_measures.read_trec_run(str(exported)))
    top_10 = {(query, doc) for query, ranking in result.rankings.items() for doc in ranking[:10]}
    for metric, measure in measures.items():
        # trec_eval's recip_rank has no cut-off (ir-measures passes RR@10 to it as plain RR): it is
        # given the top 10 alone, as trec_eval -M 10 would read the run
        scored = [r for r in run if (r.query_id, r.doc_id) in top_10] if metric == "mrr@10" else run
        by_query = {r.query_id: r.value for r in provider.iter_calc([measure], qrels, scored)}
        for query, value in result.per_query[metric].items():
            assert abs(by_query.get(query, 0.0) - value) < 1e-9, (metric, query)


def test_llamaindex_ranks_every_query_as_langchain_does_over_the_same_embeddings():
    """LlamaIndex's VectorStoreIndex and LangChain's InMemoryVectorStore, on the same model and
    dimensions (so the same emulated vectors), rank by cosine alike. No ``identical:`` group can
    show it: LlamaIndex runs in the frameworks-legacy environment (openai 1.x), langchain-openai
    needs openai>=2.45, so no environment of this project runs both. Each one's replay fails when
    its rankings differ from its recording (stale), in its own environment; equal recordings close
    the proof."""
    settings = ReplaySettings(cassettes=ROOT / "cassettes" / FOLDER)
    recorded = {name: read_rankings(RecordingFiles.of(settings, SUITE.name, name).rankings)
                for name in ("langchain_openai", "llamaindex_openai")}
    assert recorded["llamaindex_openai"].depth == recorded["langchain_openai"].depth == SUITE.depth
    assert recorded["llamaindex_openai"].rankings == recorded["langchain_openai"].rankings
