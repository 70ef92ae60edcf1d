"""One command accepts every intended change and leaves CI green (``--accept``), and one change is
reported once: in the terminal, the markdown summary and the HTML report alike.

README step 5 said ``pytest evals/ --update-goldens`` accepts a prompt edit: it rewrote the goldens
and left the cassettes stale, and the next ``CI=true`` replay failed. The one command that worked
was printed once per case, and the markdown summary wrapped it with its words in one code span
(``(fix: `record it again: pytest …`)``), so it could not be pasted. A one-sentence prompt edit
failed ``system_prompt``, ``requests`` and each stale request apart: every diff printed again in
pytest's short summary under CI, the edited line 20 times for two cases.
"""

from __future__ import annotations

import re
import shlex
import textwrap

import pytest

pytest_plugins = ["pytester"]

import bm25s  # noqa: E402,F401  (imported before pytester's in-process runs; see test_harness.py)
import numpy  # noqa: E402,F401
import openai  # noqa: E402,F401
import vcr  # noqa: E402,F401

from rag_core.evals.common.commands import spans  # noqa: E402
from rag_core.evals.common.failure import Failure  # noqa: E402
from rag_core.evals.golden.checks.same_change import grouped, leading  # noqa: E402
from tests.golden_project import TOOLS, project, record, run_hint  # noqa: E402,F401  (project: a fixture)

ACCEPT_ALL = "if every change shown is intended, accept them all ("
NODE = "evals/test_goldens.py::test_golden_case[{}]"


def _edit(project: pytest.Pytester) -> None:
    """A prompt edit in one case and a tool docstring edit in the other: both cassettes go stale."""
    case = project.path / "fixtures" / "goldens" / "with_markdown.yaml"
    case.write_text(case.read_text().replace("Be brief.", "Be very brief."))
    (project.path / "pantry_tools.py").write_text(TOOLS.replace("Look a term up in the pantry list.",
                                                                "Find a term in the pantry."))


def _files(project: pytest.Pytester) -> dict[str, bytes]:
    return {str(p.relative_to(project.path)): p.read_bytes()
            for folder in ("cassettes", "fixtures/goldens") for p in sorted((project.path / folder).iterdir())
            if p.is_file()}


def _accept_all(result: pytest.RunResult) -> list[str]:
    line = next(line for line in result.stdout.lines if ACCEPT_ALL in line)
    return shlex.split(line.split(ACCEPT_ALL, 1)[1].split("): ", 1)[1])


def _ci(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *args: str) -> pytest.RunResult:
    with monkeypatch.context() as ci:
        ci.setenv("CI", "true")
        return project.runpytest(*args)


def test_the_accept_command_the_summary_prints_records_the_stale_cassettes_and_ci_replays_green(project, monkeypatch):
    record(project)
    _edit(project)
    failed = _ci(project, monkeypatch, "evals")
    failed.assert_outcomes(failed=2)
    command = _accept_all(failed)
    assert command == ["pytest", NODE.format("with_markdown"), NODE.format("with_tool"), "--accept"]

    accepted = project.runpytest(*command[1:])
    accepted.assert_outcomes(passed=2)
    for case_id in ("with_markdown", "with_tool"):  # what it changed, named
        accepted.stdout.fnmatch_lines([f"  accepted: {case_id}: wrote cassettes/{case_id}.yaml, "
                                       f"fixtures/goldens/{case_id}.golden.yaml (review with git diff)"])
    assert "Be very brief." in (project.path / "cassettes" / "with_markdown.yaml").read_text()
    assert "Find a term in the pantry." in (project.path / "fixtures" / "goldens" / "with_tool.golden.yaml").read_text()
    green = _ci(project, monkeypatch, "evals")
    green.assert_outcomes(passed=2)
    assert "stale" not in green.stdout.str().split("rag-core golden cases", 1)[1].replace("0 stale cassettes", "")


def test_a_failures_own_fix_is_the_accept_command_and_it_leaves_the_other_case_alone(project, monkeypatch):
    record(project)
    _edit(project)
    failed = _ci(project, monkeypatch, "evals", "-k", "with_markdown")
    failed.assert_outcomes(failed=1, deselected=1)
    failed.stdout.fnmatch_lines([f"if the change is intended: pytest '{NODE.format('with_markdown')}' --accept, then "
                                 "review the diff (git diff)"])
    before = _files(project)
    run_hint(project, failed, "if the change is intended: ")
    after = _files(project)
    assert {name for name in before if before[name] != after[name]} == {
        "cassettes/with_markdown.yaml", "fixtures/goldens/with_markdown.golden.yaml"}
    result = _ci(project, monkeypatch, "evals")
    result.assert_outcomes(passed=1, failed=1)  # the tool edit is the other case's, still to accept
    assert "with_tool: 4 check(s) failed" in result.stdout.str()


