"""The newcomer's path, each step as the README and the harness's own messages print it, in a
project whose environment has the harness without the agent core (its modules refused, as where
they were never installed) and a plain openai SDK agent: ``rag-core init``; record; replay as CI
does; a prompt edit; the one command the failure prints to accept it; CI replays green.

CI runs this module in the fresh venv of README command 1 too (``.ci/run``), right after that
command: the path must hold for what a user installs, not only for this repository's dev venv.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

from tests.test_scaffold import HARNESS_ONLY, without

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
ACCEPT_ALL = "if every change shown is intended, accept them all ("


def _run(command: list[str], project: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *command], cwd=project, capture_output=True, text=True, timeout=300,
                          env=env)


def _pytest(project: Path, env: dict[str, str], command: str, *, ci: bool = False) -> subprocess.CompletedProcess[str]:
    """A pytest command line as printed (``pytest …``), run in the project."""
    words = shlex.split(command)
    assert words[0] == "pytest", command
    environment = {**env, "CI": "true"} if ci else {k: v for k, v in env.items() if k != "CI"}
    return _run(["pytest", *words[1:], "-p", "no:cacheprovider"], project, environment)


def test_init_record_replay_edit_the_prompt_accept_it_with_the_printed_command_and_ci_replays_green(tmp_path):
    env = without(tmp_path, HARNESS_ONLY)
    project = tmp_path / "project"
    init = _run(["rag_core", "init", str(project)], tmp_path, env)
    assert init.returncode == 0, init.stderr
    assert (project / "evals" / "example_agent.py").is_file(), init.stdout  # the plain SDK agent
    record, replay = [line.split("#")[0].strip() for line in init.stdout.splitlines() if line.strip().startswith("pytest ")]
    assert record in README and replay in README

    recorded = _pytest(project, env, record)
    assert recorded.returncode == 0 and "1 passed" in recorded.stdout, recorded.stdout + recorded.stderr
    replayed = _pytest(project, env, replay, ci=True)
    assert replayed.returncode == 0 and "1 passed" in replayed.stdout, replayed.stdout + replayed.stderr

    agent = project / "evals" / "example_agent.py"
    agent.write_text(agent.read_text().replace("You are a Thai cooking assistant.",
                                               "You are a friendly Thai cooking assistant."))
    edited = _pytest(project, env, replay, ci=True)
    assert edited.returncode == 1 and "1 failed" in edited.stdout, edited.stdout + edited.stderr
    line = next(line for line in edited.stdout.splitlines() if ACCEPT_ALL in line)
    accept = line.split(ACCEPT_ALL, 1)[1].split("): ", 1)[1]
    assert accept.endswith(" --accept") and f"if the change is intended: {accept}, then review" in edited.stdout

    accepted = _pytest(project, env, accept)
    assert accepted.returncode == 0 and "accepted: example_sdk_agent: wrote cassettes/example_sdk_agent.yaml, " \
        "fixtures/goldens/example_sdk_agent.golden.yaml" in accepted.stdout, accepted.stdout + accepted.stderr
    assert "friendly Thai cooking assistant" in (project / "fixtures" / "goldens" /
                                                 "example_sdk_agent.golden.yaml").read_text()
    green = _pytest(project, env, replay, ci=True)
    assert green.returncode == 0 and "1 passed" in green.stdout and "0 stale cassettes" in green.stdout, \
        green.stdout + green.stderr
