"""How each kind of retriever in a suite comes to its rankings, under the session's modes.

- a built-in store with no reranker: its embeddings replay from the suite's embedding cache,
  behind the network guard when it runs in its test's thread (evaluate.run_retriever);
- a built-in store with a reranker, and a retriever target: their provider traffic recorded and
  replayed, their rankings pinned (recording.py);
- a ``live: true`` target: only under --live, against its service, keeping nothing;
- a run file: its rankings as they are (run_files.py).

Before any of them runs, what it needs is checked: ``requires:`` (as golden cases check theirs)
and, for a live target, --live. Unmet, the retriever is skipped naming why, or fails where no
skip is allowed (``RAG_CORE_REQUIRE_ALL_CASES``, which CI sets).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import pytest

from rag_core.evals.retrieval.datasets import Dataset
from rag_core.evals.retrieval.evaluate import RetrieverResult, rank_built_in, rank_run_file, rank_target, score
from rag_core.evals.retrieval.recording import ReplaySettings, run_live, run_recorded
from rag_core.evals.retrieval.suite import RetrieverSpec, SuiteSpec
from rag_core.evals.retrieval.retriever_targets import RetrieverContext

REQUIRE_ALL = "RAG_CORE_REQUIRE_ALL_CASES"


def skip_unless_runnable(suite: SuiteSpec, spec: RetrieverSpec, settings: ReplaySettings, selector: str) -> None:
    """Skip (or, where nothing may skip, fail) a retriever whose requirements do not hold here."""
    from rag_core.evals.common.paths import shown
    from rag_core.evals.common.requirements import unmet
    from rag_core.evals.retrieval.recording import command

    reasons = [problem for problem in map(unmet, spec.requires) if problem]
    if spec.live and not settings.live:
        where = f" in {shown(suite.source)}" if suite.source else ""
        reasons.append(f"--live: it is marked live: true{where} (it queries a service on this machine, which a "
                       f"replay cannot stand in for); where the service runs: {command(selector, '--live')}")
    if not reasons:
        return
    reason = f"suite {suite.name}, retriever {spec.name} requires {'; '.join(reasons)}"
    if os.environ.get(REQUIRE_ALL):
        pytest.fail(f"{reason} ({REQUIRE_ALL} is set: no retriever may skip)", pytrace=False)
    pytest.skip(reason)


def guarded_built_in(suite: SuiteSpec, spec: RetrieverSpec, dataset: Dataset, embedder: Any,
                     pg_url: Callable[[], str], shared: Any, run: Callable[..., RetrieverResult]) -> RetrieverResult:
    """A built-in store without a reranker, in its test's thread, behind the network guard: its
    embeddings come from the suite's cache, so nothing of it may leave the machine."""
    from rag_core.evals.recording.network import blocked_message, network_blocked
    from rag_core.evals.retrieval.recording import RecordingError

    with network_blocked(f"retrieval {suite.name}/{spec.name}") as blocked:
        result = run(suite, spec, dataset, embedder, pg_url, shared)
        attempts = list(blocked)
    if attempts:
        raise RecordingError(f"suite {suite.name}, retriever {spec.name}: {blocked_message(attempts)}")
    return result


def recorded_result(suite: SuiteSpec, spec: RetrieverSpec, dataset: Dataset, embedder: Any,
                    pg_url: Callable[[], str], shared: Any, root: Path, settings: ReplaySettings,
                    selector: str) -> RetrieverResult:
    """A target's or a reranking store's result, its traffic recorded or replayed (live targets: run)."""
    def ranked(emulated: bool) -> Any:
        if spec.kind == "builtin":
            return rank_built_in(suite, spec, dataset, embedder, pg_url, shared)
        context = RetrieverContext(suite.name, spec.name, root, embedder, emulated)
        return rank_target(suite, spec, dataset, context)

    if spec.live:
        return score(suite, spec.name, dataset, run_live(suite.name, spec.name, settings, ranked))
    rankings, notes = run_recorded(suite.name, spec.name, suite.depth, settings, selector, ranked)
    result = score(suite, spec.name, dataset, rankings)
    result.notes = notes
    return result


def run_file_result(suite: SuiteSpec, spec: RetrieverSpec, dataset: Dataset, root: Path) -> RetrieverResult:
    return score(suite, spec.name, dataset, rank_run_file(suite, spec, dataset, root))