def test_the_markdown_summary_holds_each_command_whole_and_each_runs_as_pasted(project, monkeypatch):
    record(project)
    _edit(project)
    _ci(project, monkeypatch, "evals", "--golden-report=summary.md").assert_outcomes(failed=2)
    summary = (project.path / "summary.md").read_text()
    code = re.findall(r"(?<!`)`([^`]+)`(?!`)", summary)
    commands = [span for span in code if "pytest " in span]
    assert commands and all(span.startswith("pytest ") for span in commands), commands  # no words in a command's span
    block = re.search(r"```sh\n(.*)\n```", summary).group(1)
    assert block == shlex.join(["pytest", NODE.format("with_markdown"), NODE.format("with_tool"), "--accept"])

    one = next(span for span in commands if "with_markdown" in span and "with_tool" not in span)
    project.runpytest(*shlex.split(one)[1:]).assert_outcomes(passed=1)
    _ci(project, monkeypatch, "evals").assert_outcomes(passed=1, failed=1)
    project.runpytest(*shlex.split(block)[1:]).assert_outcomes(passed=2)
    _ci(project, monkeypatch, "evals").assert_outcomes(passed=2)


def test_a_prompt_edit_is_reported_once_in_the_terminal_the_summary_and_the_report(project, monkeypatch):
    from rag_core.evals.report.view import build
    from rag_core.evals.runs.store import RunStore, load

    record(project)
    case = project.path / "fixtures" / "goldens" / "with_markdown.yaml"
    case.write_text(case.read_text().replace("Be brief.", "Be very brief."))
    result = _ci(project, monkeypatch, "evals", "--golden-report=summary.md")
    result.assert_outcomes(passed=1, failed=1)
    lines = result.stdout.lines
    # the system prompt's diff (the first field it changed), the other places named; pytest's short
    # summary (which CI does not cut) gives the case one line
    assert sum("Be very brief." in line for line in lines) == 1, result.stdout.str()
    result.stdout.fnmatch_lines([
        "with_markdown: 4 check(s) failed: 1 change(s), each shown once, where it first shows up",
        "--- fixtures/goldens/with_markdown.golden.yaml:system_prompt (expected)",
        "the same change shows up in fixtures/goldens/with_markdown.golden.yaml: requests; "
        "cassettes/with_markdown.yaml: request[[]0[]], request[[]1[]]",
    ])
    short = lines.index(next(line for line in lines if line.startswith("FAILED ")))
    assert lines[short] == (f"FAILED {NODE.format('with_markdown')} - with_markdown: 4 check(s) failed: "
                            "fixtures/goldens/with_markdown.golden.yaml:system_prompt")
    assert lines[short + 1].startswith("=")

    summary = (project.path / "summary.md").read_text()
    assert summary.count("+  Be very brief.") == 1 and summary.count("Be very brief.") == 1
    assert "the same change shows up in `fixtures/goldens/with_markdown.golden.yaml: requests; " in summary

    run = load(RunStore(project.path / ".rag-core" / "runs").newest())
    assert len(run.cases[0].failures) == 4  # the record keeps each check's failure
    shown = build(run)["details"]["with_markdown"]["failures"]
    assert [f["field"] for f in shown] == ["system_prompt"]
    assert [f["field"] for f in shown[0]["same"]] == ["requests", "request[0]", "request[1]"]  # opened on a click


def test_accept_records_a_case_not_recorded_yet_and_leaves_a_passing_one_as_it_is(project, monkeypatch):
    record(project)
    (project.path / "fixtures" / "goldens" / "with_fish.yaml").write_text(textwrap.dedent("""
        id: with_fish
        agent: {instructions: [Name one fish.]}
        input: Which fish?
        emulate:
          - text: Mackerel.
    """))
    before = _files(project)
    failed = _ci(project, monkeypatch, "evals")
    failed.assert_outcomes(passed=2, failed=1)
    assert _accept_all(failed) == ["pytest", NODE.format("with_fish"), "--accept"]
    project.runpytest("evals", "--accept").assert_outcomes(passed=3)
    after = _files(project)
    assert {name for name in after if before.get(name) != after[name]} == {
        "cassettes/with_fish.yaml", "fixtures/goldens/with_fish.golden.yaml"}
    _ci(project, monkeypatch, "evals").assert_outcomes(passed=3)


