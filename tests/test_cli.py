"""The ``rag-core`` command, run as a user runs it: a separate process, in a folder of their own."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import rag_core
from rag_core.cli import NO_SCRIPT_REPLY
from tests.golden_project import UNUSED_PLUGINS_OPTIONS

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = [[sys.executable, "-m", "rag_core"]]
if shutil.which("rag-core", path=str(Path(sys.executable).parent)):  # the console script pip installs
    COMMANDS.append([shutil.which("rag-core", path=str(Path(sys.executable).parent))])


def rag_core_command(*args: str, cwd: Path, command: list[str] = COMMANDS[0], env: dict[str, str] | None = None,
                     timeout: float = 300) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    environment.update(env or {})
    return subprocess.run([*command, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=environment)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: Path(c[-1]).name)
def test_version(command, tmp_path):
    result = rag_core_command("--version", cwd=tmp_path, command=command)
    assert result.returncode == 0 and result.stdout.strip() == f"rag-core {rag_core.__version__}"


@pytest.mark.parametrize("words", [[], ["emulator"], ["emulator", "serve"], ["cache"], ["cache", "record"], ["init"]])
def test_every_command_has_help(words, tmp_path):
    result = rag_core_command(*words, "--help", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout.startswith("usage: rag-core")


def test_help_lists_every_command_with_one_line_and_says_what_reports_are():
    import argparse

    from rag_core.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    text = parser.format_help()
    for name, choice in commands.choices.items():
        helped = next(a for a in commands._choices_actions if a.dest == name)
        assert helped.help and "\n" not in helped.help, name
        assert re.search(rf"^    {name} +\S", text, re.MULTILINE), (name, text)
    assert {"report", "view", "merge", "offline", "init", "emulator", "cache"} <= set(commands.choices)
    assert "HTML report of a run record" in text and "merging CI shards" in text, text


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], "the following arguments are required: COMMAND"),
        (["bogus"], "invalid choice: 'bogus'"),
        (["emulator"], "required: ACTION"),
        (["emulator", "serve", "--port", "x"], "'x' is not a port number"),
        (["emulator", "serve", "--script", "missing.yaml"], "missing.yaml: cannot be read"),
        (["emulator", "serve", "--script", "bad_turn.yaml"], "bad_turn.yaml: turn 1: `text` must be a string"),
        (["emulator", "serve", "--script", "not_a_list.yaml"], "not_a_list.yaml: a script is a list of turns"),
        (["cache", "record", "missing.yaml"], "missing.yaml: no such suite file"),
        (["cache", "record", "no_embedder.yaml"], "no_embedder.yaml: the suite has no embedder"),
        (["init", "a_file.txt"], "a_file.txt: cannot scaffold here"),
        # a port out of range ended in an OverflowError traceback
        (["emulator", "serve", "--port", "99999"], "99999 is not a port number (0 to 65535"),
        (["emulator", "serve", "--port", "-5"], "-5 is not a port number"),
    ],
)
def test_bad_input_is_one_clear_line_and_a_non_zero_exit(args, expected, tmp_path):
    (tmp_path / "bad_turn.yaml").write_text("- text: [not, a, string]\n")
    (tmp_path / "not_a_list.yaml").write_text("text: hello\n")
    (tmp_path / "no_embedder.yaml").write_text(
        "name: s\ndataset: {judged: q.yaml}\nmetrics: [ndcg@10]\nretrievers: [{name: b, search_type: keyword}]\n")
    (tmp_path / "a_file.txt").write_text("")
    result = rag_core_command(*args, cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("rag-core") and expected in lines[0], result.stderr


def _serve(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen([*COMMANDS[0], "emulator", "serve", *args], cwd=tmp_path, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = process.stdout.readline() if process.stdout else ""
    assert first.startswith("rag-core emulator on http://127.0.0.1:"), first + (process.stderr.read() if process.stderr else "")
    return process, first.split()[3]


def _stop(process: subprocess.Popen[str]) -> int:
    process.send_signal(signal.SIGTERM)
    return process.wait(timeout=30)


def test_emulator_serve_answers_any_sdk_without_a_script(tmp_path):
    import openai

    process, url = _serve(tmp_path)
    try:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="emulator", max_retries=0)
        for _ in range(2):
            assert client.responses.create(model="gpt-5.2", input="hi").output_text == NO_SCRIPT_REPLY
        chat = client.chat.completions.create(model="gpt-5.2", messages=[{"role": "user", "content": "hi"}])
        assert chat.choices[0].message.content == NO_SCRIPT_REPLY
    finally:
        assert _stop(process) == 0


def test_emulator_serve_follows_a_script_on_the_requested_port(tmp_path):
    import openai

    with socket.socket() as probe:  # a free port, released before the emulator takes it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (tmp_path / "case.yaml").write_text("id: x\ninput: hi\nemulate:\n  - text: first answer\n")
    process, url = _serve(tmp_path, "--port", str(port), "--script", "case.yaml")
    try:
        assert url == f"http://127.0.0.1:{port}"
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="emulator", max_retries=0)
        assert client.responses.create(model="gpt-5.2", input="hi").output_text == "first answer"
        with pytest.raises(openai.InternalServerError, match="only 1 turn"):
            client.responses.create(model="gpt-5.2", input="again")
        busy = rag_core_command("emulator", "serve", "--port", str(port), cwd=tmp_path)
        assert busy.returncode == 2 and f"port {port}: cannot listen" in busy.stderr
    finally:
        assert _stop(process) == 0


def test_emulator_serve_answers_a_scripts_endpoints_and_what_sdks_call_besides_the_model(tmp_path):
    import openai

    (tmp_path / "case.yaml").write_text("id: x\ninput: hi\nemulate:\n  - {endpoint: GET /v1/files/file-menu, body: "
                                        "{id: file-menu, object: file, bytes: 1, created_at: 0, filename: menu.txt, "
                                        "purpose: assistants, status: processed}}\n  - text: first answer\n")
    process = subprocess.Popen([*COMMANDS[0], "emulator", "serve", "--script", "case.yaml"], cwd=tmp_path, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        first = process.stdout.readline() if process.stdout else ""
        assert first.endswith("(1 scripted turn(s), 1 scripted endpoint(s))\n"), first
        client = openai.OpenAI(base_url=f"{first.split()[3]}/v1", api_key="emulator", max_retries=0)
        assert client.files.retrieve("file-menu").filename == "menu.txt"
        assert "gpt-5.2" in [model.id for model in client.models.list()]  # a GET, which the server refused
        assert client.responses.input_tokens.count(model="gpt-5.2", input="hi").input_tokens > 0
        assert client.responses.create(model="gpt-5.2", input="hi").output_text == "first answer"
    finally:
        assert _stop(process) == 0


def test_cache_record_fills_a_suites_embedding_cache(tmp_path):
    from rag_core.evals.emulator.server import EmulatorServer

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "corpus.jsonl").write_text(
        '{"_id": "d1", "text": "pad thai with tamarind"}\n{"_id": "d2", "text": "green curry"}\n')
    (tmp_path / "data" / "queries.yaml").write_text(
        "corpus: corpus.jsonl\nqueries:\n  - {id: q1, text: pad thai, relevant: [d1]}\n")
    (tmp_path / "suite.yaml").write_text(
        "name: tiny\ndataset: {judged: data/queries.yaml}\n"
        "embedder: {kind: openai, id: text-embedding-3-small, cache: cassettes/embeddings/tiny}\n"
        "metrics: [ndcg@10]\nretrievers: [{name: dense, search_type: vector}]\n")
    server = EmulatorServer()
    env = {"OPENAI_BASE_URL": f"{server.url}/v1", "OPENAI_API_KEY": "emulator"}
    try:
        refused = rag_core_command("cache", "record", "suite.yaml", cwd=tmp_path, env=env)  # no script: 503
        server.load([], seed="cache")  # embeddings need no scripted turns
        result = rag_core_command("cache", "record", "suite.yaml", cwd=tmp_path, env=env)
    finally:
        server.close()
    assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1 and "HTTP 503" in refused.stderr
    assert result.returncode == 0, result.stderr
    assert "tiny: 2 documents, 1 queries" in result.stdout and "holds 3 vectors" in result.stdout
    assert (tmp_path / "cassettes" / "embeddings" / "tiny").is_dir()


INIT_FILES = [
    "fixtures/goldens/example_agentic_rag.yaml", "fixtures/goldens/case.schema.json", "fixtures/corpora/example.yaml",
    "evals/__init__.py", "evals/test_goldens.py", "evals/test_retrieval.py", "pytest.ini",
    ".github/workflows/rag-core-evals.yml",
]


def test_init_then_record_snapshot_and_replay_the_example(tmp_path):
    """The "Use it in your project" steps of the README and docs/getting-started.md, as written, in a new folder."""
    guide = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    assert all(f"`{name}`" in guide for name in INIT_FILES), "docs/getting-started.md lists what rag-core init writes"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    project = tmp_path / "project"
    result = rag_core_command("init", str(project), cwd=tmp_path, command=COMMANDS[-1])
    assert result.returncode == 0, result.stderr
    written = sorted(str(p.relative_to(project)) for p in project.rglob("*") if p.is_file())
    assert written == sorted(INIT_FILES)
    assert (project / "cassettes").is_dir()
    # the printed next steps are the commands that work, and the ones the README and the guide show
    steps = [line.split("#")[0].strip() for line in result.stdout.splitlines() if line.strip().startswith("pytest ")]
    assert steps == ["pytest evals/ --record-mode=once --emulator", "pytest evals/"]
    assert all(step in readme and step in guide for step in steps)
    # the steps' sessions load no plugin the example does not use
    environment = {**{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")},
                   "PYTEST_ADDOPTS": UNUSED_PLUGINS_OPTIONS}
    for step in steps:
        ran = subprocess.run([sys.executable, "-m", *step.split()], cwd=project, capture_output=True, text=True, timeout=300,
                             env=environment)
        assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (project / "cassettes" / "example_agentic_rag.yaml").is_file()
    golden = (project / "fixtures" / "goldens" / "example_agentic_rag.golden.yaml").read_text()
    assert "search_knowledge_base" in golden and "tamarind" in golden
    again = rag_core_command("init", str(project), cwd=tmp_path)
    # a second run keeps every file; pytest.ini now is the project's own configuration, left as it is
    assert again.returncode == 0 and again.stdout.count("kept ") == len(INIT_FILES) - 1
    assert "pytest.ini already holds rag-core's pytest settings in [pytest]." in again.stdout
    assert "wrote " not in again.stdout and "Set RAG_CORE_INSTALL" not in again.stdout
