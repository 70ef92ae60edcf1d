"""A throwaway user project for meta-tests of the golden harness (run through pytester)."""

from __future__ import annotations

import shlex
import shutil
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

TOOLS = '''
def lookup(term: str) -> str:
    """Look a term up in the pantry list."""
    return "fish sauce, palm sugar, tamarind"
'''

CASES = {
    "with_markdown": """
        id: with_markdown
        agent: {markdown: true, instructions: [Be brief.]}
        knowledge: {corpus: thai_recipes}
        input: How do I make pad thai?
        emulate:
          - tool_calls: [{name: search_knowledge_base, arguments: {query: pad thai}}]
          - text: Soak the noodles.
    """,
    "with_tool": """
        id: with_tool
        agent: {tools: ["pantry_tools:lookup"]}
        input: What is in the pantry?
        emulate:
          - tool_calls: [{name: lookup, arguments: {term: pantry}}]
          - text: Fish sauce and palm sugar.
    """,
}


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A user project: two cases, a corpus, a tool module, the two-line test file."""
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\npythonpath = .\n")
    (pytester.path / "fixtures" / "corpora").mkdir(parents=True)
    shutil.copy(ROOT / "fixtures" / "corpora" / "thai_recipes.yaml", pytester.path / "fixtures" / "corpora")
    goldens = pytester.path / "fixtures" / "goldens"
    goldens.mkdir()
    for name, body in CASES.items():
        (goldens / f"{name}.yaml").write_text(textwrap.dedent(body))
    (pytester.path / "pantry_tools.py").write_text(TOOLS)
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "test_goldens.py").write_text(
        "def test_golden_case(golden_case, golden_harness):\n    golden_harness.check(golden_case)\n"
    )
    return pytester


def run_hint(project: pytest.Pytester, result: pytest.RunResult, lead: str) -> pytest.RunResult:
    """Run the command a failure message printed after ``lead``, as printed; it must end green."""
    line = next(line for line in result.stdout.lines if lead in line)
    command = shlex.split(line.split(lead, 1)[1].split(" (set the provider")[0].split(", then review")[0])
    assert command[0] == "pytest", line
    fixed = project.runpytest(*command[1:])
    assert fixed.ret == 0, fixed.stdout.str()
    return fixed


def record(project: pytest.Pytester, *extra: str) -> pytest.RunResult:
    result = project.runpytest("evals", "--record-mode=once", "--emulator", "--update-goldens", *extra)
    result.assert_outcomes(passed=len(CASES))
    return result


