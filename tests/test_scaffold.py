"""``rag-core init``: settings in the project's own pytest configuration format, a CI workflow that
installs what exists and fails on skipped required cases, and all files written or none."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rag_core.cli import main
from rag_core.evals.scaffold.examples import AGENT_CORE_MODULES
from tests.golden_project import UNUSED_PLUGINS, UNUSED_PLUGINS_OPTIONS

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
SPEC = "rag-core[harness,agent] @ git+https://github.com/acme/rag-core.git@v0.1.0"
NEW_FILES = {
    "fixtures/goldens/example_agentic_rag.yaml", "fixtures/goldens/case.schema.json", "fixtures/corpora/example.yaml",
    "evals/__init__.py", "evals/test_goldens.py", "evals/test_retrieval.py", ".github/workflows/rag-core-evals.yml",
}


def files_in(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() or p.is_symlink()}


def init(capsys, *args: str) -> tuple[int, str, list[str]]:
    code = main(["init", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err.splitlines()


def environment() -> dict[str, str]:
    """This process's environment for a child, with this checkout's rag_core importable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["PYTEST_ADDOPTS"] = UNUSED_PLUGINS_OPTIONS  # plugins no scaffolded project uses, not loaded
    return env


def start_pytest(project: Path) -> subprocess.CompletedProcess[str]:
    """pytest started in the project as a user starts it: it must read the configuration and collect."""
    return subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-p", "no:cacheprovider", "evals"],
                          cwd=project, capture_output=True, text=True, timeout=300, env=environment())


# ------------------------------------------------------------------ all or nothing


def test_a_failed_second_write_leaves_no_file_and_one_clear_message(tmp_path, monkeypatch, capsys):
    """The disk fails on the second file: the first, the folders and the temporary files go too."""
    real_fsync, calls = os.fsync, []

    def fsync(fd):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    project = tmp_path / "project"
    code, out, err = init(capsys, str(project))
    assert code == 2 and len(calls) == 2
    assert not project.exists(), f"left behind: {sorted(files_in(project))}"
    assert len(err) == 1, err
    assert "case.schema.json: No space left on device" in err[0] and "nothing was written" in err[0], err
    assert not out


def test_a_file_where_a_folder_must_be_fails_before_anything_lands(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / ".github").write_text("not a folder\n")
    result = subprocess.run([sys.executable, "-m", "rag_core", "init", str(project)], capture_output=True, text=True,
                            timeout=120, cwd=tmp_path, env=environment())
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and ".github is a file, not a folder; nothing was written" in lines[0], result.stderr
    assert files_in(project) == {".github"} and (project / ".github").read_text() == "not a folder\n"


def test_an_unwritable_folder_is_named_and_nothing_is_left(tmp_path, monkeypatch, capsys):
    real_mkdir = os.mkdir

    def mkdir(path, *args, **kwargs):
        if Path(path).name == "evals":
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", mkdir)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    code, _, err = init(capsys, str(tmp_path))
    assert code == 2 and len(err) == 1 and "evals/__init__.py: Permission denied; nothing was written" in err[0], err
    assert files_in(tmp_path) == {"pyproject.toml"} and (tmp_path / "pyproject.toml").read_text() == '[project]\nname = "x"\n'


def test_a_file_that_appears_midway_is_kept_and_nothing_else_is_written(tmp_path, monkeypatch, capsys):
    real_fsync, calls = os.fsync, []
    theirs = tmp_path / "fixtures" / "goldens" / "example_agentic_rag.yaml"

    def fsync(fd):
        calls.append(fd)
        if len(calls) == 3:  # someone else writes the first file while init runs
            theirs.write_text("id: theirs\n")
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    code, _, err = init(capsys, str(tmp_path))
    assert code == 2 and len(err) == 1, err
    assert "example_agentic_rag.yaml: it appeared while rag-core init ran (left as it is); nothing was written" in err[0]
    assert files_in(tmp_path) == {"fixtures/goldens/example_agentic_rag.yaml"} and theirs.read_text() == "id: theirs\n"


def test_files_get_the_mode_a_plain_open_gives(tmp_path, capsys):
    old = os.umask(0o022)
    try:
        assert init(capsys, str(tmp_path))[0] == 0
    finally:
        os.umask(old)
    assert {stat.S_IMODE((tmp_path / name).stat().st_mode) for name in NEW_FILES | {"pytest.ini"}} == {0o644}
    assert not [p for p in tmp_path.rglob("*.tmp")]


