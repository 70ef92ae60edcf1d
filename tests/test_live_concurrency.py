"""Meta-tests: ``--live --concurrency N`` runs cases and repeats at once, each answer assigned to
its own case and repeat; a provider that pushes back (the emulator's ``--emulator-capacity``) is
retried after the wait it asks for, and a run that runs out of retries fails naming the status
and the request. The emulator's ``--emulator-latency`` stands in for a provider's answer time:
no test sleeps."""

from __future__ import annotations

import json

import pytest

pytest_plugins = ["pytester"]

import bm25s  # noqa: E402,F401  (imported before pytester's in-process runs; see test_harness.py)
import numpy  # noqa: E402,F401
import openai  # noqa: E402,F401
import vcr  # noqa: E402,F401

from tests.golden_project import UNUSED_PLUGINS, project, record  # noqa: E402,F401  (project: a fixture)

REPEATS = 8

# each repeat answers with its own number, so a run given another's answer is seen
SCRIPTS = "emulate_repeats:\n" + "".join(
    f"  - emulate: [{{tool_calls: [{{name: lookup, arguments: {{term: pantry}}}}]}}, {{text: \"Answer of repeat {r}.\"}}]\n"
    for r in range(REPEATS))

# the live property of each case, as its test reported it
CONFTEST = """
import json

def pytest_runtest_logreport(report):
    for key, info in report.user_properties:
        if key == "rag_core_live":
            with open("live-results.jsonl", "a") as out:
                out.write(json.dumps(info) + "\\n")
"""


def _repeats_project(project) -> None:
    case = project.path / "fixtures" / "goldens" / "with_tool.yaml"
    case.write_text(case.read_text() + SCRIPTS)
    project.makeconftest(CONFTEST)
    record(project)


def _live(project) -> dict[str, dict]:
    return {entry["id"]: entry for entry in map(json.loads, (project.path / "live-results.jsonl").read_text().splitlines())}


def test_eight_runs_at_once_each_get_their_own_answer(project):
    _repeats_project(project)
    result = project.runpytest("evals", "-k", "with_tool", "--live", "--emulator", "--repeat", str(REPEATS),
                               "--concurrency", "8", "--emulator-latency", "0.2")
    result.assert_outcomes(passed=1)
    # the emulator saw the eight runs' requests in flight together
    result.stdout.fnmatch_lines(["*emulator: at most 8 requests at once, 0 answered 429*"])
    live = _live(project)["with_tool"]
    assert [run["repeat"] for run in live["repeats"]] == list(range(REPEATS))
    assert [run["answer"] for run in live["repeats"]] == [f"Answer of repeat {r}." for r in range(REPEATS)]


def test_cases_run_at_once_too(project):
    _repeats_project(project)
    result = project.runpytest("evals", "--live", "--emulator", "--repeat", "4", "--concurrency", "8",
                               "--emulator-latency", "0.2")
    result.assert_outcomes(passed=2)
    # four runs of each of the two cases: eight in flight at once
    result.stdout.fnmatch_lines(["*emulator: at most 8 requests at once, 0 answered 429*"])
    live = _live(project)
    assert [run["answer"] for run in live["with_tool"]["repeats"]] == [f"Answer of repeat {r}." for r in range(4)]
    assert {run["answer"] for run in live["with_markdown"]["repeats"]} == {"Soak the noodles."}
    # the totals: runs, tokens and their price (to the micro-dollar), each case's the sum of its runs'
    for entry in live.values():
        assert entry["cost_usd"] > 0
        assert entry["cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in entry["repeats"]), abs=1e-5)  # each rounded
    tokens = sum(entry["tokens_total"] for entry in live.values())
    usd = sum(entry["cost_usd"] for entry in live.values())
    result.stdout.fnmatch_lines([f"8 runs, 0 run again after a pushback, {tokens} tokens, ${usd:.4f} at list prices"])


def test_a_case_that_limits_itself_holds_no_thread_another_case_could_use(project):
    """A case's own max_concurrency: its waiting runs held threads of the session's pool, which
    the other case's runs waited for. Four threads, with_markdown's three runs handed out
    first: two of them sat waiting, and three runs at most were ever in flight."""
    _repeats_project(project)
    case = project.path / "fixtures" / "goldens" / "with_markdown.yaml"
    case.write_text(case.read_text() + "max_concurrency: 1\n")
    result = project.runpytest("evals", "--live", "--emulator", "--repeat", "3", "--concurrency", "4",
                               "--emulator-latency", "0.2")
    result.assert_outcomes(passed=2)
    # one of with_markdown's runs at a time, and with_tool's three beside it
    result.stdout.fnmatch_lines(["*emulator: at most 4 requests at once, 0 answered 429*"])


def test_a_provider_that_pushes_back_is_waited_for_and_every_run_passes(project):
    _repeats_project(project)
    result = project.runpytest("evals", "-k", "with_tool", "--live", "--emulator", "--repeat", str(REPEATS),
                               "--concurrency", "8", "--emulator-latency", "0.1", "--emulator-capacity", "3")
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert "emulator: at most 3 requests at once" in out
    refused = int(out.split("requests at once, ")[1].split(" answered 429")[0])
    assert refused > 0
    live = _live(project)["with_tool"]
    assert [run["answer"] for run in live["repeats"]] == [f"Answer of repeat {r}." for r in range(REPEATS)]


def test_a_run_that_runs_out_of_retries_fails_naming_the_status_and_the_request(project):
    _repeats_project(project)
    result = project.runpytest("evals", "-k", "with_tool", "--live", "--emulator", "--repeat", "2",
                               "--concurrency", "2", "--emulator-capacity", "0", "--retries", "1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*the provider pushed back and the run gave up after 1 retry (--retries 1): POST /v1/responses "
        "answered HTTP 429, asked to wait 0.05 s*"])
    live = _live(project)["with_tool"]
    assert [run["retries"] for run in live["repeats"]] == [1, 1]


