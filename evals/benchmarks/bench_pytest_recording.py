"""Golden replay against pytest-recording: one program, the same interactions (run by hand).

    python -m evals.benchmarks.bench_pytest_recording [--program agent|sdk|stream] [--cases 100,1000] [--runs 5]
        [--warm 1] [--code OLD,.] [--phases]

What a user would otherwise pick for the same job is the program's test under pytest-recording
(``@pytest.mark.vcr``, ``--block-network``) asserting its answer. The program (``--program``):

* ``agent``: the agent of ``rag-core init``'s example (an ``Agent`` searching the example corpus, a
  tool call then the answer: two requests to the Responses API);
* ``sdk``: a plain openai SDK program, a Chat Completions tool loop of two requests;
* ``stream``: the same loop streamed, its answer yielded as it comes.

For each size N, two projects replay it N times:

* the harness's: the ``rag-core init`` project, the program's case recorded once against the
  emulator, with N-1 copies of it (``golden_project.py``: N golden cases, each with its own cassette
  and golden);
* pytest-recording's: one test parametrized N times that runs the same program and asserts its
  answer holds ``tamarind``, each test with its own cassette: the harness's recording written in
  vcrpy's own YAML format (pytest-recording matches a request by method and URI, and plays the
  interactions in order).

CPU per extra case is the whole pytest process at N cases less the same at one, over N-1: from the
median of ``--runs`` fresh processes each, and from the best (a busy machine adds time, never
removes it); the sessions take turns, so both tools see the same machine. pytest-recording's sessions run without rag-core's
plugins; every other plugin installed loads in both. ``--code`` names source trees whose
``rag_core`` the sessions import (the harness's, and the agent the pytest-recording tests run).
With ``--phases``, one more session of each at the largest size runs with ``phase_times.py``,
which prints where its CPU went, phase by phase.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import vcr.serializers.yamlserializer

from evals.benchmarks.golden_project import EXAMPLE, PYTEST, Session, cpu_in_turns, project, remove
from rag_core.evals.recording import cassette_format

PEER_OPTIONS = ["--block-network", "-p", "no:rag_core", "-p", "no:rag_core_retrieval"]

# the agent the example case describes (golden/build.py builds it from the case file), written out
AGENT_TEST = '''\
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

# a program written against the openai SDK alone, as its docs write a tool loop
PROGRAM = '''\
import json

from openai import OpenAI

client = OpenAI(max_retries=0)
INSTRUCTIONS = "You are a Thai cook. Look recipes up before you answer."
TOOLS = [{"type": "function", "function": {
    "name": "lookup_recipe", "description": "The recipe of a dish.",
    "parameters": {"type": "object", "properties": {"dish": {"type": "string"}}, "required": ["dish"]}}}]


def lookup_recipe(dish):
    return f"{dish}: rice noodles fried with tamarind, fish sauce and palm sugar."


def answer(question):
    messages = [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": question}]
    first = client.chat.completions.create(model="gpt-5.2", messages=messages, tools=TOOLS).choices[0].message
    messages.append(first.model_dump(exclude_none=True))
    for call in first.tool_calls or []:
        result = lookup_recipe(**json.loads(call.function.arguments))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return client.chat.completions.create(model="gpt-5.2", messages=messages, tools=TOOLS).choices[0].message.content


def stream(question):
    messages = [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": question}]
    calls = {}
    for chunk in client.chat.completions.create(model="gpt-5.2", messages=messages, tools=TOOLS, stream=True):
        for delta in chunk.choices[0].delta.tool_calls or [] if chunk.choices else []:
            call = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
            call["id"] += delta.id or ""
            call["name"] += delta.function.name or ""
            call["arguments"] += delta.function.arguments or ""
    messages.append({"role": "assistant", "tool_calls": [
        {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
        for c in calls.values()]})
    for c in calls.values():
        messages.append({"role": "tool", "tool_call_id": c["id"], "content": lookup_recipe(**json.loads(c["arguments"]))})
    for chunk in client.chat.completions.create(model="gpt-5.2", messages=messages, tools=TOOLS, stream=True):
        if chunk.choices and chunk.choices[0].delta.content:
            yield chunk.choices[0].delta.content
'''

PROGRAM_CASE = '''\
id: example_agentic_rag
target: programs:{function}
input: How do I make pad thai?
emulate:
  - tool_calls: [{{name: lookup_recipe, arguments: {{dish: pad thai}}}}]
  - text: Soak rice noodles, then fry them with tamarind, fish sauce and palm sugar.
expect:
  output: {{contains: tamarind}}
'''

PROGRAM_TEST = '''\
import os

import pytest

os.environ.setdefault("OPENAI_API_KEY", "sk-replay")  # replayed: any key
from programs import {function}  # noqa: E402 (its client is built at import, as the program builds it)

CASES = [f"copy_{{{{number:05d}}}}" for number in range({{cases}})]


@pytest.mark.vcr
@pytest.mark.parametrize("case", CASES)
def test_program(case):
    assert "tamarind" in {answer}
'''


@dataclass(frozen=True)
class Program:
    """What both projects run: the harness's case (None: the init example as it is), the program's
    module (beside the case, and beside the peer's test), and the peer's test."""
    case: str | None
    module: str | None
    test: str


PROGRAMS = {
    "agent": Program(None, None, AGENT_TEST),
    "sdk": Program(PROGRAM_CASE.format(function="answer"), PROGRAM,
                   PROGRAM_TEST.format(function="answer", answer='answer("How do I make pad thai?")')),
    "stream": Program(PROGRAM_CASE.format(function="stream"), PROGRAM,
                      PROGRAM_TEST.format(function="stream", answer='"".join(stream("How do I make pad thai?"))')),
}


def harness_project(folder: Path, program: Program, copies: int) -> Path:
    """The init project with ``program``'s case recorded against the emulator, and ``copies`` copies of it."""
    return project(folder, copies, recorded=True, example=program.case,
                   files={"programs.py": program.module} if program.module else None)


def peer_project(folder: Path, harness: Path, program: Program, cases: int) -> Path:
    """pytest-recording's project of ``cases`` tests, replaying what the harness project recorded."""
    tests = folder / "tests"
    (tests / "cassettes" / "test_program").mkdir(parents=True)
    (folder / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    (tests / "example.yaml").write_text((harness / "fixtures" / "corpora" / "example.yaml").read_text())
    if program.module:
        (folder / "programs.py").write_text(program.module)
    (tests / "test_program.py").write_text(program.test.format(cases=cases))
    recorded = cassette_format.deserialize((harness / "cassettes" / f"{EXAMPLE}.yaml").read_text())
    text = vcr.serializers.yamlserializer.serialize({"interactions": recorded["interactions"], "version": 1})
    for number in range(cases):  # each its own text, as each case's cassette is
        case = f"copy_{number:05d}"
        (tests / "cassettes" / "test_program" / f"test_program[{case}].yaml").write_text(f"# {case}\n{text}")
    return folder


def compare(scratch: Path, sizes: list[int], runs: int, codes: list[Path], warm: int = 1,
            program: Program = PROGRAMS["agent"], with_phases: bool = False) -> None:
    one = harness_project(scratch / "harness-1", program, 0)
    sessions: dict[str, Session] = {}
    for code in codes:
        sessions[f"harness 1 {code}"] = (one, ["evals"], True, code)
    sessions["peer 1"] = (peer_project(scratch / "peer-1", one, program, 1), PEER_OPTIONS, False, codes[-1])
    for size in sizes:
        many = harness_project(scratch / f"harness-{size}", program, size - 1)
        for code in codes:
            sessions[f"harness {size} {code}"] = (many, ["evals"], True, code)
        sessions[f"peer {size}"] = (peer_project(scratch / f"peer-{size}", one, program, size), PEER_OPTIONS, False,
                                    codes[-1])
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
    if with_phases:  # one more session of each tool at the largest size, its CPU phase by phase
        size = sizes[-1]
        for name in [f"peer {size}", *(f"harness {size} {code}" for code in codes)]:
            print(f"{name}: " + "\n".join(phases(sessions[name])))


def phases(session: Session) -> list[str]:
    """The lines ``phase_times`` prints for one more run of the session: where its CPU went. The
    plugin is copied into the project's folder (the harness's project has an ``evals`` package of
    its own, so this repository's is not importable there)."""
    folder, args, plugins, code = session
    (folder / "bench_phase_times.py").write_text((Path(__file__).parent / "phase_times.py").read_text())
    command = PYTEST + args + ([] if plugins else ["-p", "no:rag_core", "-p", "no:rag_core_retrieval"]) + [
        "-p", "bench_phase_times"]
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(code.resolve()), *filter(None, [env.get("PYTHONPATH")])])
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=env)
    if done.returncode != 0 or "phase times" not in done.stdout:
        raise SystemExit(f"{' '.join(command)} in {folder} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done.stdout[done.stdout.index("phase times"):].splitlines()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--program", choices=sorted(PROGRAMS), default="agent")
    parser.add_argument("--cases", default="100,1000", help="comma-separated sizes N (each above 1)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--warm", type=int, default=1, help="unmeasured rounds first, to warm the file cache (0: none)")
    parser.add_argument("--phases", action="store_true",
                        help="then one more session of each at the largest size, timed phase by phase (phase_times.py)")
    parser.add_argument("--code", default=".", help="comma-separated source trees to import rag_core from (default .)")
    args = parser.parse_args()
    sizes = [int(size) for size in args.cases.split(",")]
    if any(size < 2 for size in sizes) or args.runs < 1:
        parser.error("--cases: sizes above 1; --runs: at least 1")
    scratch = Path(tempfile.mkdtemp(prefix="rag-core-bench-pytest-recording-"))
    try:
        compare(scratch, sizes, args.runs, [Path(code) for code in args.code.split(",")], args.warm,
                PROGRAMS[args.program], args.phases)
    finally:
        remove(scratch)


if __name__ == "__main__":
    main()