# ------------------------------------------------------------------ the project's own pytest configuration


def test_no_configuration_gets_a_pytest_ini(tmp_path, capsys):
    code, out, _ = init(capsys, str(tmp_path))
    assert code == 0 and files_in(tmp_path) == NEW_FILES | {"pytest.ini"}
    assert (tmp_path / "pytest.ini").read_text().startswith("[pytest]\n")
    assert (tmp_path / "cassettes").is_dir()
    started = start_pytest(tmp_path)
    assert started.returncode == 0 and "configfile: pytest.ini" in started.stdout, started.stdout + started.stderr


def test_a_pyproject_without_pytest_settings_gains_the_table(tmp_path, capsys):
    import tomllib

    original = '[project]\nname = "x"\n\n[tool.ruff]\nline-length = 100'  # no final newline
    (tmp_path / "pyproject.toml").write_text(original)
    code, out, _ = init(capsys, str(tmp_path))
    assert code == 0 and "added [tool.pytest.ini_options] to pyproject.toml" in out
    assert files_in(tmp_path) == NEW_FILES | {"pyproject.toml"}  # no pytest.ini beside it
    text = (tmp_path / "pyproject.toml").read_text()
    assert text.startswith(original + "\n")
    data = tomllib.loads(text)
    assert data["tool"]["ruff"] == {"line-length": 100}
    assert data["tool"]["pytest"]["ini_options"]["testpaths"] == ["evals"]
    started = start_pytest(tmp_path)
    assert started.returncode == 0 and "configfile: pyproject.toml" in started.stdout, started.stdout + started.stderr


CONFIGURED = [
    ("pytest.ini", "[pytest]\nxfail_strict = true\n", "[pytest]"),
    ("tox.ini", "[tox]\nenvlist = py312\n\n[pytest]\nxfail_strict = true\n", "[pytest]"),
    ("setup.cfg", "[metadata]\nname = x\n\n[tool:pytest]\nxfail_strict = true\n", "[tool:pytest]"),
    ("pyproject.toml", '[project]\nname = "x"\n\n[tool.pytest.ini_options]\nxfail_strict = true\n',
     "[tool.pytest.ini_options]"),
]
if int(pytest.__version__.split(".")[0]) >= 9:  # pytest 9 reads native TOML settings
    CONFIGURED.append(("pyproject.toml", '[project]\nname = "x"\n\n[tool.pytest]\nxfail_strict = true\n', "[tool.pytest]"))
    CONFIGURED.append(("pytest.toml", "[pytest]\nxfail_strict = true\n", "[pytest]"))


@pytest.mark.parametrize(("name", "text", "section"), CONFIGURED, ids=[f"{c[0]}{c[2]}" for c in CONFIGURED])
def test_an_existing_section_is_kept_and_the_printed_lines_work_when_pasted(name, text, section, tmp_path, capsys):
    """The settings are printed in the file's own format: pasted under its section header as
    printed, pytest starts and reads them."""
    (tmp_path / name).write_text(text)
    code, out, _ = init(capsys, str(tmp_path))
    assert code == 0
    assert (tmp_path / name).read_text() == text, "an existing pytest section is never edited"
    assert files_in(tmp_path) == NEW_FILES | {name}
    assert f"{name} already configures pytest in {section}; rag-core left it as it is" in out
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{name} already configures")) + 1
    printed = []
    for line in lines[start:]:
        if not line.startswith("    "):
            break
        printed.append(line[4:])
    assert [line.split(" = ")[0] for line in printed if not line.startswith("#")] == \
        ["testpaths", "rag_core_cases", "rag_core_cassettes", "rag_core_fixtures"]
    (tmp_path / name).write_text(text.replace(section + "\n", section + "\n" + "\n".join(printed) + "\n"))
    started = start_pytest(tmp_path)
    assert started.returncode == 0 and f"configfile: {name}" in started.stdout, started.stdout + started.stderr
    assert "example_agentic_rag" in started.stdout
    again = init(capsys, str(tmp_path))[1]
    assert f"{name} already holds rag-core's pytest settings in {section}." in again