def _recorded_live_case(project) -> str:
    """The recorded project with a case ``pantry_live`` as a live recording leaves it: the with_tool
    case without its ``emulate:`` script, its golden, its cassette marked live and holding no script
    digest. Returns the script it was given none of."""
    record(project)
    goldens, cassettes = project.path / "fixtures" / "goldens", project.path / "cassettes"
    case = (goldens / "with_tool.yaml").read_text().replace("id: with_tool", "id: pantry_live")
    (goldens / "pantry_live.yaml").write_text(case.split("emulate:")[0])  # no script: it records live
    (goldens / "pantry_live.golden.yaml").write_bytes((goldens / "with_tool.golden.yaml").read_bytes())
    emulated = (cassettes / "with_tool.yaml").read_text()
    live = re.sub(r"\n  script: sha256:\w+", "", emulated)  # a live recording holds no emulate: script
    assert live != emulated
    (cassettes / "pantry_live.yaml").write_text(live.replace("target: rag-core provider emulator",
                                                             "target: live provider API"))
    return "emulate:" + case.split("emulate:")[1]


def test_a_case_recorded_live_is_accepted_against_the_live_api_and_without_its_key_says_so(project, monkeypatch):
    """Its cassette names the live API: accepting records it there again, never against the
    emulator behind the user's back; without the key nothing is written and the failure says why."""
    _recorded_live_case(project)
    project.runpytest("evals", "-k", "pantry_live").assert_outcomes(passed=1, deselected=2)
    (project.path / "pantry_tools.py").write_text(TOOLS.replace("Look a term up", "Find a term"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    failed = _ci(project, monkeypatch, "evals", "-k", "pantry_live")
    failed.stdout.fnmatch_lines(["if the change is intended: pytest '*pantry_live*' --accept (set the provider's API "
                                 "key, e.g. OPENAI_API_KEY, to record against the live API), then review the diff*"])
    before = _files(project)
    refused = project.runpytest("evals", "-k", "pantry_live", "--accept")
    refused.assert_outcomes(failed=1, deselected=2)
    refused.stdout.fnmatch_lines(["*pantry_live: its cassette was recorded against the live API, so accepting its "
                                  "change records it again there: recording needs a provider: set OPENAI_API_KEY*"])
    assert _files(project) == before


@pytest.mark.parametrize(("options", "message"), [
    (["--live"], "--accept writes cassettes and goldens, --live writes none: drop one of them"),
    (["--record-mode=rewrite"], "--accept records again the cassettes it must (and only those): drop --record-mode"),
    (["--update-goldens"], "--accept writes the goldens of the cases it accepts: drop --update-goldens"),
])
def test_accept_with_an_option_that_means_otherwise_is_a_usage_error(project, options, message):
    result = project.runpytest("evals", "--accept", *options)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}"])


# ------------------------------------------------------------------ one change, once (pure)


def _prompt_failures(prompt: str, edited: str) -> list[Failure]:
    request = {"model": "gpt-5.2", "input": [{"role": "developer", "content": f"{prompt}\n\nUse markdown."},
                                             {"role": "user", "content": "Hi"}]}
    sent = {**request, "input": [{"role": "developer", "content": f"{edited}\n\nUse markdown."}, request["input"][1]]}
    golden = "fixtures/goldens/x.golden.yaml"
    return [Failure("snapshot", "golden", golden, "system_prompt", golden=f"{prompt}\n\nUse markdown.",
                    observed=f"{edited}\n\nUse markdown."),
            Failure("snapshot", "golden", golden, "requests", golden=[request, request], observed=[sent, sent]),
            Failure("stale", "cassette", "cassettes/x.yaml", "request[0]", "stale", golden=request, observed=sent,
                    fix="record it again"),
            Failure("stale", "cassette", "cassettes/x.yaml", "request[1]", "stale", golden=request,
                    observed={**sent, "model": "gpt-6"}, fix="record it again")]


def test_a_change_is_led_by_the_first_failure_that_shows_it_and_names_the_others():
    found = grouped(_prompt_failures("Be brief.", "Be very brief."))
    assert [f.field for f in leading(found)] == ["system_prompt", "request[1]"]  # request[1] changed the model too
    assert found[0].also == ("fixtures/goldens/x.golden.yaml:requests", "cassettes/x.yaml:request[0]")
    assert [f.same_as for f in found] == [None, "fixtures/goldens/x.golden.yaml:system_prompt",
                                          "fixtures/goldens/x.golden.yaml:system_prompt", None]
    assert "the same change shows up in fixtures/goldens/x.golden.yaml: requests; cassettes/x.yaml: request[0]" \
        in found[0].text()


def test_failures_without_values_or_with_lines_only_reordered_are_each_their_own():
    limit = Failure("tool_calls", "case", "x.yaml", "tool_calls.max", "3 tool calls, more than 2")
    reordered = Failure("snapshot", "golden", "x.golden.yaml", "tools", golden=["a", "b"], observed=["b", "a"])
    again = Failure("snapshot", "golden", "x.golden.yaml", "requests", golden=["a", "b"], observed=["b", "a"])
    assert leading(grouped([limit, reordered, again])) == [limit, reordered, again]


def test_what_a_folded_failure_says_beyond_its_diff_is_said_where_the_change_is_shown():
    prompt, request, stale, _ = _prompt_failures("id 1", "id 2")
    stale = Failure(**{**stale.__dict__, "hint": "only in values made anew each run: the id"})
    found = grouped([prompt, request, stale])
    assert found[0].message == "cassettes/x.yaml:request[0] differs only in values made anew each run: the id"


@pytest.mark.parametrize(("text", "commands"), [
    ("if the change is intended: pytest 'evals/t.py::test[a b]' --accept, then review the diff",
     ["pytest 'evals/t.py::test[a b]' --accept"]),
    ("record it again: pytest 'x[it'\"'\"'s]' --record-mode=rewrite --emulator (set the key); or pytest evals/ --accept",
     ["pytest 'x[it'\"'\"'s]' --record-mode=rewrite --emulator", "pytest evals/ --accept"]),
    ("run pytest evals/ first", []),
])
def test_the_commands_in_a_fix_are_found_whole(text, commands):
    parts = spans(text)
    assert "".join(part for part, _ in parts) == text
    assert [part for part, command in parts if command] == commands
    for command in commands:
        assert shlex.split(command)[0] == "pytest"


# ------------------------------------------------------------------ every other hint --accept is in


def test_a_missing_golden_is_written_by_the_command_its_failure_prints(project, monkeypatch):
    record(project)
    golden = project.path / "fixtures" / "goldens" / "with_tool.golden.yaml"
    reviewed = golden.read_bytes()
    golden.unlink()
    failed = _ci(project, monkeypatch, "evals", "-k", "with_tool")
    failed.assert_outcomes(failed=1, deselected=1)
    run_hint(project, failed, "no golden file yet; write it with ")
    assert golden.read_bytes() == reviewed  # what the case observes, which the cassette still holds
    _ci(project, monkeypatch, "evals").assert_outcomes(passed=2)


def test_recorded_calls_no_longer_made_are_recorded_again_by_the_printed_command(project, monkeypatch):
    case = project.path / "fixtures" / "goldens" / "chatty.yaml"
    case.write_text(textwrap.dedent("""
        id: chatty
        agent: {instructions: [Be brief.]}
        turns: [Hi, Bye]
        emulate:
          - text: Hello.
          - text: Goodbye.
    """))
    project.runpytest("evals", "--case", "chatty", "--record-mode=once", "--emulator").assert_outcomes(passed=1)
    case.write_text(case.read_text().replace("turns: [Hi, Bye]", "turns: [Hi]").replace("  - text: Goodbye.\n", ""))
    failed = _ci(project, monkeypatch, "evals", "--case", "chatty")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["cassettes/chatty.yaml: 1 recorded interaction(s) were not used: the run made "
                                 "fewer provider calls than when it was recorded"])
    run_hint(project, failed, "if the change is intended: ")
    _ci(project, monkeypatch, "evals", "--case", "chatty").assert_outcomes(passed=1)


