"""Size and time of a run record and its report at scale (run by hand, not by pytest).

    python -m evals.benchmarks.bench_run_record [--cases 10000] [--queries 300] [--retrievers 4] [--failing 0.01]

Builds a record as the plugin would (a case per id, one failing in a hundred with a prompt edit
in its system prompt and its requests, like the golden project's; a judged suite whose retrievers
keep every query's scores, judgements and top 10), writes it through the run folder (credential
check, atomic write) and renders its report against a copy of itself. Then the worst cases: every
case failing (a shared prompt edited), which the record's detail budget holds in, and values past
their bound, which are cut.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import gzip
import random
import tempfile
import time
from pathlib import Path

from rag_core.evals.common.failure import Failure
from rag_core.evals.report.html import report_for
from rag_core.evals.runs.bounds import VALUE_LIMIT
from rag_core.evals.runs.failures import entry
from rag_core.evals.runs.retrieval import retriever_entry
from rag_core.evals.runs.schema import CaseEntry, FailureEntry, RunRecord
from rag_core.evals.runs.store import RunStore, new_id

METRICS = ["ndcg@10", "recall@10", "recall@20", "mrr@10", "map@10", "precision@10", "hit_rate@10"]
PROMPT = "\n".join(["Be brief."] + [f"Rule {n}: answer from the knowledge base, cite the recipe." for n in range(12)])


@functools.cache
def failures(big: bool) -> tuple[FailureEntry, ...]:
    """One failing case's failures as the plugin keeps them (made once: the credential check of
    each value is the slow part, and every case of this record fails alike)."""
    golden, observed = (("g" * VALUE_LIMIT * 2, "o" * VALUE_LIMIT * 2) if big
                        else (PROMPT, PROMPT.replace("Be brief.", "Be very brief.")))
    body = {"model": "gpt-5.2", "input": [{"role": "developer", "content": golden}, {"role": "user", "content": "pad thai?"}]}
    changed = {**body, "input": [{"role": "developer", "content": observed}, body["input"][1]]}
    return (entry(Failure("snapshot", "golden", "fixtures/goldens/case.golden.yaml", "system_prompt",
                          golden=golden, observed=observed)),
            entry(Failure("snapshot", "golden", "fixtures/goldens/case.golden.yaml", "requests",
                          golden=[body, body], observed=[changed, changed])))


def failing_case(number: int, big: bool) -> CaseEntry:
    where = f"fixtures/goldens/case_{number:05d}.golden.yaml"
    return CaseEntry(f"case_{number:05d}", "failed", 0.05, 850,
                     failures=[dataclasses.replace(f, where=where, truncated=dict(f.truncated)) for f in failures(big)],
                     fixes=[f"pytest evals/ --case case_{number:05d} --update-goldens"])


def run_record(cases: int, queries: int, retrievers: int, failing: float, big: bool = False) -> RunRecord:
    chance = random.Random(7)
    entries = [failing_case(n, big) if chance.random() < failing else CaseEntry(f"case_{n:05d}", "passed", 0.05, 850)
               for n in range(cases)]
    suite = []
    ids = [f"q{n}" for n in range(queries)]
    qrels = {q: {f"d{chance.randrange(5000)}": chance.choice([1, 2]) for _ in range(5)} for q in ids}
    for r in range(retrievers):
        per_query = {m: {q: chance.random() for q in ids} for m in METRICS}
        summary = {"suite": "scifact", "retriever": f"retriever_{r}", "gate": "pass",
                   "metrics": {m: sum(v.values()) / queries for m, v in per_query.items()}, "per_query": per_query,
                   "recall_curve": [k / 100 for k in range(100)], "index_seconds": 8.3, "query_ms_p50": 2.0,
                   "query_ms_p95": 4.0, "qrels": qrels,
                   "rankings": {q: [f"d{chance.randrange(5000)}" for _ in range(100)] for q in ids}}
        gate = {"failures": [], "thresholds": {"ndcg@10": 0.5},
                "queries": {q: "0-dimensional biomaterials show inductive properties " * 2 for q in ids}}
        suite.append(retriever_entry(summary, gate, 9.0))
    return RunRecord(id=new_id(), started="2025-03-01T10:00:00Z", seconds=600.0, cases=entries, retrieval=suite)


def measure(label: str, record: RunRecord, folder: Path) -> None:
    store = RunStore(folder)
    started = time.perf_counter()
    path = store.write(record)
    written = time.perf_counter() - started
    copy = RunRecord.from_json(__import__("json").loads(path.read_text()))
    copy.id = new_id()
    store.write(copy)
    started = time.perf_counter()
    report = report_for(folder, None, "previous")
    rendered = time.perf_counter() - started
    size = path.stat().st_size
    html = len(report.html.encode())
    print(f"{label}: record {size / 1e6:.1f} MB ({len(gzip.compress(path.read_bytes())) / 1e6:.2f} MB gzipped), "
          f"written in {written:.2f} s; report against a copy {html / 1e6:.1f} MB, built in {rendered:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--retrievers", type=int, default=4)
    parser.add_argument("--failing", type=float, default=0.01, help="share of cases that fail")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        measure(f"{args.cases} cases ({args.failing:.0%} failing) + {args.queries} queries x {args.retrievers} retrievers",
                run_record(args.cases, args.queries, args.retrievers, args.failing), Path(scratch) / "typical")
        measure(f"{args.cases} cases alone, all passing", run_record(args.cases, 0, 0, 0.0), Path(scratch) / "passing")
        measure(f"{args.queries} queries x 1 retriever alone", run_record(0, args.queries, 1, 0.0), Path(scratch) / "suite")
        # a shared prompt edited: every case fails; the record's detail budget holds the size in
        measure(f"{args.cases} cases all failing", run_record(args.cases, 0, 0, 1.0), Path(scratch) / "all-failing")
        measure("200 cases failing with values past their bound", run_record(200, 0, 0, 1.0, big=True),
                Path(scratch) / "big-values")


if __name__ == "__main__":
    main()