def test_settings_set_otherwise_are_kept_and_named(tmp_path, capsys):
    (tmp_path / "setup.cfg").write_text("[tool:pytest]\ntestpaths = tests\nrag_core_cases = cases\n")
    code, out, _ = init(capsys, str(tmp_path))
    assert code == 0 and (tmp_path / "setup.cfg").read_text() == "[tool:pytest]\ntestpaths = tests\nrag_core_cases = cases\n"
    assert "setup.cfg: testpaths is 'tests' (kept)" in out and "run `pytest evals/`" in out
    assert "setup.cfg: rag_core_cases is 'cases' (kept)" in out


def test_a_pytest_ini_without_its_section_gains_it_and_a_broken_pyproject_is_left_alone(tmp_path, capsys):
    (tmp_path / "pytest.ini").write_text("# settings come later\n")
    assert init(capsys, str(tmp_path))[0] == 0
    assert (tmp_path / "pytest.ini").read_text().startswith("# settings come later\n\n[pytest]\n# rag-core")
    assert start_pytest(tmp_path).returncode == 0

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "pyproject.toml").write_text("[tool.pytest.ini_options\ntestpaths = 1\n")
    code, out, _ = init(capsys, str(broken))
    assert code == 0 and (broken / "pyproject.toml").read_text() == "[tool.pytest.ini_options\ntestpaths = 1\n"
    assert "pyproject.toml does not parse" in out and "[tool.pytest.ini_options]" in out
    assert files_in(broken) == NEW_FILES | {"pyproject.toml"}


# ------------------------------------------------------------------ the CI workflow


def workflow_steps(project: Path) -> tuple[dict, list[dict]]:
    workflow = yaml.safe_load((project / ".github" / "workflows" / "rag-core-evals.yml").read_text())
    return workflow, workflow["jobs"]["evals"]["steps"]


def run_install_step(project: Path, tmp_path: Path, install: str) -> subprocess.CompletedProcess[str]:
    """The workflow's install step, run by bash with a stand-in python that prints its arguments."""
    _, steps = workflow_steps(project)
    script = next(step["run"] for step in steps if "pip install" in step.get("run", ""))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "python").write_text('#!/bin/sh\nfor a in "$@"; do echo "arg: $a"; done\n')
    (bin_dir / "python").chmod(0o755)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "RAG_CORE_INSTALL": install}
    return subprocess.run(["bash", "-e", "-c", script], capture_output=True, text=True, env=env, timeout=60)


def test_the_workflow_installs_what_it_is_given_and_fails_on_skipped_required_cases(tmp_path, capsys):
    project = tmp_path / "project"
    assert init(capsys, str(project), "--install", SPEC)[0] == 0
    workflow, steps = workflow_steps(project)
    assert workflow["env"] == {"RAG_CORE_INSTALL": SPEC, "RAG_CORE_REQUIRE_ALL_CASES": "1"}
    runs = " ".join(step.get("run", "") for step in steps)
    assert "rag-core[evals]" not in runs and " -n " not in runs, "no package-index name, no xdist option"
    assert "pytest evals/" in runs
    installed = run_install_step(project, tmp_path, workflow["env"]["RAG_CORE_INSTALL"])
    assert installed.returncode == 0 and installed.stdout.splitlines()[-1] == f"arg: {SPEC}", installed


def test_without_install_the_workflow_stops_at_its_placeholder(tmp_path, capsys):
    code, out, _ = init(capsys, str(tmp_path))
    assert code == 0 and "Set RAG_CORE_INSTALL in" in out
    workflow, _ = workflow_steps(tmp_path)
    assert "<owner>" in workflow["env"]["RAG_CORE_INSTALL"]
    stopped = run_install_step(tmp_path, tmp_path, workflow["env"]["RAG_CORE_INSTALL"])
    assert stopped.returncode == 1 and "::error file=.github/workflows/rag-core-evals.yml::RAG_CORE_INSTALL is still" \
        in stopped.stdout and "arg:" not in stopped.stdout


def replay_step(project: Path) -> str:
    _, steps = workflow_steps(project)
    return next(step["run"] for step in steps if step.get("name") == "Replay the golden cases")