@pytest.mark.parametrize("options, message", [
    (["--concurrency", "4"], "to spread replays over processes use pytest-xdist"),
    (["--live", "--concurrency", "0"], "--concurrency=0: give at least 1"),
    (["--live", "--retries", "-1"], "--retries=-1: give 0 or more"),
    (["--live", "--emulator-latency", "0.2"], "add --emulator"),
    (["--live", "--emulator", "--emulator-capacity", "-1"], "--emulator-capacity=-1: give 0 or more"),
    (["--resume"], "--resume takes the runs of a --live session that was cut short: add --live"),
])
def test_live_options_that_do_not_fit_are_usage_errors(project, options, message):
    result = project.runpytest("evals", *options)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


# Ctrl-C once the first case has been reported (while a file says so), as a user would: the
# reporting hook above, then the interrupt
INTERRUPTING = "import os\n" + CONFTEST + """\
    if report.when == "call" and os.path.exists("interrupt"):
        os.remove("interrupt")
        raise KeyboardInterrupt
"""


@pytest.mark.parametrize("concurrency", ["1", "8"])
def test_a_live_session_cut_short_is_resumed_making_only_the_runs_that_did_not_finish(project, concurrency):
    import shlex

    _repeats_project(project)
    project.makeconftest(INTERRUPTING)
    (project.path / "interrupt").write_text("")
    # in a process of its own: a KeyboardInterrupt ends pytester's in-process session too
    cut = project.runpytest_subprocess("evals", "--live", "--emulator", "--repeat", "4", "--concurrency", concurrency)
    assert cut.ret == pytest.ExitCode.INTERRUPTED
    kept = sorted((project.path / ".rag-core" / "live").rglob("*.json"))
    assert [p.parent.name for p in kept][:4] == ["with_markdown"] * 4  # the first case's runs, whole
    hint = next(line for line in cut.stdout.lines if "--resume makes only the rest" in line)
    assert hint.startswith(f"{len(kept)} finished run(s) kept in .rag-core/live: pytest ")
    command = shlex.split(hint.split(": ", 1)[1].removesuffix(" makes only the rest"))
    assert command[0] == "pytest" and command[-1] == "--resume"
    first = _live(project)["with_markdown"]

    (project.path / "live-results.jsonl").unlink()
    resumed = project.runpytest(*command[1:])  # the command the summary printed
    resumed.assert_outcomes(passed=2)
    resumed.stdout.fnmatch_lines([f"*{len(kept)} of them taken from the session that was cut short (--resume)*"])
    live = _live(project)
    # the first case's runs are the ones made before the interrupt (their times to the microsecond)
    assert [run["seconds"] for run in live["with_markdown"]["repeats"]] == [run["seconds"] for run in first["repeats"]]
    assert live["with_markdown"]["resumed"] == 4 and live["with_tool"]["resumed"] == len(kept) - 4
    assert [run["answer"] for run in live["with_tool"]["repeats"]] == [f"Answer of repeat {r}." for r in range(4)]
    assert not (project.path / ".rag-core" / "live").exists()  # every run made: nothing left to resume


