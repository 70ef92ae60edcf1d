"""rag-core as a user installs it: no top-level package but ``rag_core``, a light pytest plugin,
and the harness working in a project that has its own ``evals`` package.

Each test runs Python in a fresh process, outside this repository, so that only what is
installed is importable (this repository's own ``evals/`` folder is not).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(args: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.pop("PYTHONPATH", None)
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def pytest_in(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], project)


def test_installing_rag_core_adds_no_top_level_evals_package(tmp_path):
    result = run([sys.executable, "-c", "import evals"], tmp_path)
    assert result.returncode != 0 and "No module named 'evals'" in result.stderr


def test_the_agent_extra_brings_what_limits_the_in_memory_product_to_one_blas_thread():
    """Without threadpoolctl the in-memory store's product ran on every BLAS thread, and a query
    on a busy machine waited for a core it did not need: it came only with scikit-learn, through
    the ``local`` extra, so the light install (``.[evals]``) searched on every thread."""
    from importlib.metadata import requires

    agent = [r for r in requires("rag-core") or [] if 'extra == "agent"' in r]
    assert any(r.replace(" ", "").startswith("threadpoolctl") for r in agent), agent


def test_the_harness_install_requires_no_sdk_and_no_numerical_stack():
    """A project that pins its own agent keeps its SDK versions: nothing the harness requires
    names a provider SDK or the agent core's libraries."""
    from importlib.metadata import requires

    required = [r.split(";")[0].replace(" ", "") for r in requires("rag-core") or []
                if "extra ==" not in r or 'extra == "harness"' in r]
    names = {re.split(r"[<>=\[!~]", r, maxsplit=1)[0].lower() for r in required}
    assert names == {"pydantic", "pydantic-core", "pyyaml", "pytest", "vcrpy", "packaging", "google-re2",
                     "wrapt"}, required


def test_the_pytest_plugins_import_nothing_heavy(tmp_path):
    """Installed plugins load in every pytest session of every project: they must stay cheap
    (measured: a few ms; see the README). What they would pay for is in the list below."""
    probe = textwrap.dedent("""
        import sys, pytest
        before = set(sys.modules)
        import rag_core.evals.plugins.golden, rag_core.evals.plugins.retrieval
        print(" ".join(sorted(set(sys.modules) - before)))
    """)
    result = run([sys.executable, "-c", probe], tmp_path)
    assert result.returncode == 0, result.stderr
    loaded = result.stdout.split()
    heavy = ("pydantic", "yaml", "vcr", "numpy", "openai", "rag_core.agent", "rag_core.evals.golden.case",
             "rag_core.evals.retrieval.suite")
    assert not [m for m in loaded if m.split(".")[0] in heavy or m.startswith(heavy)], loaded


def test_a_project_without_golden_cases_sees_no_extra_output(tmp_path):
    (tmp_path / "test_plain.py").write_text("def test_one():\n    assert True\n")
    result = pytest_in(tmp_path, "-q")
    assert result.returncode == 0, result.stdout
    assert "rag-core" not in result.stdout and "golden" not in result.stdout, result.stdout


def test_the_plugins_register_their_options_in_one_group(tmp_path):
    # without pytest-recording (which defines --record-mode and --block-network when it is there)
    result = pytest_in(tmp_path, "-p", "no:recording", "--help")
    sections = [line for line in result.stdout.splitlines() if line.startswith("rag-core")]
    assert sections == ["rag-core golden cases and retrieval suites:"], sections
    section = result.stdout.split(sections[0], 1)[1].split("\n\n", 1)[0]
    for option in ("--update-goldens", "--record-mode", "--block-network", "--emulator", "--update-baselines",
                   "--report-dir"):
        assert option in section


def test_the_golden_plugin_works_beside_pytest_recording(tmp_path):
    """Both define --record-mode and --block-network; installed together, pytest started with an
    argparse conflict. Now pytest-recording defines them and both read the same values."""
    import importlib.util

    assert importlib.util.find_spec("pytest_recording"), "pytest-recording is a dev dependency"
    assert pytest_in(tmp_path, "--help").returncode == 0
    (tmp_path / "fixtures" / "goldens").mkdir(parents=True)
    (tmp_path / "fixtures" / "goldens" / "pantry.yaml").write_text(CASE)
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "test_goldens.py").write_text(
        "def test_golden_case(golden_case, golden_harness):\n    golden_harness.check(golden_case)\n")
    (tmp_path / "evals" / "test_vcr.py").write_text(
        "import pytest\n\n@pytest.mark.vcr\ndef test_uses_pytest_recording(record_mode):\n"
        "    assert record_mode == 'once'\n")
    recorded = pytest_in(tmp_path, "evals/", "--record-mode=once", "--emulator", "--block-network")
    assert recorded.returncode == 0 and "2 passed" in recorded.stdout, recorded.stdout + recorded.stderr
    replayed = pytest_in(tmp_path, "evals/test_goldens.py")
    assert replayed.returncode == 0 and "1 passed" in replayed.stdout, replayed.stdout


CASE = """\
id: pantry
agent: {instructions: [Be brief.]}
input: What is in the pantry?
emulate:
  - text: Fish sauce and palm sugar.
expect:
  output: {contains: palm sugar}
"""


def test_a_user_project_with_its_own_evals_package_records_and_replays(tmp_path):
    """The folder name the README recommends, as a package, next to the installed harness."""
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = evals\n")
    evals = tmp_path / "evals"
    evals.mkdir()
    (evals / "__init__.py").write_text("")
    (evals / "helpers.py").write_text("ANSWER = 42\n")
    (evals / "test_mine.py").write_text("from evals.helpers import ANSWER\n\ndef test_mine():\n    assert ANSWER == 42\n")
    (evals / "test_goldens.py").write_text("def test_golden_case(golden_case, golden_harness):\n    golden_harness.check(golden_case)\n")
    (tmp_path / "fixtures" / "goldens").mkdir(parents=True)
    (tmp_path / "fixtures" / "goldens" / "pantry.yaml").write_text(CASE)

    recorded = pytest_in(tmp_path, "evals/", "--record-mode=once", "--emulator")
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert (tmp_path / "cassettes" / "pantry.yaml").is_file()
    assert "new golden: pantry" in recorded.stdout
    replayed = pytest_in(tmp_path, "evals/")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "2 passed" in replayed.stdout


def test_every_third_party_module_the_library_imports_is_declared():
    """``httpx2`` was imported by the readers but declared nowhere (it came with the openai SDK)."""
    import ast
    from importlib.metadata import packages_distributions, requires

    declared = {re.split(r"[<>=\[!~; ]", r, maxsplit=1)[0].lower().replace("_", "-") for r in requires("rag-core") or []}
    owners = packages_distributions()
    missing = set()
    for path in (ROOT / "rag_core").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else [])
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top in ("rag_core", "__future__"):
                    continue
                distributions = {d.lower().replace("_", "-") for d in owners.get(top, [top])}
                if not distributions & declared:
                    missing.add((top, path.relative_to(ROOT).as_posix()))
    assert not missing, sorted(missing)