def stand_in_python(tmp_path: Path, offline_exit: int, pytest_exit: int) -> dict[str, str]:
    """A PATH whose python prints its arguments: ``-m rag_core offline -- true`` (the probe) exits
    ``offline_exit`` with the refusal rag-core prints, pytest exits ``pytest_exit``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "python").write_text(
        '#!/bin/sh\n'
        'if [ "$*" = "-m rag_core offline -- true" ]; then\n'
        '  [ ' + str(offline_exit) + ' = 0 ] || echo "rag-core offline: error: the kernel refused a user and network '
        'namespace (EPERM: Operation not permitted); true was not run" >&2\n'
        '  exit ' + str(offline_exit) + '\nfi\n'
        'echo "ran: $*"\nexit ' + str(pytest_exit) + '\n')
    (bin_dir / "python").chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}"}


def test_the_workflow_replays_under_rag_core_offline_where_the_runner_allows_it(tmp_path, capsys):
    """The replay step, run by bash in a project whose example was recorded: pytest runs in a
    network namespace of its own (a child process or a C-level socket finds no network)."""
    project = tmp_path / "project"
    assert init(capsys, str(project), "--install", SPEC)[0] == 0
    workflow, steps = workflow_steps(project)
    names = [step.get("name") for step in steps]
    lift = steps[names.index("Replay the golden cases") - 1]
    assert lift == {"if": "runner.os == 'Linux' && runner.environment == 'github-hosted'",
                    "run": "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 || true"}
    probe = subprocess.run([sys.executable, "-m", "rag_core", "offline", "--", "true"], capture_output=True, text=True,
                           env=environment())
    if probe.returncode != 0:
        pytest.skip(f"this kernel gives no network namespace: {probe.stderr.strip()}")
    record = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "evals/", "--record-mode=once",
                             "--emulator"], cwd=project, capture_output=True, text=True, timeout=300, env=environment())
    assert record.returncode == 0, record.stdout[-2000:] + record.stderr[-2000:]
    # the project's own conftest notes which network namespace its pytest ran in
    (project / "evals" / "conftest.py").write_text(
        "import os\nopen('netns.txt', 'w').write(os.readlink('/proc/self/ns/net'))\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    env = {**environment(), **workflow["env"], "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    replay = subprocess.run(["bash", "-e", "-c", replay_step(project)], cwd=project, capture_output=True, text=True,
                            timeout=300, env=env)
    assert replay.returncode == 0, replay.stdout[-2000:] + replay.stderr[-2000:]
    assert "::notice::" not in replay.stdout and "passed" in replay.stdout
    assert (project / "netns.txt").read_text() != os.readlink("/proc/self/ns/net")
    assert (project / "golden-report.md").is_file()


@pytest.mark.parametrize("pytest_exit", [0, 1])
def test_where_the_namespace_is_refused_the_workflow_replays_plainly_with_a_notice(pytest_exit, tmp_path, capsys):
    assert init(capsys, str(tmp_path / "project"), "--install", SPEC)[0] == 0
    replay = subprocess.run(["bash", "-e", "-c", replay_step(tmp_path / "project")], capture_output=True, text=True,
                            timeout=60, env=stand_in_python(tmp_path, offline_exit=2, pytest_exit=pytest_exit))
    assert replay.returncode == pytest_exit, "the replay's own status is the step's"
    assert replay.stdout.splitlines() == [
        "::notice::replaying without rag-core offline, so a child process or a C-level socket could reach the network: "
        "rag-core offline: error: the kernel refused a user and network namespace (EPERM: Operation not permitted); "
        "true was not run",
        "ran: -m pytest evals/ --golden-report=golden-report.md"]


@pytest.mark.parametrize("pytest_exit", [0, 1])
def test_where_the_namespace_is_given_the_replay_runs_inside_it(pytest_exit, tmp_path, capsys):
    assert init(capsys, str(tmp_path / "project"), "--install", SPEC)[0] == 0
    replay = subprocess.run(["bash", "-e", "-c", replay_step(tmp_path / "project")], capture_output=True, text=True,
                            timeout=60, env=stand_in_python(tmp_path, offline_exit=0, pytest_exit=pytest_exit))
    assert replay.returncode == pytest_exit
    assert replay.stdout.splitlines() == ["ran: -m rag_core offline -- python -m pytest evals/ "
                                          "--golden-report=golden-report.md"]


@pytest.mark.parametrize("spec", ["", "a\nb", "rag-core @ git+https://github.com/<owner>/rag-core.git"])
def test_a_bad_install_value_is_one_line_and_writes_nothing(spec, tmp_path, capsys):
    code, _, err = init(capsys, str(tmp_path), "--install", spec)
    assert code == 2 and len(err) == 1 and "--install:" in err[0] and not files_in(tmp_path)


def test_an_install_value_holding_a_token_is_refused(tmp_path, capsys):
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    code, _, err = init(capsys, str(tmp_path), "--install", f"rag-core @ git+https://x:{token}@github.com/a/rag-core.git")
    assert code == 2 and len(err) == 1 and "looks like a credential" in err[0] and "nothing was written" in err[0]
    assert token not in err[0] and not files_in(tmp_path)


def test_the_workflows_environment_fails_a_skipped_required_case(pytester, capsys, monkeypatch):
    """RAG_CORE_REQUIRE_ALL_CASES, as the workflow sets it, turns a requires: skip into a failure."""
    assert init(capsys, str(pytester.path))[0] == 0
    (pytester.path / "fixtures" / "goldens" / "needs_it.yaml").write_text(
        "id: needs_it\ntarget: m:f\nrequires: [no_such_package_here]\ninput: hi\n")
    env, _ = workflow_steps(pytester.path)
    monkeypatch.delenv("RAG_CORE_REQUIRE_ALL_CASES", raising=False)
    pytester.runpytest_subprocess("-p", "no:cacheprovider", *UNUSED_PLUGINS, "evals", "-k", "needs_it").assert_outcomes(
        skipped=1)
    for name, value in env["env"].items():
        monkeypatch.setenv(name, value)
    strict = pytester.runpytest_subprocess("-p", "no:cacheprovider", *UNUSED_PLUGINS, "evals", "-k", "needs_it")
    strict.assert_outcomes(failed=1)
    assert "no case may skip" in strict.stdout.str()


RETRIEVAL_SUITE = {
    "fixtures/retrieval/tiny.yaml": "name: tiny\ndataset: {judged: data/queries.yaml}\ndepth: 2\nmetrics: [recall@2]\n"
                                    "retrievers:\n  - {name: overlap, target: 'evals.overlap:retriever'}\n",
    "data/queries.yaml": "corpus: corpus.jsonl\nqueries:\n  - {id: q1, text: pad thai, relevant: [d1]}\n",
    "data/corpus.jsonl": '{"_id": "d1", "title": "Pad thai", "text": "noodles"}\n{"_id": "d2", "text": "green curry"}\n',
    "evals/overlap.py": "def retriever():\n"
                        "    def index(documents):\n"
                        "        global words\n"
                        "        words = {d['id']: set(f\"{d['title']} {d['text']}\".lower().split()) for d in documents}\n"
                        "    def search(query, k):\n"
                        "        return sorted(words, key=lambda d: -len(words[d] & set(query.split())))[:k]\n"
                        "    return index, search\n",
}


def test_the_retrieval_test_module_the_docs_name_is_written_and_runs_the_suites_added_later(tmp_path, capsys, monkeypatch):
    """docs/retrievers.md records a retriever with `pytest 'evals/test_retrieval.py::test_retrieval[...]'`,
    a module rag-core init did not write. Now it does: with no suite yet it is one skipped test
    naming where suites go (even where no case may skip), and a suite added later runs through it."""
    assert init(capsys, str(tmp_path))[0] == 0
    monkeypatch.setenv("RAG_CORE_REQUIRE_ALL_CASES", "1")  # as the scaffolded workflow sets it

    def pytest_in_project(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", *args], cwd=tmp_path,
                              capture_output=True, text=True, timeout=300, env=environment())

    empty = pytest_in_project("evals/test_retrieval.py")
    assert empty.returncode == 0 and "1 skipped" in empty.stdout, empty.stdout + empty.stderr
    assert "no retrieval suites in fixtures/retrieval/ (the rag_core_retrieval setting) yet" in empty.stdout
    for relative, text in RETRIEVAL_SUITE.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    recorded = pytest_in_project("evals/test_retrieval.py::test_retrieval[tiny/overlap]", "--record-mode=once",
                                 "--emulator")
    assert recorded.returncode == 0 and "1 passed" in recorded.stdout, recorded.stdout + recorded.stderr
    assert (tmp_path / "cassettes" / "retrieval" / "tiny" / "overlap.rankings.json").is_file()
    replayed = pytest_in_project("evals/test_retrieval.py")
    assert replayed.returncode == 0 and "1 passed" in replayed.stdout, replayed.stdout + replayed.stderr


# ------------------------------------------------------------------ the example that runs where it is written


def without(tmp_path: Path, blocked: set[str]) -> dict[str, str]:
    """An environment for a child in which ``blocked`` modules do not import, as in a project that
    never installed them (a sitecustomize refuses them before any import)."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(
        "import importlib.abc, sys\n"
        f"BLOCKED = {sorted(blocked)!r}\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name.split('.')[0] in BLOCKED:\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "for loaded in [m for m in sys.modules if m.split('.')[0] in BLOCKED]:  # imported by .pth files\n"
        "    del sys.modules[loaded]\n")
    env = environment()
    env["PYTHONPATH"] = os.pathsep.join([str(site), env["PYTHONPATH"]])
    return env