def test_a_resumed_session_makes_again_the_runs_of_a_case_edited_since(project):
    _repeats_project(project)
    project.makeconftest(INTERRUPTING)
    (project.path / "interrupt").write_text("")
    project.runpytest_subprocess("evals", "--live", "--emulator", "--repeat", "2")
    case = project.path / "fixtures" / "goldens" / "with_markdown.yaml"
    case.write_text(case.read_text().replace("Be brief.", "Be very brief."))
    resumed = project.runpytest("evals", "--live", "--emulator", "--repeat", "2", "--resume")
    resumed.assert_outcomes(passed=2)
    assert _live(project)["with_markdown"]["resumed"] == 0
    # and without --resume, a session takes nothing, and starts by forgetting what was kept
    project.makeconftest(INTERRUPTING)
    (project.path / "interrupt").write_text("")
    project.runpytest_subprocess("evals", "--live", "--emulator", "--repeat", "2")
    assert (project.path / ".rag-core" / "live").exists()
    again = project.runpytest("evals", "--live", "--emulator", "--repeat", "2")
    again.assert_outcomes(passed=2)
    assert "taken from the session that was cut short" not in again.stdout.str()


def _recorded_files(project) -> dict[str, bytes]:
    return {str(p.relative_to(project.path)): p.read_bytes() for folder in ("cassettes", "fixtures/goldens")
            for p in sorted((project.path / folder).rglob("*")) if p.is_file() and not p.name.endswith(".yaml.recording")}


def test_recording_cases_at_once_writes_the_same_bytes_as_one_at_a_time(project):
    serial = project.runpytest("evals", "--record-mode=once", "--emulator", "--update-goldens")
    serial.assert_outcomes(passed=2)
    one_at_a_time = _recorded_files(project)
    for path in list((project.path / "cassettes").rglob("*.yaml")) + list(
            (project.path / "fixtures" / "goldens").glob("*.golden.yaml")):
        path.unlink()
    at_once = project.runpytest("evals", "--record-mode=once", "--emulator", "--update-goldens", "--concurrency", "2",
                                "--emulator-latency", "0.2")
    at_once.assert_outcomes(passed=2)
    at_once.stdout.fnmatch_lines(["*emulator: at most 2 requests at once, 0 answered 429*"])
    assert _recorded_files(project) == one_at_a_time


