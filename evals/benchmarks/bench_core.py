"""Benchmark of the agent core (run by hand, not by pytest).

    python -m evals.benchmarks.bench_core [--runs 200]

Measures, side by side in one process:
* the wall time of ``import rag_core`` in a fresh interpreter (median of several);
* the per-run cost of a two-round agentic RAG run (search tool call, then answer)
  replayed from a vcrpy cassette through the real openai SDK, plain and streaming;
* the same run against the in-process emulator transport, to separate vcrpy's share.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[2]


def import_time(repeats: int) -> list[float]:
    code = "import time; t = time.perf_counter(); import rag_core; print(time.perf_counter() - t)"
    return [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout)
        for _ in range(repeats)
    ]


def timed(fn: Callable[[], object], runs: int) -> list[float]:
    fn()  # warm-up: lazy imports, schema building, BM25 index
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def summary(label: str, samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    p95 = ms[min(len(ms) - 1, int(len(ms) * 0.95))]
    return f"{label:<48} median {statistics.median(ms):8.2f} ms   p95 {p95:8.2f} ms   (n={len(ms)})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--import-repeats", type=int, default=7)
    args = parser.parse_args()

    print(summary("import rag_core (fresh interpreter)", import_time(args.import_repeats)))

    import vcr

    from rag_core.evals.emulator.provider import ScriptedProvider
    from rag_core.evals.golden.case_files import parse_case_file
    from evals.scenarios import thai_recipes
    from rag_core import Agent
    from rag_core.models import OpenAIResponses

    # the agentic RAG golden case: its agent, input and scripted provider turns
    scenario = parse_case_file(ROOT / "fixtures" / "goldens" / "agentic_rag.yaml")[0]
    turns = scenario.emulate
    agent = Agent(model=OpenAIResponses(id="gpt-5.2", api_key="sk-bench", max_retries=0),
                  knowledge=thai_recipes(), **scenario.agent)

    def emulated(stream: bool) -> Callable[[], object]:
        def run() -> object:
            provider = ScriptedProvider(turns, seed="bench")
            agent.model = OpenAIResponses(id="gpt-5.2", api_key="sk-bench", http_client=provider.http_client(), max_retries=0)
            result = agent.run(scenario.input, stream=stream)
            return list(result) if stream else result

        return run

    with tempfile.TemporaryDirectory() as tmp:
        results = []
        for stream in (False, True):
            cassette = str(Path(tmp) / f"agentic_rag_{stream}.yaml")
            # record once: the emulator answers through an in-process transport that vcrpy patches
            provider = ScriptedProvider(turns, seed="bench")
            with vcr.VCR(record_mode="all", match_on=["method", "path"]).use_cassette(cassette):
                agent.model = OpenAIResponses(id="gpt-5.2", api_key="sk-bench", http_client=provider.http_client(), max_retries=0)
                result = agent.run(scenario.input, stream=stream)
                list(result) if stream else result
            # then replay it with a fresh model (and SDK client) per run, as a test would
            player = vcr.VCR(record_mode="none", match_on=["method", "path"])

            def replayed() -> object:
                with player.use_cassette(cassette):
                    agent.model = OpenAIResponses(id="gpt-5.2", api_key="sk-bench", max_retries=0)
                    result = agent.run(scenario.input, stream=stream)
                    return list(result) if stream else result

            mode = "stream" if stream else "plain"
            results.append(summary(f"2-round agentic RAG, cassette replay ({mode})", timed(replayed, args.runs)))
            results.append(summary(f"2-round agentic RAG, in-process emulator ({mode})", timed(emulated(stream), args.runs)))
        print("\n".join(results))


if __name__ == "__main__":
    main()
