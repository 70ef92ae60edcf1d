"""Benchmark of the golden harness (run by hand, not by pytest).

    python -m evals.benchmarks.bench_harness [--runs 100]

* per-case cost of ``run_case`` for a replayed two-round case (cassette load, agent run
  through the SDK, observation, golden comparison), without pytest around it;
* the share of that which is the agent run itself (cassette replay, no harness);
* the wall time of ``pytest evals/test_goldens.py`` (all golden cases), in a fresh process;
* with ``--record``: recording a case against the emulator (``--record-mode=rewrite`` and ``all``
  with ``--emulator``, or the modes ``--record-modes`` names; ``run_case`` in-process) against
  replaying the same case, in turn, CPU time: the ``rag-core init`` example, in a throwaway project
  (``golden_project.py``);
* with ``--server``: one request to ``rag-core emulator serve`` through the openai SDK on a
  kept-alive connection (the server is for recording by hand and for tests, not the harness).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from rag_core.evals.golden.case_files import parse_case_file
from rag_core.evals.golden.runner import Settings, run_case

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


def cpu_ms(fn) -> float:
    started = time.process_time()
    fn()
    return (time.process_time() - started) * 1000


def record_against_replay(runs: int, modes: list[str]) -> None:
    """Recording the init example against the emulator in each of ``modes``, and replaying it, in
    turn: CPU ms each. Each run reads its cassette as a session's only run of the case does: the
    parse a process keeps of a cassette text it read before is emptied first (in a session, each
    case's cassette is read once; here the same case runs again and again)."""
    import tempfile

    from evals.benchmarks.golden_project import EXAMPLE, project, remove
    from rag_core.evals.recording import cassette_format

    folder = project(Path(tempfile.mkdtemp(prefix="rag-core-bench-record-")) / "project", 0, recorded=True)
    try:
        [case] = parse_case_file(folder / "fixtures" / "goldens" / f"{EXAMPLE}.yaml")
        replay = Settings(cassettes_dir=folder / "cassettes", fixtures_dir=folder / "fixtures")
        records = {mode: Settings(cassettes_dir=folder / "cassettes", fixtures_dir=folder / "fixtures",
                                  record_mode=mode, emulator=True) for mode in modes}

        def played(settings: Settings) -> float:
            cassette_format._parse.cache_clear()
            started = time.process_time()
            assert not run_case(case, settings).failures
            return (time.process_time() - started) * 1000

        for settings in (replay, *records.values()):  # warm: imports, the corpus's index, the SDK's client
            played(settings)
        times: dict[str, list[float]] = {name: [] for name in ("replay", *modes)}
        for _ in range(runs):
            times["replay"].append(played(replay))
            for mode, settings in records.items():
                times[mode].append(played(settings))
        replayed = statistics.median(times["replay"])
        print(f"replay the init example: median {replayed:.2f} ms CPU (median of {runs})")
        for mode in modes:
            ratio = statistics.median(r / p for r, p in zip(times[mode], times["replay"]))
            print(f"record it against the emulator, --record-mode={mode}: median {statistics.median(times[mode]):.2f} "
                  f"ms CPU; ratio to the replay beside it {ratio:.2f}")
    finally:
        remove(folder.parent)


def server_request(runs: int) -> None:
    """Requests to the emulator's HTTP server through the openai SDK, one kept-alive connection."""
    import openai

    from rag_core.evals.emulator.script import ScriptedTurn
    from rag_core.evals.emulator.server import EmulatorServer

    server = EmulatorServer()
    try:
        server.load([], seed="bench", then=ScriptedTurn(text="Soak the noodles."))
        client = openai.OpenAI(api_key="sk-bench", base_url=f"{server.url}/v1", max_retries=0)

        def ask() -> None:
            client.chat.completions.create(model="gpt-5.2", messages=[{"role": "user", "content": "pad thai?"}])

        p50, p95 = median_ms(ask, runs)
        print(f"rag-core emulator serve, one request through the openai SDK (kept-alive): median {p50:.2f} ms, "
              f"p95 {p95:.2f} ms")
    finally:
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--pytest-runs", type=int, default=3, help="how many times to time `pytest evals/`")
    parser.add_argument("--record", action="store_true", help="also: recording against replaying the init example")
    parser.add_argument("--record-modes", default="rewrite,all", help="with --record: the modes recorded in (comma-separated)")
    parser.add_argument("--server", action="store_true", help="also: a request to `rag-core emulator serve`")
    args = parser.parse_args()
    if args.record:
        record_against_replay(args.runs, args.record_modes.split(","))
    if args.server:
        server_request(args.runs)
    settings = Settings(cassettes_dir=ROOT / "cassettes",
                        fixtures_dir=ROOT / "fixtures")
    [sync, stream] = parse_case_file(ROOT / "fixtures/goldens/agentic_rag.yaml")
    for case in (sync, stream):
        assert not run_case(case, settings).failures
        p50, p95 = median_ms(lambda: run_case(case, settings), args.runs)
        print(f"run_case({case.id}): median {p50:.2f} ms, p95 {p95:.2f} ms")

    import vcr

    from rag_core.evals.golden.build import build_agent, build_model

    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")  # the model reads its key where a program's does
    model = build_model(sync.model)
    agent = build_agent(sync, model, settings.fixtures_dir)
    player = vcr.VCR(record_mode="none", match_on=["method", "path"])
    from rag_core.evals.recording import cassette_format

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
