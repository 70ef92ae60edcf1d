"""Meta-tests: the golden harness, run as a user runs it (pytester), does what the README promises."""

from __future__ import annotations


import pytest

pytest_plugins = ["pytester"]

# pytester's in-process runs forget modules first imported inside them, and extension
# modules (numpy) cannot be imported twice: import them here, before any run.
import bm25s  # noqa: E402,F401
import numpy  # noqa: E402,F401
import openai  # noqa: E402,F401
import vcr  # noqa: E402,F401

from tests.golden_project import CASES, ROOT, TOOLS, project, record, run_hint  # noqa: E402,F401  (project: a fixture)


def test_record_then_replay(project):
    record(project)
    assert sorted(p.name for p in (project.path / "cassettes").iterdir()) == ["with_markdown.yaml", "with_tool.yaml"]
    cassette = (project.path / "cassettes" / "with_tool.yaml").read_text()
    assert "target: rag-core provider emulator" in cassette and "sdk: openai" in cassette
    assert "rag-core-replay-key" not in cassette and "authorization" not in cassette.lower()
    result = project.runpytest("evals", "--golden-report=report.md")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*2 cases, 0 failed, 0 new goldens, 0 goldens updated, 0 recorded, 0 stale cassettes*"])
    assert "| 2 | 0 | 0 | 0 | 0 |" in (project.path / "report.md").read_text()


def test_a_prompt_edit_fails_exactly_the_affected_case_and_update_goldens_accepts_it(project):
    record(project)
    case = project.path / "fixtures" / "goldens" / "with_markdown.yaml"
    case.write_text(case.read_text().replace("Be brief.", "Be very brief."))
    result = project.runpytest("evals")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "--- fixtures/goldens/with_markdown.golden.yaml:system_prompt (expected)",
        "*-  Be brief.",
        "*+  Be very brief.",
        "*FAILED evals/test_goldens.py::test_golden_case?with_markdown?*",
    ])
    assert "stale cassette: with_markdown" in result.stdout.str()
    project.runpytest("evals", "--update-goldens").assert_outcomes(passed=2)
    project.runpytest("evals", "--no-strict-cassettes").assert_outcomes(passed=2)
    strict = project.runpytest("evals", "--strict-cassettes")
    strict.assert_outcomes(passed=1, failed=1)
    strict.stdout.fnmatch_lines(["*stale cassette cassettes/with_markdown.yaml (request #1, /v1/responses, differs*"])
    project.runpytest("evals", "--record-mode=rewrite", "--emulator", "--update-goldens", "-k", "with_markdown").assert_outcomes(passed=1)
    project.runpytest("evals", "--strict-cassettes").assert_outcomes(passed=2)


def test_a_tool_docstring_edit_fails_only_the_case_using_the_tool(project):
    record(project)
    tools = project.path / "pantry_tools.py"
    tools.write_text(TOOLS.replace("Look a term up in the pantry list.", "Find a term in the pantry."))
    result = project.runpytest("evals")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*with_tool.golden.yaml:tools (expected)*", "*-  description: Look a term up*"])


def test_an_unrecorded_request_fails_under_replay_with_how_to_record(project):
    record(project)
    cassette = project.path / "cassettes" / "with_tool.yaml"
    text = cassette.read_text()
    cassette.write_text(text[: text.index("- request:", text.index("- request:") + 1)] + "version: 1\n")
    result = project.runpytest("evals", "-k", "with_tool")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*with_tool: the agent sent POST /v1/responses (request #2), which cassettes/with_tool.yaml "
                                 "does not hold*"])
    assert "current record mode" not in result.stdout.str()  # vcrpy's own advice contradicts ours
    run_hint(project, result, "Record it again: ")
    project.runpytest("evals").assert_outcomes(passed=2)