def test_interrupted_recording_at_once_leaves_whole_files_and_a_rerun_records_the_rest(project):
    import signal
    import subprocess
    import sys
    import time

    goldens = project.path / "fixtures" / "goldens"
    case = (goldens / "with_tool.yaml").read_text()
    for number in range(8):
        (goldens / f"copy_{number}.yaml").write_text(case.replace("id: with_tool", f"id: copy_{number}"))
    command = [sys.executable, "-m", "pytest", "evals", "-p", "no:cacheprovider", "--record-mode=once", "--emulator",
               "--update-goldens", "--concurrency", "2", "--emulator-latency", "0.3"]
    # SIGINT back to its default in the child: a session started in the background (a shell
    # without job control ignores SIGINT there) under pytest-xdist handed the ignoring down, and
    # the Ctrl-C below never arrived
    writer = subprocess.Popen(command, cwd=project.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not list(goldens.glob("*.golden.yaml")) and time.monotonic() < deadline:
        time.sleep(0.05)
    writer.send_signal(signal.SIGINT)  # Ctrl-C, with cases under way and others not begun
    output = writer.communicate(timeout=120)[0].decode()
    assert "KeyboardInterrupt" in output
    written = sorted(p.name.removesuffix(".golden.yaml") for p in goldens.glob("*.golden.yaml"))
    assert 0 < len(written) < 10, output
    # nothing half-written: no staging file, and each case has its cassette and golden, or neither
    assert not [p for p in project.path.rglob("*") if p.name.endswith((".recording", ".staged"))]
    cassettes = sorted(p.stem for p in (project.path / "cassettes").rglob("*.yaml"))
    assert cassettes == written
    # every golden written is named for review, those of runs that ended after the interrupt too
    assert f"{len(written)} new goldens, 0 goldens updated, {len(written)} recorded" in output, output
    assert sorted(line.split("new golden: ")[1].split()[0] for line in output.splitlines()
                  if "new golden: " in line) == written
    assert _recorded_in_the_run_record(project) == {case_id: "new" for case_id in written}
    rerun = subprocess.run(command[:-4], cwd=project.path, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stdout[-3000:]
    assert f"{10 - len(written)} recorded" in rerun.stdout  # only what had not finished


def _recorded_in_the_run_record(project) -> dict[str, str]:
    """The recorded cases of the newest run record, with their status."""
    record = json.loads(sorted((project.path / ".rag-core" / "runs").glob("*.json"))[-1].read_text())
    return {case["id"]: case["status"] for case in record["cases"] if case.get("recorded")}


def test_interrupted_rewrite_at_once_names_every_golden_it_rewrote(project):
    """Ctrl-C while rewriting at once: the runs under way ended and committed their cassettes and
    goldens, but the summary said 0 goldens updated, 0 recorded, and the run record listed none."""
    goldens = project.path / "fixtures" / "goldens"
    case = (goldens / "with_tool.yaml").read_text()
    for number in range(8):
        (goldens / f"copy_{number}.yaml").write_text(case.replace("id: with_tool", f"id: copy_{number}"))
    project.runpytest("evals", "--record-mode=once", "--emulator", "--update-goldens").assert_outcomes(passed=10)
    for path in goldens.glob("*.yaml"):  # each answer changes: each golden rewritten is updated
        if not path.name.endswith(".golden.yaml"):
            path.write_text(path.read_text().replace("text: Fish sauce and palm sugar.", "text: Only palm sugar.")
                            .replace("text: Soak the noodles.", "text: Soak the rice noodles."))
    before = {p.name: p.read_bytes() for p in goldens.glob("*.golden.yaml")}
    cassettes_before = {p.stem: p.read_bytes() for p in (project.path / "cassettes").rglob("*.yaml")}
    # Ctrl-C as the first case is reported, in a process of its own (it ends pytester's session too)
    project.makeconftest(INTERRUPTING)
    (project.path / "interrupt").write_text("")
    cut = project.runpytest_subprocess("evals", "--record-mode=rewrite", "--emulator", "--update-goldens",
                                       "--concurrency", "4", "--emulator-latency", "0.3")
    assert cut.ret == pytest.ExitCode.INTERRUPTED
    output = cut.stdout.str()
    written = sorted(name.removesuffix(".golden.yaml") for name, text in before.items()
                     if (goldens / name).read_bytes() != text)
    # the case reported, and the runs under way that ended after the interrupt (how many began
    # meanwhile depends on how soon the session's thread got to stop them)
    assert len(written) > 1, output
    # each pair rewritten whole, and only those
    assert sorted(stem for stem, text in cassettes_before.items()
                  if (project.path / "cassettes" / f"{stem}.yaml").read_bytes() != text) == written
    assert f"0 new goldens, {len(written)} goldens updated, {len(written)} recorded" in output, output
    assert sorted(line.split("golden updated: ")[1].split()[0] for line in output.splitlines()
                  if "golden updated: " in line) == written
    assert sorted(line.split("cut short: ")[1].split()[0] for line in output.splitlines()
                  if "cut short: " in line) == written[1:]
    assert _recorded_in_the_run_record(project) == {case_id: "updated" for case_id in written}


# Ctrl-C as the first case is reported, arriving where the main thread runs a finalizer that
# holds the interpreter's import lock (as importlib's own lock bookkeeping does, in a weakref
# callback): raised there, the interrupt was printed as "Exception ignored" and lost, and the
# lock stayed taken, so the runs under way waited for it at their next import, for ever
IN_A_FINALIZER = CONFTEST + """
import _imp
import signal

class Finalized:
    def __del__(self):
        _imp.acquire_lock()
        signal.raise_signal(signal.SIGINT)
        _imp.release_lock()
        open("finalizer-ended", "w").close()

def pytest_runtest_makereport(item, call):
    if call.when == "call" and not hasattr(item.config, "interrupted_once"):
        item.config.interrupted_once = True
        Finalized()
"""


@pytest.mark.parametrize("mode", ["record", "live"])
def test_a_ctrl_c_in_a_finalizer_ends_a_session_at_once_and_leaves_no_lock_taken(project, mode):
    goldens = project.path / "fixtures" / "goldens"
    if mode == "record":
        case = (goldens / "with_tool.yaml").read_text()
        for number in range(8):
            (goldens / f"copy_{number}.yaml").write_text(case.replace("id: with_tool", f"id: copy_{number}"))
        arguments = ["--record-mode=once", "--update-goldens"]
    else:
        _repeats_project(project)
        arguments = ["--live", "--repeat", "4"]
    project.makeconftest(IN_A_FINALIZER)
    cut = project.runpytest_subprocess("evals", "--emulator", "--concurrency", "4", "--emulator-latency", "0.2",
                                       *arguments, timeout=120)
    output = cut.stdout.str()
    assert cut.ret == pytest.ExitCode.INTERRUPTED, output
    assert (project.path / "finalizer-ended").exists()  # the finalizer ran to its end: it gave the lock back
    if mode == "record":
        written = sorted(p.name.removesuffix(".golden.yaml") for p in goldens.glob("*.golden.yaml"))
        assert 0 < len(written) < 10, output
        assert sorted(p.stem for p in (project.path / "cassettes").rglob("*.yaml")) == written
        assert not [p for p in project.path.rglob("*") if p.name.endswith((".recording", ".staged"))]
    else:
        assert "--resume makes only the rest" in output


def test_every_live_repeat_of_a_dspy_program_asks_the_model():
    """DSPy answers a request it has seen from its caches: repeats 2, 3, … sent nothing of their
    own, and the second failed as the emulator's script went out of step."""
    import subprocess
    import sys
    from pathlib import Path

    pytest.importorskip("dspy")
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run([sys.executable, "-m", "pytest", "evals/test_goldens.py", "-q", "-p", "no:cacheprovider",
                             *UNUSED_PLUGINS, "-k", "fw_dspy", "--live", "--emulator", "--repeat", "3", "--no-run-record"],
                            cwd=root, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "| fw_dspy | 3/3 | 100% |" in result.stdout


def test_recordings_the_provider_pushed_back_are_made_again_with_the_same_bytes(project):
    goldens = project.path / "fixtures" / "goldens"
    case = (goldens / "with_tool.yaml").read_text()
    for number in range(4):
        (goldens / f"copy_{number}.yaml").write_text(case.replace("id: with_tool", f"id: copy_{number}"))
    project.runpytest("evals", "--record-mode=once", "--emulator", "--update-goldens").assert_outcomes(passed=6)
    one_at_a_time = _recorded_files(project)
    for path in list((project.path / "cassettes").rglob("*.yaml")) + list(goldens.glob("*.golden.yaml")):
        path.unlink()
    # six cases at once against an emulator that answers one request at a time: most are refused
    pushed = project.runpytest("evals", "--record-mode=once", "--emulator", "--update-goldens", "--concurrency", "6",
                               "--emulator-latency", "0.1", "--emulator-capacity", "1", "--retries", "8")
    pushed.assert_outcomes(passed=6)
    refused = int(pushed.stdout.str().split("requests at once, ")[1].split(" answered 429")[0])
    assert refused > 0
    assert _recorded_files(project) == one_at_a_time  # no 429 in any cassette or golden


def test_a_recording_that_runs_out_of_retries_fails_saying_so_and_writes_nothing(project):
    result = project.runpytest("evals", "-k", "with_tool", "--record-mode=once", "--emulator", "--update-goldens",
                               "--emulator-capacity", "0", "--retries", "1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*with_tool: recording failed, nothing was written*HTTP 429*(the recording gave up "
                                 "after 1 retry (--retries 1))*"])
    assert not list((project.path / "cassettes").rglob("*.yaml"))


def test_runs_at_once_begin_with_the_credential_ruleset_compiled(tmp_path, monkeypatch):
    # every run screens what it writes: compiled by the first runs at once, each would wait for it
    import importlib

    from rag_core.evals.golden.concurrent_runs import LiveSession
    from rag_core.evals.golden.playing import Settings

    # the module the session imports (an in-process pytest run of an earlier test may have
    # imported it anew, leaving the package's attribute on the old one)
    secret_rules = importlib.import_module("rag_core.evals.secret_rules")
    monkeypatch.setattr(secret_rules, "_compiled", None, raising=False)
    session = LiveSession(Settings(tmp_path, tmp_path, live=True, emulator=True, repeat=REPEATS, concurrency=8))
    try:
        assert secret_rules._compiled is not None
    finally:
        session.close()
