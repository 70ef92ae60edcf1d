"""Meta-tests: a failed recording loses nothing, case files fail one at a time, verdicts count
every case, and every hint the harness prints is a command that works (each is run here)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

import bm25s  # noqa: E402,F401  (imported before pytester's in-process runs; see test_harness.py)
import numpy  # noqa: E402,F401
import openai  # noqa: E402,F401
import vcr  # noqa: E402,F401

from tests.golden_project import project, record, run_hint  # noqa: E402,F401  (project: a fixture)
from tests.processes import kill_after, spawn  # noqa: E402


def files_of(project: pytest.Pytester) -> dict[str, bytes]:
    """Every cassette and golden of the project, byte for byte."""
    paths = [*(project.path / "cassettes").glob("*"), *(project.path / "fixtures" / "goldens").glob("*")]
    return {str(p.relative_to(project.path)): p.read_bytes() for p in sorted(paths) if p.is_file()}


def edit_case(project: pytest.Pytester, name: str, old: str, new: str) -> None:
    path = project.path / "fixtures" / "goldens" / f"{name}.yaml"
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


# ------------------------------------------------------------------ nothing lost on a failed recording
@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        ("input: What is in the pantry?", "input: 'my key sk-proj-abcdefghijklmnopqrstuvwxyz012345'",
         "refusing to write the recording"),
        ('tools: ["pantry_tools:lookup"]', 'tools: ["pantry_tool:lookup"]', "cannot import 'pantry_tool:lookup'"),
        ("  - tool_calls: [{name: lookup, arguments: {term: pantry}}]\n  - text: Fish sauce and palm sugar.",
         "  - {status: 429, message: Rate limit reached, type: rate_limit_error}", "answered HTTP 429"),
        ("  - text: Fish sauce and palm sugar.\n", "", "emulate: scripts 1 turn(s), but the agent made more model calls "
         "(request #2, to /v1/responses)"),
    ],
    ids=["credential", "factory-typo", "provider-429", "script-ran-out"],
)
def test_a_failed_rewrite_keeps_the_cassette_and_the_reviewed_golden(project, old, new, says):
    record(project)
    before = files_of(project)
    edit_case(project, "with_tool", old, new)
    result = project.runpytest("evals", "-k", "with_tool", "--record-mode=rewrite", "--emulator", "--update-goldens")
    result.assert_outcomes(failed=1, deselected=1)
    assert says in result.stdout.str()
    after = files_of(project)
    after.pop("fixtures/goldens/with_tool.yaml")  # the case file itself was edited above
    before.pop("fixtures/goldens/with_tool.yaml")
    assert after == before  # byte for byte, and no staging file left behind


def test_a_failed_first_recording_leaves_no_cassette_and_the_next_once_records(project):
    edit_case(project, "with_tool", "  - text: Fish sauce and palm sugar.\n", "")
    failed = project.runpytest("evals", "-k", "with_tool", "--record-mode=once", "--emulator")
    failed.assert_outcomes(failed=1, deselected=1)
    failed.stdout.fnmatch_lines(["*recording failed, nothing was written*"])
    assert list((project.path / "cassettes").glob("*")) == [] if (project.path / "cassettes").exists() else True
    edit_case(project, "with_tool", "  - tool_calls:", "  - text: Fish sauce and palm sugar.\n  - tool_calls:")
    edit_case(project, "with_tool", "palm sugar.\n  - tool_calls: [{name: lookup, arguments: {term: pantry}}]",
              "palm sugar.")
    project.runpytest("evals", "-k", "with_tool", "--record-mode=once", "--emulator").assert_outcomes(passed=1, deselected=1)


def test_a_hanging_provider_fails_the_recording_after_the_timeout_naming_the_request(tmp_path, monkeypatch):
    """A live recording against an endpoint that accepts the connection and never answers."""
    import socket
    import threading

    from rag_core.evals.golden.case_files import parse_case_file
    from rag_core.evals.common.errors import RecordingFailed
    from rag_core.evals.golden.runner import Settings, run_case

    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    threading.Thread(target=lambda: held.append(listener.accept()[0]), daemon=True).start()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-test")
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    (tmp_path / "goldens").mkdir()
    (tmp_path / "goldens" / "slow.yaml").write_text(f"id: slow\ninput: hi\nmodel: {{options: {{base_url: '{url}'}}}}\n")
    [case] = parse_case_file(tmp_path / "goldens" / "slow.yaml")
    settings = Settings(cassettes_dir=tmp_path / "cassettes", fixtures_dir=tmp_path, record_mode="once",
                        record_timeout=1.0)
    started = time.monotonic()
    with pytest.raises(RecordingFailed) as failure:
        run_case(case, settings)
    assert time.monotonic() - started < 30
    message = str(failure.value)
    assert f"request #1 of the run (POST {url}/responses) got no answer within 1 s" in message
    assert not (tmp_path / "cassettes").exists() or not list((tmp_path / "cassettes").iterdir())
    assert not (tmp_path / "goldens" / "slow.golden.yaml").exists()
    listener.close()


def test_editing_emulate_marks_the_cassette_stale_and_the_hint_fixes_it(project):
    record(project)
    edit_case(project, "with_tool", "text: Fish sauce and palm sugar.", "text: Only fish sauce.")
    result = project.runpytest("evals", "-k", "with_tool", "--strict-cassettes")
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines(["*stale cassette cassettes/with_tool.yaml: the case's emulate: script changed*"])
    run_hint(project, result, "if the change is intended: ")
    project.runpytest("evals", "--strict-cassettes").assert_outcomes(passed=2)


def test_a_changed_prompt_under_ci_prints_a_re_record_command_that_works(project, monkeypatch):
    record(project)
    edit_case(project, "with_markdown", "instructions: [Be brief.]", "instructions: [Be very brief.]")
    monkeypatch.setenv("CI", "true")
    result = project.runpytest("evals", "-k", "with_markdown")
    result.assert_outcomes(failed=1, deselected=1)
    text = result.stdout.str()
    # the stale requests are the prompt edit the system prompt's diff shows: named, not shown again
    assert "the same change shows up in fixtures/goldens/with_markdown.golden.yaml: requests; " \
           "cassettes/with_markdown.yaml: request[0], request[1]" in text
    assert "current record mode" not in text  # vcrpy's own advice is never quoted
    run_hint(project, result, "if the change is intended: ")
    project.runpytest("evals").assert_outcomes(passed=2)


# ------------------------------------------------------------------ killed writers
WRITER = """
import sys
from pathlib import Path
from rag_core._files import write_atomic
target, size = Path(sys.argv[1]), int(sys.argv[2])
print("ready", flush=True)
n = 0
while True:
    n += 1
    write_atomic(target, bytes([65 + n % 2]) * size)