def test_unused_recorded_interactions_fail_the_case(project):
    record(project)
    case = project.path / "fixtures" / "goldens" / "with_tool.yaml"
    case.write_text(case.read_text().replace("agent: {tools: [\"pantry_tools:lookup\"]}", "agent: {tools: [\"pantry_tools:lookup\"], tool_call_limit: 0, max_rounds: 1}"))
    result = project.runpytest("evals", "-k", "with_tool")
    result.assert_outcomes(failed=1)


def test_a_missing_cassette_with_no_recording_is_a_clear_failure(project):
    result = project.runpytest("evals", "-k", "with_tool")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*with_tool: not recorded yet (no cassette cassettes/with_tool.yaml). Record it: pytest*--emulator"])
    run_hint(project, result, "Record it: ")  # records the case and writes its first golden
    project.runpytest("evals", "-k", "with_tool").assert_outcomes(passed=1, deselected=1)


def test_a_secret_is_refused_and_no_cassette_written(project):
    case = project.path / "fixtures" / "goldens" / "with_tool.yaml"
    case.write_text(case.read_text().replace("input: What is in the pantry?",
                                             "input: 'My key is sk-abcdefghijklmnopqrstuvwxyz0123'"))
    result = project.runpytest("evals", "--record-mode=once", "--emulator", "-k", "with_tool")
    result.assert_outcomes(errors=0, failed=1)
    result.stdout.fnmatch_lines([
        "*cassettes/with_tool.yaml: refusing to write the recording: it still contains what looks like a credential:",
        "*interactions?0?.request.body.json.input?0?.content: an OpenAI-style key*",
    ])
    assert not (project.path / "cassettes" / "with_tool.yaml").exists()
    assert not (project.path / "fixtures" / "goldens" / "with_tool.golden.yaml").exists()


def test_recording_without_keys_or_emulator_says_how(project, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = project.runpytest("evals", "--record-mode=once", "-k", "with_tool")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*set OPENAI_API_KEY to record against the live API, or pass --emulator*"])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("id: bad\ninput: hi\nagnet: {}\n", "fixtures/goldens/broken.yaml:3: unknown key 'agnet' (did you mean 'agent'?)"),
        ("id: bad\ninput: [unclosed\n", "fixtures/goldens/broken.yaml:3: not valid YAML*"),
        ("id: bad\ninput: hi\nturns: [a]\n", "*broken.yaml: give exactly one of input or turns*"),
        ("id: bad\ninput: hi\nemulate:\n  - {txt: hi}\n", "*broken.yaml:4: unknown key 'txt' in `emulate[[]0]` (did you mean 'text'?)*"),
        ("id: bad\ninput: hi\nagent: {no_such_option: 1}\n", "*unknown key 'no_such_option' in `agent`*"),
        ("- just\n- a list\n", "*broken.yaml: a case file must be a mapping*"),
        # requires: [""] ended in a raw traceback from importlib
        ("id: bad\ninput: hi\nrequires: ['']\n",
         "*broken.yaml:3: requires: '' is neither a module name (llama_index.core) nor a distribution*"),
        # stream: [] made the case vanish from the run
        ("id: bad\ninput: hi\nstream: []\n", "*broken.yaml: stream: [] would run no variant*"),
        # a bad status: was reported as "Extra inputs are not permitted" (the turn's error, not the error reply's)
        ("id: bad\ninput: hi\nemulate:\n  - {status: teapot, message: x}\n",
         "fixtures/goldens/broken.yaml:4: `emulate[[]0].status` must be a whole number, got 'teapot'*"),
        # an expect: written twice: YAML kept the last, and a check that would have failed vanished
        ("id: bad\ninput: hi\nexpect: {output: {contains: x}}\nexpect: {}\n",
         "fixtures/goldens/broken.yaml:4: not valid YAML: the key 'expect' is written twice in one mapping (first on "
         "line 3)*"),
        # 500 nested lists: an INTERNALERROR RecursionError, and no case ran
        ("id: bad\ninput: hi\nemulate: " + "[" * 500 + "]" * 500 + "\n",
         "*broken.yaml:3: not valid YAML: it is nested more deeply than can be read"),
        # a 709-byte alias bomb took 20 s and 3.4 GB
        ("".join(f"{a}: &{a} [" + ", ".join([f"*{p}"] * 9 if p else ["x"] * 9) + "]\n"
                 for p, a in zip([None, *"abcdefgh"], "abcdefghi")) + "id: bad\ninput: hi\n",
         "*broken.yaml:1: not valid YAML: its aliases expand to more than 1,000,000 nodes (a YAML alias bomb?)"),
    ],
)
def test_malformed_case_files_give_one_clear_error_each(project, content, message):
    (project.path / "fixtures" / "goldens" / "broken.yaml").write_text(content)
    result = project.runpytest("evals", "--record-mode=once", "--emulator", "--update-goldens")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([message])


