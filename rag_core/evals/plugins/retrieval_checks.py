"""What a retrieval test checks: a retriever's numbers against its gate (thresholds, the
baseline, written anew under ``--update-baselines``), a sweep's points, an ``identical`` group's
rankings."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from rag_core.evals.plugins.retrieval_runner import RetrievalRunner
    from rag_core.evals.plugins.retrieval_tests import Target


def check_retriever(runner: RetrievalRunner, target: Target, request: pytest.FixtureRequest) -> None:
    from rag_core.evals.retrieval import gate

    suite = target.suite
    assert suite is not None and target.retriever is not None
    result = runner.result(suite, target.retriever)
    for note in result.notes:  # a stale cassette whose rankings still came out the same (recording.py)
        request.node.warn(pytest.PytestWarning(note))
    path = gate.baseline_file(suite, runner.root, target.retriever)
    update = runner.config.getoption("update_baselines") and path is not None
    try:
        baseline = gate.load_baseline(suite, runner.root, target.retriever)
    except gate.BaselineError as exc:
        # --update-baselines rewrites a broken file of this retriever, never another suite's
        if not update or (exc.foreign and exc.path == path):
            raise
        baseline = None
    worse = gate.worse_queries(suite, result, baseline)
    failures, table = gate.check(suite, result, baseline)
    if update:
        threshold_failures = [f for f in failures if "threshold" in f]
        gate.write_baseline(path, suite, result)
        failures = threshold_failures  # a new baseline is accepted; thresholds still hold
    summary = {**result.summary(), "gate": "FAIL" if failures else "pass",
               "baseline_per_query": (baseline or {}).get("per_query", {}).get(suite.metrics[0])}
    request.node.user_properties.append(("rag_core_retrieval", {"summary": summary, "worse": worse}))
    # the run record (rag_core/evals/runs): the gate's verdicts, its thresholds and the query texts
    from rag_core.evals.runs.retrieval import gate_property

    request.node.user_properties.append(gate_property(failures, suite.thresholds.get(target.retriever, {}),
                                                      getattr(runner.datasets.get(suite.name), "queries", None)))
    if failures:
        drops = "".join(f"\n  {q}: {b:.4f} -> {n:.4f}" for q, b, n in worse[:15])
        pytest.fail(
            f"{target.id}: " + "; ".join(failures) + f"\n\n{table}"
            + (f"\n\nqueries worse than the baseline ({suite.metrics[0]}):{drops}" if worse else "")
            + "\n\nif the change is intended: pytest evals/ --update-baselines",
            pytrace=False,
        )


def check_sweep(runner: RetrievalRunner, target: Target, request: pytest.FixtureRequest) -> None:
    from rag_core.evals.retrieval import sweep as sweeps

    suite = target.suite
    assert suite is not None and target.sweep is not None
    spec = suite.sweep[target.sweep]
    pinned = runner.result(suite, spec.retriever)
    points = [runner.run(suite, variant) for variant in suite.variants(spec)]
    summary = sweeps.summarize(suite, spec, pinned, points)
    request.node.user_properties.append(("rag_core_sweep", summary))
    failures = sweeps.keep_best_failures(suite, spec, summary, pinned, points)
    if failures:
        pytest.fail(f"{target.id}: " + "; ".join(failures) + "\n\n" + "\n".join(sweeps.table(summary)), pytrace=False)


def check_identical(runner: RetrievalRunner, target: Target) -> None:
    suite = target.suite
    assert suite is not None and target.group is not None
    results = [runner.result(suite, name) for name in target.group]
    reference = results[0]
    for other in results[1:]:
        differing = [q for q in reference.rankings if reference.rankings[q] != other.rankings[q]]
        metric_gaps = {m: (reference.metrics[m], other.metrics[m]) for m in suite.metrics
                       if abs(reference.metrics[m] - other.metrics[m]) > 1e-12}
        if differing or metric_gaps:
            pytest.fail(
                f"{target.id}: {other.retriever} differs from {reference.retriever}: "
                f"{len(differing)} of {len(reference.rankings)} rankings differ (first: {differing[:5]}); metrics {metric_gaps}",
                pytrace=False,
            )