"""


@pytest.mark.parametrize("delay", [0.05, 0.2, 0.45, 0.7, 1.0])
def test_a_killed_writer_leaves_a_whole_file(tmp_path, delay):
    target = tmp_path / "golden.yaml"
    target.write_bytes(b"O" * 10)
    size = 8_000_000
    kill_after(spawn(WRITER, str(target), str(size)), delay)
    data = target.read_bytes()
    assert data == b"O" * 10 or data in (b"A" * size, b"B" * size)


CACHE_WRITER = """
import sys
from rag_core.embedder import EmbeddingCache
from tests.fakes import HashEmbedder
cache = EmbeddingCache(HashEmbedder(), sys.argv[1], mode="record")
print("ready", flush=True)
n = 0
while True:
    n += 1
    cache.embed([f"text {n} {i}" for i in range(2000)])
"""


@pytest.mark.parametrize("delay", [0.3, 0.8, 1.5, 2.5])
def test_a_killed_embedding_cache_writer_leaves_a_readable_cache(tmp_path, delay):
    from rag_core.embedder import EmbeddingCache
    from tests.fakes import HashEmbedder

    folder = tmp_path / "cache"
    EmbeddingCache(HashEmbedder(), folder, mode="record").embed(["first"])
    kill_after(spawn(CACHE_WRITER, str(folder)), delay)
    cache = EmbeddingCache(HashEmbedder(), folder, mode="replay")  # loads: the manifest names complete files
    assert numpy.allclose(cache.embed(["first"]), HashEmbedder().embed(["first"]), atol=1e-6)
    meta = json.loads((folder / "meta.json").read_text())
    assert len(cache) == meta["count"]


# ------------------------------------------------------------------ case files fail one at a time
def test_a_non_utf8_case_file_is_one_failing_test_and_the_others_run(project):
    record(project)
    (project.path / "fixtures" / "goldens" / "latin1.yaml").write_bytes("id: latin1\ninput: caf\xe9\n".encode("latin-1"))
    result = project.runpytest("evals")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*fixtures/goldens/latin1.yaml: not UTF-8 text (byte 21: invalid continuation byte)*"])
    result.stdout.fnmatch_lines(["3 cases, 1 failed*"])


def test_a_plain_id_colliding_with_a_variant_names_both_files(project):
    goldens = project.path / "fixtures" / "goldens"
    (goldens / "s.yaml").write_text("id: s\ninput: hi\nstream: [false, true]\nemulate: [{text: a}]\n")
    (goldens / "plain.yaml").write_text("id: s.sync\ninput: hi\nemulate: [{text: a}]\n")
    result = project.runpytest("evals", "-k", "s.sync")
    result.assert_outcomes(failed=2, deselected=3)
    result.stdout.fnmatch_lines(["*fixtures/goldens/s.yaml and fixtures/goldens/plain.yaml both define a case with the id 's.sync'*"])


def test_a_case_recording_into_another_cases_compare_cassette_names_both_files(tmp_path):
    from rag_core.evals.golden.case import GoldenCase
    from rag_core.evals.golden.case_files import find_duplicates

    def case(file: str, **fields) -> GoldenCase:
        loaded = GoldenCase.model_validate({"input": "hi", "emulate": [{"text": "a"}], **fields})
        loaded.source = tmp_path / file
        return loaded

    differential = case("s.yaml", id="s", target="m:first", compare_with="m:second")
    squatter = case("other.yaml", id="s.compare", target="m:third")  # its cassette: s.compare.yaml
    errors = find_duplicates([differential, squatter])
    assert set(errors) == {"s", "s.compare"}
    assert "both define a case with the cassette 's.compare.yaml'" in errors["s.compare"]


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("cassette: ../../elsewhere.yaml", "cassette: a cassette is named relative to the cassettes folder"),
        ("cassette: /tmp/elsewhere.yaml", "cassette: a cassette is named relative"),
        ("model: {options: {temperature: hot}}", "'hot' is not a valid temperature for OpenAIResponses"),
        ("model: {options: {temprature: 0.2}}", "OpenAIResponses has no option 'temprature' (did you mean 'temperature'?)"),
    ],
)
def test_bad_case_fields_fail_at_load_naming_the_file(project, line, says):
    goldens = project.path / "fixtures" / "goldens"
    (goldens / "bad.yaml").write_text(f"id: bad\ninput: hi\n{line}\nemulate: [{{text: a}}]\n")
    result = project.runpytest("evals", "-k", "bad", "--record-mode=once", "--emulator")
    result.assert_outcomes(failed=1, deselected=2)
    assert "fixtures/goldens/bad.yaml" in result.stdout.str() and says in result.stdout.str()
    assert not (project.path / "cassettes").exists()


def test_a_cassette_of_another_format_version_is_refused_naming_the_file(project):
    record(project)
    cassette = project.path / "cassettes" / "with_tool.yaml"
    cassette.write_text(cassette.read_text().replace("version: 1", "version: 2"))
    result = project.runpytest("evals", "-k", "with_tool")
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines(["*cassettes/with_tool.yaml: not a cassette: version 2, but this rag-core reads cassette version 1*"])


# ------------------------------------------------------------------ verdicts and reports
def test_the_summary_and_report_count_cases_that_failed_before_comparison(project):
    record(project)
    (project.path / "cassettes" / "with_tool.yaml").unlink()  # fails before any comparison
    (project.path / "fixtures" / "goldens" / "broken.yaml").write_text("id: broken\ninput: [unclosed\n")
    edit_case(project, "with_markdown", "instructions: [Be brief.]", "instructions: [Be brief!]")
    result = project.runpytest("evals", "--golden-report=out/report.md", "--no-strict-cassettes")
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(["3 cases, 3 failed, *"])
    report = (project.path / "out" / "report.md").read_text()
    assert "| 3 | 3 |" in report
    assert report.count("<details><summary>") == 3
    assert "-  Be brief." in report or "-- Be brief." in report or "Be brief!" in report  # the golden diff itself


def test_an_unwritable_report_path_is_one_clear_error_before_anything_runs(project):
    (project.path / "a_file").write_text("")
    result = project.runpytest("evals", "--golden-report=a_file/report.md")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--golden-report=a_file/report.md: cannot write the report there (a_file is a file)*"])


def test_orphans_are_listed_and_pruned(project):
    record(project)
    (project.path / "cassettes" / "gone.yaml").write_text("interactions: []\nversion: 1\n")
    (project.path / "fixtures" / "goldens" / "gone.golden.yaml").write_text("output: null\n")
    result = project.runpytest("evals")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*orphan (no case uses it): fixtures/goldens/gone.golden.yaml",
                                 "*orphan (no case uses it): cassettes/gone.yaml", "*--prune-orphans"])
    project.runpytest("evals", "--prune-orphans").stdout.fnmatch_lines(["*orphan deleted: cassettes/gone.yaml"])
    assert not (project.path / "cassettes" / "gone.yaml").exists()
    assert (project.path / "cassettes" / "with_tool.yaml").exists()


def test_icontains_ignores_case_and_contains_does_not():
    from rag_core.evals.golden.case import OutputExpect
    from rag_core.evals.golden.checks.snapshot import check_output

    assert check_output(OutputExpect(icontains="PALM sugar"), "Fish sauce and palm Sugar.")
    assert not check_output(OutputExpect(contains="PALM sugar"), "Fish sauce and palm sugar.")


# ------------------------------------------------------------------ the README's workflow, as written
def test_readme_steps_1_2_and_4_end_green_recording_only_the_selected_case(pytester):
    import re
    import shlex
    import shutil

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    workflow = readme[readme.index("## Golden cases: the workflow"):]
    case_yaml = re.search(r"```yaml\n(.*?)```", workflow, re.S).group(1)  # step 1
    step2 = re.search(r"\*\*Record it once\*\*: `([^`]+)`", workflow).group(1)
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    root = Path(__file__).resolve().parents[1]
    (pytester.path / "fixtures" / "corpora").mkdir(parents=True)
    (pytester.path / "fixtures" / "goldens").mkdir()
    shutil.copy(root / "fixtures" / "corpora" / "thai_recipes.yaml", pytester.path / "fixtures" / "corpora")
    (pytester.path / "fixtures" / "goldens" / "agentic_rag.yaml").write_text(
        "\n".join(line[3:] for line in case_yaml.splitlines()))
    (pytester.path / "fixtures" / "goldens" / "agentic_rag_other.yaml").write_text(
        "id: agentic_rag_other\ninput: hi\nemulate: [{text: hello}]\n")  # must not be recorded by step 2
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "test_goldens.py").write_text(
        "def test_golden_case(golden_case, golden_harness):\n    golden_harness.check(golden_case)\n")
    words = shlex.split(step2)
    assert words[0] == "pytest"
    result = pytester.runpytest(*words[1:])
    result.assert_outcomes(passed=2, deselected=1)
    result.stdout.fnmatch_lines(["2 cases, 0 failed, 2 new goldens, 0 goldens updated, 2 recorded*",
                                 "*new golden: agentic_rag.sync (review*", "*new golden: agentic_rag.stream (review*"])
    assert sorted(p.name for p in (pytester.path / "cassettes").iterdir()) == ["agentic_rag.stream.yaml", "agentic_rag.sync.yaml"]
    replay = pytester.runpytest("evals/", "--case", "agentic_rag")  # step 4, for the recorded case
    replay.assert_outcomes(passed=2, deselected=1)
    unknown = pytester.runpytest("evals/", "--case", "agentic")
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR or "no golden case has this id" in unknown.stdout.str() + unknown.stderr.str()


# ------------------------------------------------------------------ replay never reaches the network
@pytest.mark.parametrize(
    "attempt",
    [
        lambda s: s.create_connection(("10.255.255.1", 80), timeout=1),
        lambda s: s.socket().connect_ex(("192.0.2.1", 80)),
        lambda s: s.socket(s.AF_INET, s.SOCK_DGRAM).sendto(b"x", ("8.8.8.8", 53)),
        lambda s: s.socket(s.AF_INET, s.SOCK_DGRAM).sendmsg([b"x"], [], 0, ("1.1.1.1", 53)),
        lambda s: s.getaddrinfo("api.openai.com", 443),
        lambda s: s.getaddrinfo("127.example.com", 443),
        lambda s: s.socket().connect(("127.example.com", 80)),
        lambda s: s.gethostbyname("api.openai.com"),
        lambda s: s.gethostbyname_ex("api.openai.com"),
        lambda s: __import__("_socket").socket().connect(("1.1.1.1", 80)),
        lambda s: __import__("_socket").socket(s.AF_INET, s.SOCK_DGRAM).sendto(b"x", ("1.1.1.1", 53)),
    ],
    ids=["connect", "connect_ex", "sendto", "sendmsg", "resolve", "resolve-127-name", "connect-127-name",
         "gethostbyname", "gethostbyname_ex", "c-socket-connect", "c-socket-sendto"],
)
def test_the_replay_guard_refuses_everything_that_leaves_the_machine(attempt):
    import socket

    from rag_core.evals.recording.network import NetworkBlockedError, network_blocked

    with network_blocked() as attempts, pytest.raises(NetworkBlockedError, match="network access blocked during the case"):
        attempt(socket)
    assert len(attempts) == 1


def test_the_replay_guard_lets_loopback_through():
    import socket

    from rag_core.evals.recording.network import network_blocked

    with network_blocked() as attempts:
        server = socket.create_server(("127.0.0.1", 0))
        socket.create_connection(server.getsockname(), timeout=2).close()
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", server.getsockname()[1]))
        assert socket.getaddrinfo("localhost", 80)
        server.close()
    assert attempts == []


def test_a_golden_that_no_longer_matches_prints_an_update_command_that_works(project):
    record(project)
    golden = project.path / "fixtures" / "goldens" / "with_tool.golden.yaml"
    golden.write_text(golden.read_text().replace("Fish sauce and palm sugar.", "Only fish sauce."))
    result = project.runpytest("evals", "-k", "with_tool")
    result.assert_outcomes(failed=1, deselected=1)
    run_hint(project, result, "if the change is intended: ")
    project.runpytest("evals").assert_outcomes(passed=2)


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf"])
def test_a_record_timeout_that_is_no_number_of_seconds_is_a_usage_error(project, value):
    result = project.runpytest("evals", f"--record-timeout={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--record-timeout=*: give a number of seconds above 0*"])


def test_a_golden_report_that_cannot_be_written_fails_the_session(project, monkeypatch):
    """The report was written in the terminal summary, after pytest had settled the exit status:
    a full disk ended a green run with exit status 0."""
    import errno
    import importlib

    # the module as sys.modules holds it (pytester's in-process runs drop modules first imported
    # inside them, so an attribute of the package may be a stale copy)
    atomic = importlib.import_module("rag_core.evals.atomic")
    record(project)

    def disk_full(path, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic, "write_atomic", disk_full)  # under every checked writer
    result = project.runpytest("evals", "--golden-report=report.md")
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["golden report: not written: [[]Errno 28[]] No space left on device"])
