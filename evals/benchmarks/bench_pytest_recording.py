"""Golden replay against pytest-recording: one program, the same interactions (run by hand).

    python -m evals.benchmarks.bench_pytest_recording [--cases 100,1000] [--runs 5] [--warm 1] [--code OLD,.]

What a user would otherwise pick for the same job is the program's test under pytest-recording
(``@pytest.mark.vcr``, ``--block-network``) asserting its answer. The program is the agent of
``rag-core init``'s example (an ``Agent`` searching the example corpus, a tool call then the
answer: two requests). For each size N, two projects replay it N times:

* the harness's: the ``rag-core init`` project, its example recorded once against the emulator,
  with N-1 copies of it (``golden_project.py``: N golden cases, each with its own cassette and
  golden);
* pytest-recording's: one test parametrized N times that builds the same agent, runs it and asserts
  its answer holds ``tamarind``, each test with its own cassette: the harness's recording written
  in vcrpy's own YAML format (pytest-recording matches a request by method and URI, and plays the
  interactions in order).

CPU per extra case is the whole pytest process at N cases less the same at one, over N-1: from the
median of ``--runs`` fresh processes each, and from the best (a busy machine adds time, never
removes it); the sessions take turns, so both tools see the same machine. pytest-recording's sessions run without rag-core's
plugins; every other plugin installed loads in both. ``--code`` names source trees whose
``rag_core`` the sessions import (the harness's, and the agent the pytest-recording tests run).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

import vcr.serializers.yamlserializer

from evals.benchmarks.golden_project import EXAMPLE, Session, cpu_in_turns, project, remove
from rag_core.evals.recording import cassette_format

PEER_OPTIONS = ["--block-network", "-p", "no:rag_core", "-p", "no:rag_core_retrieval"]

# the agent the example case describes (golden/build.py builds it from the case file), written out
PEER_TEST = '''\
import os
from pathlib import Path

import pytest
import yaml

from rag_core import Agent, Document, Knowledge
from rag_core.models import OpenAIResponses

os.environ.setdefault("OPENAI_API_KEY", "sk-replay")  # replayed: any key
CORPUS = yaml.safe_load((Path(__file__).parent / "example.yaml").read_text())
CASES = [f"copy_{{number:05d}}" for number in range({cases})]


def make_agent():
    knowledge = Knowledge()
    knowledge.insert(documents=[Document(content=e["content"], meta_data=dict(e.get("meta_data") or {{}}),
                                         name=e.get("name")) for e in CORPUS])
    return Agent(model=OpenAIResponses(id="gpt-5.2", max_retries=0), knowledge=knowledge, search_knowledge=True,
                 markdown=True, instructions=["Include sources in your response."])


@pytest.mark.vcr
@pytest.mark.parametrize("case", CASES)
def test_program(case):
    assert "tamarind" in make_agent().run("How do I make pad thai?").content
'''


def peer_project(folder: Path, harness: Path, cases: int) -> Path:
    """pytest-recording's project of ``cases`` tests, replaying what the harness project recorded."""
    tests = folder / "tests"
    (tests / "cassettes" / "test_program").mkdir(parents=True)
    (folder / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    (tests / "example.yaml").write_text((harness / "fixtures" / "corpora" / "example.yaml").read_text())
    (tests / "test_program.py").write_text(PEER_TEST.format(cases=cases))
    recorded = cassette_format.deserialize((harness / "cassettes" / f"{EXAMPLE}.yaml").read_text())
    text = vcr.serializers.yamlserializer.serialize({"interactions": recorded["interactions"], "version": 1})
    for number in range(cases):  # each its own text, as each case's cassette is
        case = f"copy_{number:05d}"
        (tests / "cassettes" / "test_program" / f"test_program[{case}].yaml").write_text(f"# {case}\n{text}")
    return folder


def compare(scratch: Path, sizes: list[int], runs: int, codes: list[Path], warm: int = 1) -> None:
    one = project(scratch / "harness-1", 0, recorded=True)
    sessions: dict[str, Session] = {}
    for code in codes:
        sessions[f"harness 1 {code}"] = (one, ["evals"], True, code)
    sessions["peer 1"] = (peer_project(scratch / "peer-1", one, 1), PEER_OPTIONS, False, codes[-1])
    for size in sizes:
        many = project(scratch / f"harness-{size}", size - 1, recorded=True)
        for code in codes:
            sessions[f"harness {size} {code}"] = (many, ["evals"], True, code)
        sessions[f"peer {size}"] = (peer_project(scratch / f"peer-{size}", one, size), PEER_OPTIONS, False, codes[-1])
    cpu = cpu_in_turns(sessions, runs, warm)
    medians = {name: statistics.median(times) for name, times in cpu.items()}
    best = {name: min(times) for name, times in cpu.items()}

    def per_case(of: dict[str, float], tool: str, size: int, code: Path | None = None) -> float:
        suffix = f" {code}" if code is not None else ""
        return (of[f"{tool} {size}{suffix}"] - of[f"{tool} 1{suffix}"]) / (size - 1) * 1000

    print(f"CPU per extra case, ms: the median of {runs} runs (the best); the whole process at one case: "
          f"pytest-recording {medians['peer 1']:.2f} s, "
          + ", ".join(f"harness [{code}] {medians[f'harness 1 {code}']:.2f} s" for code in codes))
    for size in sizes:
        peer, peer_best = per_case(medians, "peer", size), per_case(best, "peer", size)
        harness = ", ".join(
            f"[{code}] {per_case(medians, 'harness', size, code):.2f} ({per_case(best, 'harness', size, code):.2f}), "
            f"{per_case(medians, 'harness', size, code) / peer:.2f}× the peer" for code in codes)
        print(f"  {size} cases: pytest-recording {peer:.2f} ({peer_best:.2f}); harness {harness}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", default="100,1000", help="comma-separated sizes N (each above 1)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--warm", type=int, default=1, help="unmeasured rounds first, to warm the file cache (0: none)")
    parser.add_argument("--code", default=".", help="comma-separated source trees to import rag_core from (default .)")
    args = parser.parse_args()
    sizes = [int(size) for size in args.cases.split(",")]
    if any(size < 2 for size in sizes) or args.runs < 1:
        parser.error("--cases: sizes above 1; --runs: at least 1")
    scratch = Path(tempfile.mkdtemp(prefix="rag-core-bench-pytest-recording-"))
    try:
        compare(scratch, sizes, args.runs, [Path(code) for code in args.code.split(",")], args.warm)
    finally:
        remove(scratch)


if __name__ == "__main__":
    main()
