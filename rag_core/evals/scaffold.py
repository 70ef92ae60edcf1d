"""What ``rag-core init`` writes into a project: one example golden case and what runs it.

Files that already exist are never overwritten; an existing pytest configuration is left
alone, and the settings to add to it are printed instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rag_core.evals.atomic import write_checked

EXAMPLE_CASE = """\
# yaml-language-server: $schema=case.schema.json
# A golden case, hand-written: what the agent is, what it is asked, what the emulator answers while recording,
# and optional checks. Beside it, example_agentic_rag.golden.yaml is machine-written: the exact
# system prompt, tools and request bodies the agent sends. Review that file like code.
id: example_agentic_rag
model: {api: openai-responses, id: gpt-5.2}    # or openai-chat, gemini
agent:                                          # Agent(...) options, or "package.module:factory"
  search_knowledge: true
  markdown: true
  instructions: [Include sources in your response.]
knowledge: {corpus: example}                    # fixtures/corpora/example.yaml
input: How do I make pad thai?
emulate:                                        # what the emulator answers, one item per model call
  - tool_calls: [{name: search_knowledge_base, arguments: {query: pad thai}}]
  - text: Soak the rice noodles, then fry them with tamarind and fish sauce (source pad_thai).
expect:
  output: {contains: tamarind}
"""

EXAMPLE_CORPUS = """\
# The documents of the example case's knowledge base.
- name: pad_thai
  content: Pad thai. Soak rice noodles in warm water, fry garlic and tofu, add the noodles with
    tamarind paste, fish sauce and palm sugar, then toss with bean sprouts and peanuts.
  meta_data: {source: recipes.md}
- name: green_curry
  content: Green curry. Fry green curry paste in coconut cream until fragrant, add chicken,
    coconut milk, Thai eggplant and fish sauce, and finish with Thai basil.
  meta_data: {source: recipes.md}
"""

TEST_MODULE = '''\
"""Every golden case under fixtures/goldens/: rag-core's pytest plugin makes each one a test."""


def test_golden_case(golden_case, golden_harness):
    golden_harness.check(golden_case)
'''

PYTEST_SETTINGS = """\
testpaths = evals
# rag-core: where golden cases, cassettes and corpora live (these are the defaults)
rag_core_cases = fixtures/goldens
rag_core_cassettes = cassettes
rag_core_fixtures = fixtures
"""

CI_WORKFLOW = """\
# Replays every golden case from its cassette: no provider keys, no network.
name: rag-core evals
on: [push, pull_request]
jobs:
  evals:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with: {python-version: "3.12"}
      - run: pip install "rag-core[harness,agent]"
      - run: pytest evals/ --golden-report=golden-report.md
      - if: always()
        run: cat golden-report.md >> "$GITHUB_STEP_SUMMARY" || true
"""

NEXT_STEPS = """\
Next, in {folder}:
  pytest evals/ --record-mode=once --emulator   # record the example against the built-in emulator; writes its golden
  pytest evals/                                 # replay, as CI does: no keys, no network"""


@dataclass
class InitResult:
    written: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # existed already; left as they were
    notes: list[str] = field(default_factory=list)


def _case_schema() -> str:
    import json

    from rag_core.evals.harness.case import json_schema

    return json.dumps(json_schema(), indent=2) + "\n"


def _pytest_configured(root: Path) -> str | None:
    """The file that already holds this project's pytest configuration, if any."""
    if (root / "pytest.ini").exists():
        return "pytest.ini"
    for name, marker in (("pyproject.toml", "[tool.pytest.ini_options]"), ("tox.ini", "[pytest]"),
                         ("setup.cfg", "[tool:pytest]")):
        path = root / name
        if path.exists() and marker in path.read_text(encoding="utf-8", errors="replace"):
            return name
    return None


def init_project(root: Path) -> InitResult:
    """Scaffold ``root`` (created if missing); raises NotADirectoryError if it is a file."""
    if root.exists() and not root.is_dir():
        raise NotADirectoryError(f"{root} is a file, not a folder")
    files = {
        "fixtures/goldens/example_agentic_rag.yaml": EXAMPLE_CASE,
        "fixtures/goldens/case.schema.json": _case_schema(),
        "fixtures/corpora/example.yaml": EXAMPLE_CORPUS,
        "evals/__init__.py": "",
        "evals/test_goldens.py": TEST_MODULE,
        ".github/workflows/rag-core-evals.yml": CI_WORKFLOW,
    }
    configured = _pytest_configured(root)
    result = InitResult()
    if configured is None:
        files["pytest.ini"] = "[pytest]\n" + PYTEST_SETTINGS
    else:
        result.notes.append(f"{configured} already configures pytest; add these settings to it if they differ:\n"
                            + "".join(f"    {line}\n" for line in PYTEST_SETTINGS.splitlines()))
    for relative, text in files.items():
        path = root / relative
        if path.exists():
            result.kept.append(relative)
        else:
            write_checked(path, text)
            result.written.append(relative)
    (root / "cassettes").mkdir(parents=True, exist_ok=True)  # recordings land here
    return result