# the agent extra's packages, less openai (the project's own SDK) and certifi (which httpx and
# requests, installed here, import themselves; its own test is in test_optional_imports.py)
HARNESS_ONLY = set(AGENT_CORE_MODULES) - {"openai", "certifi"}


def test_a_project_with_the_harness_alone_gets_a_plain_sdk_example_that_records_and_replays(tmp_path):
    """The example needed the agent core: with the harness extra alone, recording it failed on a
    missing module, and replay printed that same command again."""
    env = without(tmp_path, HARNESS_ONLY)
    project = tmp_path / "project"
    init = subprocess.run([sys.executable, "-m", "rag_core", "init", str(project)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env=env)
    assert init.returncode == 0, init.stderr
    assert files_in(project) == {
        "fixtures/goldens/example_sdk_agent.yaml", "evals/example_agent.py", "fixtures/goldens/case.schema.json",
        "evals/__init__.py", "evals/test_goldens.py", "evals/test_retrieval.py", ".github/workflows/rag-core-evals.yml",
        "pytest.ini"}
    assert "plain openai SDK agent (evals/example_agent.py)" in init.stdout and "pip install 'rag-core[agent]'" in init.stdout
    workflow, _ = workflow_steps(project)
    assert workflow["env"]["RAG_CORE_INSTALL"].startswith("rag-core[harness] @ ")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    steps = [line.split("#")[0].strip() for line in init.stdout.splitlines() if line.strip().startswith("pytest ")]
    assert steps == ["pytest evals/ --record-mode=once --emulator", "pytest evals/"] and all(s in readme for s in steps)
    for step in steps:
        ran = subprocess.run([sys.executable, "-m", *step.split(), "-p", "no:cacheprovider"], cwd=project,
                             capture_output=True, text=True, timeout=300, env=env)
        assert ran.returncode == 0 and "1 passed" in ran.stdout, ran.stdout + ran.stderr
    golden = yaml.safe_load((project / "fixtures" / "goldens" / "example_sdk_agent.golden.yaml").read_text())
    assert golden["apis"] == ["openai-chat", "openai-chat"] and golden["tools"][0]["name"] == "lookup_recipe"
    assert "tamarind" in golden["output"]["equals"]


def test_with_no_provider_sdk_init_says_what_to_install_and_writes_nothing(tmp_path):
    project = tmp_path / "project"
    result = subprocess.run([sys.executable, "-m", "rag_core", "init", str(project)], capture_output=True,
                            text=True, timeout=120, cwd=tmp_path, env=without(tmp_path, HARNESS_ONLY | {"openai"}))
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "pip install 'rag-core[agent]'" in lines[0] and "pip install openai" in lines[0], lines
    assert "nothing was written" in lines[0] and not project.exists()


def test_an_openai_older_than_the_agent_core_takes_gets_the_plain_example(monkeypatch):
    from rag_core.evals.scaffold import examples

    monkeypatch.setattr(examples, "_openai_release", lambda: (1, 50, 0))
    assert examples.agent_core_missing() == ["openai>=1.108.1"]
    assert examples.choose().case_id == "example_sdk_agent"
    monkeypatch.setattr(examples, "_openai_release", lambda: (0, 28, 1))
    with pytest.raises(examples.NoExample):
        examples.choose()


def test_the_agent_core_modules_are_the_agent_extras():
    import importlib.metadata
    import re
    import tomllib

    agent = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["agent"]
    distributions = {re.split(r"[<>=\[!~; ]", r, maxsplit=1)[0].lower() for r in agent}
    provided = {module for module, names in importlib.metadata.packages_distributions().items()
                if {n.lower() for n in names} & distributions and not module.startswith("_")}
    assert set(AGENT_CORE_MODULES) == provided
