"""Benchmark of the golden harness (run by hand, not by pytest).

    python -m evals.benchmarks.bench_harness [--runs 100]

* per-case cost of ``run_case`` for a replayed two-round case (cassette load, agent run
  through the SDK, observation, golden comparison), without pytest around it;
* the share of that which is the agent run itself (cassette replay, no harness);
* the wall time of ``pytest evals/test_goldens.py`` (all golden cases), in a fresh process.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from rag_core.evals.harness.case import parse_case_file
from rag_core.evals.harness.runner import Settings, run_case

ROOT = Path(__file__).resolve().parents[2]


def median_ms(fn, runs: int) -> tuple[float, float]:
    fn()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(0.95 * (len(samples) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--pytest-runs", type=int, default=3, help="how many times to time `pytest evals/`")
    args = parser.parse_args()
    settings = Settings(cassettes_dir=ROOT / "cassettes",
                        fixtures_dir=ROOT / "fixtures")
    [sync, stream] = parse_case_file(ROOT / "fixtures/goldens/agentic_rag.yaml")
    for case in (sync, stream):
        assert not run_case(case, settings).failures
        p50, p95 = median_ms(lambda: run_case(case, settings), args.runs)
        print(f"run_case({case.id}): median {p50:.2f} ms, p95 {p95:.2f} ms")

    import vcr

    from rag_core.evals.harness.build import build_agent, build_model

    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")  # the model reads its key where a program's does
    model = build_model(sync.model)
    agent = build_agent(sync, model, settings.fixtures_dir)
    player = vcr.VCR(record_mode="none", match_on=["method", "path"])
    from rag_core.evals.harness import cassette_format

    player.register_serializer("rag_core", cassette_format)

    def agent_only() -> None:
        with player.use_cassette(str(settings.cassettes_dir / "agentic_rag.sync.yaml"), serializer="rag_core"):
            agent.run(sync.input)

    p50, p95 = median_ms(agent_only, args.runs)
    print(f"agent run alone from the same cassette: median {p50:.2f} ms, p95 {p95:.2f} ms")

    walls = []
    for _ in range(args.pytest_runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pytest", "evals/test_goldens.py", "-q", "-p", "no:cacheprovider"], cwd=ROOT,
                       check=True, capture_output=True)
        walls.append(time.perf_counter() - started)
    if walls:
        cases = len(list((ROOT / "cassettes").glob("*.yaml")))
        print(f"pytest evals/test_goldens.py ({cases} golden cases), wall: median {statistics.median(walls):.2f} s")


if __name__ == "__main__":
    main()