@pytest.mark.parametrize("select", [("-k", "with_tool"), ("--case", "with_tool")])
def test_an_unparseable_cassette_names_its_line_and_the_command_that_records_it_again(project, select):
    """A hand-edited cassette that is not YAML: the rewrite the message prints replaces it without
    reading it (it failed with the same message), and the golden is compared, not rewritten."""
    record(project)
    cassette = project.path / "cassettes" / "with_tool.yaml"
    golden = (project.path / "fixtures" / "goldens" / "with_tool.golden.yaml").read_bytes()
    lines = cassette.read_text().splitlines(keepends=True)
    lines[3] = lines[3].rstrip("\n") + " [oops\n"  # an edit by hand, inside the first request
    cassette.write_text("".join(lines))
    result = project.runpytest("evals", *select)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["with_tool: cassettes/with_tool.yaml:4:*: the cassette is not valid YAML (*); record "
                                 "it again: pytest 'evals/test_goldens.py::test_golden_case?with_tool?' "
                                 "--record-mode=rewrite --emulator"])
    run_hint(project, result, "record it again: ")
    from rag_core.evals.recording.cassette_format import read_cassette

    assert len(read_cassette(cassette)["interactions"]) == 2
    assert (project.path / "fixtures" / "goldens" / "with_tool.golden.yaml").read_bytes() == golden
    project.runpytest("evals", "--strict-cassettes").assert_outcomes(passed=2)


def test_record_mode_all_records_an_unparseable_cassette_afresh(project):
    record(project)
    cassette = project.path / "cassettes" / "with_tool.yaml"
    cassette.write_text("interactions: [oops\n")
    project.runpytest("evals", "-k", "with_tool", "--record-mode=all", "--emulator").assert_outcomes(
        passed=1, deselected=1)
    project.runpytest("evals", "--strict-cassettes").assert_outcomes(passed=2)


def test_xdist_with_update_goldens(project):
    record(project)
    for golden in (project.path / "fixtures" / "goldens").glob("*.golden.yaml"):
        golden.unlink()
    # a subprocess (xdist workers), without the hypothesis plugin each interpreter would load
    result = project.runpytest_subprocess("evals", "-n", "2", "--update-goldens", "-p", "no:hypothesispytest")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*2 cases, 0 failed, 2 new goldens*"])
    project.runpytest("evals").assert_outcomes(passed=2)  # the goldens the workers wrote replay


def test_the_published_case_schema_is_current():
    import json

    from rag_core.evals.golden.case import json_schema

    published = json.loads((ROOT / "fixtures" / "goldens" / "case.schema.json").read_text())
    assert published == json_schema(), "regenerate fixtures/goldens/case.schema.json from rag_core.evals.golden.case.json_schema()"


def test_nesting_is_bounded_the_same_whatever_the_recursion_limit():
    """Frameworks raise Python's recursion limit (the full suite imports several): a bound that
    rested on it let a file through in one process that another refused."""
    import sys

    from rag_core.evals.common.yaml_read import MAX_DEPTH, BoundsError, load_bounded

    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(100_000)
    try:
        with pytest.raises(BoundsError, match="nested more deeply than can be read"):
            load_bounded("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    finally:
        sys.setrecursionlimit(previous)
    assert load_bounded("[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)) is not None