UNREACHABLE = "api.rag-core-test.invalid"  # .invalid is reserved: no resolver knows it


def test_accepting_a_live_recording_that_cannot_connect_prints_the_command_against_the_emulator(project, monkeypatch):
    script = _recorded_live_case(project)
    goldens, cassettes = project.path / "fixtures" / "goldens", project.path / "cassettes"
    (project.path / "pantry_tools.py").write_text(TOOLS.replace("Look a term up", "Find a term"))
    monkeypatch.setenv("OPENAI_BASE_URL", f"https://{UNREACHABLE}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-not-a-real-key")
    before = _files(project)
    failed = project.runpytest("evals", "-k", "pantry_live", "--accept")
    failed.assert_outcomes(failed=1, deselected=2)
    assert f"it could not connect to {UNREACHABLE}" in failed.stdout.str()
    assert _files(project) == before
    (goldens / "pantry_live.yaml").write_text((goldens / "pantry_live.yaml").read_text() + script)
    monkeypatch.delenv("OPENAI_BASE_URL")
    line = next(line for line in failed.stdout.lines if "and record against the built-in emulator: " in line)
    assert line.endswith("record against the built-in emulator: pytest "
                         f"'{NODE.format('pantry_live')}' --accept --emulator"), line
    run_hint(project, failed, "and record against the built-in emulator: ")
    assert "target: rag-core provider emulator" in (cassettes / "pantry_live.yaml").read_text()
    _ci(project, monkeypatch, "evals", "-k", "pantry_live").assert_outcomes(passed=1, deselected=2)
