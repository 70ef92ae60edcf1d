"""Meta-tests: baselines are keyed by suite and retriever and checked when read; orphans are only
files of their kind that nothing owns as the files are at the end of the session, and
``--prune-orphans`` never deletes what another session wrote meanwhile."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

import bm25s  # noqa: E402,F401  (imported before pytester's in-process runs; see test_harness.py)
import numpy  # noqa: E402,F401
import openai  # noqa: E402,F401
import vcr  # noqa: E402,F401

from tests.golden_project import CASES, project, record  # noqa: E402,F401  (project: a fixture)

ROOT = Path(__file__).resolve().parents[1]

SUITE = """
name: {name}
dataset: {{judged: fixtures/retrieval/kitchen/queries.yaml}}
depth: 10
metrics: [ndcg@10, recall@10]
retrievers:
  - {{name: bm25, store: memory, search_type: keyword}}
baseline: {baseline}
tolerance: 0.001
"""

EVALS = "def test_retrieval(retrieval_target, retrieval_check):\n    retrieval_check(retrieval_target)\n"


def backdate(*paths: Path) -> None:
    """As if written an hour before the session: only such a file may be pruned."""
    old = time.time() - 3600
    for path in paths:
        os.utime(path, (old, old))


@pytest.fixture
def suites(pytester: pytest.Pytester) -> pytest.Pytester:
    """A user project with the kitchen queries and one suite, ``alpha``, keeping baselines in
    ``fixtures/retrieval/baselines/alpha`` (more suites are written by the tests)."""
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    kitchen = pytester.path / "fixtures" / "retrieval" / "kitchen"
    kitchen.mkdir(parents=True)
    for name in ("corpus.jsonl", "queries.yaml"):
        shutil.copy(ROOT / "fixtures" / "retrieval" / "kitchen" / name, kitchen)
    write_suite(pytester, "alpha", "fixtures/retrieval/baselines/alpha")
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "test_retrieval.py").write_text(EVALS)
    return pytester


def write_suite(project: pytest.Pytester, name: str, baseline: str, file: str | None = None) -> None:
    (project.path / "fixtures" / "retrieval" / f"{file or name}.yaml").write_text(SUITE.format(name=name, baseline=baseline))


def orphan_lines(result: pytest.RunResult) -> list[str]:
    """What the session summary said about orphans."""
    return sorted(line.strip() for line in result.stdout.lines if line.strip().startswith(("orphan ", "orphans ")))


def baselines(project: pytest.Pytester) -> dict[str, dict]:
    folder = project.path / "fixtures" / "retrieval" / "baselines"
    return {str(p.relative_to(folder)): json.loads(p.read_text()) for p in sorted(folder.rglob("*.json"))}


# ------------------------------------------------------------- defect 3: baselines keyed by suite
@pytest.mark.parametrize("folder", ["fixtures/retrieval/baselines", "fixtures/retrieval/baselines/alpha"],
                         ids=["a-shared-folder", "alphas-own-folder"])
def test_two_suites_in_one_baseline_folder_keep_their_own_baselines_and_prune_neither(suites, folder):
    write_suite(suites, "alpha", folder)
    write_suite(suites, "beta", folder)
    suites.runpytest("evals", "--update-baselines").assert_outcomes(passed=2)
    written = baselines(suites)
    assert len(written) == 2, written  # one each, not one overwriting the other
    assert sorted((b["suite"], b["retriever"]) for b in written.values()) == [("alpha", "bm25"), ("beta", "bm25")]
    own = "alpha/bm25.json" if folder.endswith("alpha") else "alpha@bm25.json"
    assert written[own]["suite"] == "alpha"

    result = suites.runpytest("evals", "--prune-orphans")
    result.assert_outcomes(passed=2)
    assert orphan_lines(result) == []
    assert baselines(suites) == written

    # each suite gates on its own file: raise alpha's, and only alpha regresses
    path = suites.path / "fixtures" / "retrieval" / "baselines" / own
    data = json.loads(path.read_text())
    data["metrics"]["ndcg@10"] += 0.05
    path.write_text(json.dumps(data))
    result = suites.runpytest("evals")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*FAILED evals/test_retrieval.py::test_retrieval[[]alpha/bm25[]]*"])


def _valid_baseline(suites: pytest.Pytester, **changes) -> str:
    suites.runpytest("evals", "--update-baselines").assert_outcomes(passed=1)
    path = suites.path / "fixtures" / "retrieval" / "baselines" / "alpha" / "bm25.json"
    return json.dumps({**json.loads(path.read_text()), **changes})


@pytest.mark.parametrize(("content", "cause"), [
    ("[]", "not a baseline: expected a mapping with suite, retriever, metrics and per_query, got []"),
    ("null", "not a baseline: expected a mapping with suite, retriever, metrics and per_query, got null"),
    ("{}", "not a baseline: it has no suite, retriever, metrics, per_query"),
    ('{"suite": "alpha", "retriever": "bm25", "metrics": [], "per_query": {}}', "not a baseline: metrics is []"),
    ("other-suite", "the baseline of suite 'gamma', not of suite 'alpha'"),
    ("other-retriever", "the baseline of retriever 'dense', not of 'bm25'"),
], ids=["list", "null", "empty", "bad-metrics", "another-suite", "another-retriever"])
def test_a_baseline_that_is_not_this_retrievers_is_one_clear_error(suites, content, cause):
    if content == "other-suite":
        content = _valid_baseline(suites, suite="gamma")
    elif content == "other-retriever":
        content = _valid_baseline(suites, retriever="dense")
    path = suites.path / "fixtures" / "retrieval" / "baselines" / "alpha" / "bm25.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    result = suites.runpytest("evals")
    result.assert_outcomes(failed=1)  # never a gate silently without its baseline
    result.stdout.fnmatch_lines([f"*fixtures/retrieval/baselines/alpha/bm25.json: {cause}*"])
    assert "Traceback" not in result.stdout.str() and "raise BaselineError" not in result.stdout.str()

    # --update-baselines rewrites a broken file of this retriever, never another suite's baseline
    result = suites.runpytest("evals", "--update-baselines")
    if "gamma" in content:
        result.assert_outcomes(failed=1)
        assert path.read_text() == content
    else:
        result.assert_outcomes(passed=1)
        assert json.loads(path.read_text())["suite"] == "alpha"
        suites.runpytest("evals").assert_outcomes(passed=1)


def test_two_suite_files_with_one_suite_name_are_an_error(suites):
    write_suite(suites, "alpha", "fixtures/retrieval/baselines/other", file="alpha_copy")
    result = suites.runpytest("evals", "--update-baselines")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*fixtures/retrieval/alpha.yaml and fixtures/retrieval/alpha_copy.yaml both define the "
                                 "suite 'alpha'; rename one*"])
    assert baselines(suites) == {}


def test_an_unkeyed_baseline_in_a_shared_folder_still_loads_and_is_no_orphan(suites):
    """``<retriever>.json`` in a folder not named after the suite (written before baselines were
    keyed) is the suite's baseline while it has no keyed one."""
    write_suite(suites, "alpha", "fixtures/retrieval/baselines")
    suites.runpytest("evals", "--update-baselines").assert_outcomes(passed=1)
    folder = suites.path / "fixtures" / "retrieval" / "baselines"
    (folder / "alpha@bm25.json").rename(folder / "bm25.json")
    data = json.loads((folder / "bm25.json").read_text())
    data["metrics"]["ndcg@10"] += 0.05
    (folder / "bm25.json").write_text(json.dumps(data))
    backdate(folder / "bm25.json")
    result = suites.runpytest("evals", "--prune-orphans")
    result.assert_outcomes(failed=1)  # read: the raised number is a regression
    result.stdout.fnmatch_lines(["*ndcg@10 = * fell below the baseline *"])
    assert (folder / "bm25.json").exists() and orphan_lines(result) == []
    # once the keyed file is written, the unkeyed one is an orphan
    suites.runpytest("evals", "--update-baselines").assert_outcomes(passed=1)
    backdate(folder / "bm25.json")
    result = suites.runpytest("evals", "--prune-orphans")
    result.stdout.fnmatch_lines(["*orphan deleted: fixtures/retrieval/baselines/bm25.json"])
    assert sorted(p.name for p in folder.iterdir()) == ["alpha@bm25.json"]


def test_the_projects_own_baselines_load():
    from rag_core.evals.orphans import BaselineFiles
    from rag_core.evals.retrieval.gate import load_baseline
    from rag_core.evals.retrieval.suite import load_suite, suite_files

    suites = [load_suite(p) for p in suite_files(ROOT / "fixtures" / "retrieval")]
    for suite in suites:
        for retriever in suite.retrievers:
            baseline = load_baseline(suite, ROOT, retriever.name)
            assert baseline is not None and baseline["suite"] == suite.name, (suite.name, retriever.name)
    assert BaselineFiles(ROOT, ROOT / "fixtures" / "retrieval").orphans() == ([], None)


# ----------------------------------------------- defect 4: files written meanwhile are never pruned
OTHER_SESSION = '''
import os, time
from pathlib import Path

def test_another_session_records_a_case_meanwhile():
    """What another session recording case ``late`` leaves: its case file, cassette and golden
    (copied with their old modification times, as a move or a checkout of them would)."""
    root = Path(__file__).resolve().parents[1]
    goldens, cassettes = root / "fixtures" / "goldens", root / "cassettes"
    (goldens / "late.yaml").write_text((goldens / "with_tool.yaml").read_text().replace("id: with_tool", "id: late"))
    for source, target in ((cassettes / "with_tool.yaml", cassettes / "late.yaml"),
                           (goldens / "with_tool.golden.yaml", goldens / "late.golden.yaml")):
        target.write_bytes(source.read_bytes())
        old = time.time() - 3600
        os.utime(target, (old, old))

def test_another_session_is_recording_a_cassette_now():
    root = Path(__file__).resolve().parents[1]
    (root / "cassettes" / "in_progress.yaml").write_bytes((root / "cassettes" / "with_tool.yaml").read_bytes())
'''


def test_a_case_recorded_while_the_session_ran_keeps_its_files(project):
    record(project)
    gone = project.path / "cassettes" / "gone.yaml"
    gone.write_bytes((project.path / "cassettes" / "with_tool.yaml").read_bytes())
    backdate(gone)
    (project.path / "evals" / "test_other_session.py").write_text(OTHER_SESSION)
    result = project.runpytest("evals", "--prune-orphans")
    result.assert_outcomes(passed=len(CASES) + 2)
    for name in ("cassettes/late.yaml", "fixtures/goldens/late.golden.yaml", "cassettes/in_progress.yaml"):
        assert (project.path / name).exists(), name
    assert not gone.exists()
    # late's files are owned by its case file, read at the end of the session: not even listed
    assert orphan_lines(result) == ["orphan deleted: cassettes/gone.yaml",
                                    "orphan kept: cassettes/in_progress.yaml (modified since this session started)"]


BASELINE_MEANWHILE = '''
from pathlib import Path

def test_another_session_writes_a_baseline_meanwhile():
    folder = Path(__file__).resolve().parents[1] / "fixtures" / "retrieval" / "baselines" / "alpha"
    (folder / "fresh.json").write_text((folder / "bm25.json").read_text().replace('"bm25"', '"fresh"'))
'''


def test_a_baseline_written_while_the_session_ran_is_not_pruned(suites):
    suites.runpytest("evals", "--update-baselines").assert_outcomes(passed=1)
    (suites.path / "evals" / "test_zz_meanwhile.py").write_text(BASELINE_MEANWHILE)
    result = suites.runpytest("evals", "--prune-orphans")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*orphan kept: fixtures/retrieval/baselines/alpha/fresh.json "
                                 "(modified since this session started)"])
    assert (suites.path / "fixtures" / "retrieval" / "baselines" / "alpha" / "fresh.json").exists()


def test_a_file_owned_again_before_it_is_deleted_is_kept(tmp_path):
    """``prune`` checks each path once more just before unlinking it, against the case files as
    they are then."""
    from rag_core.evals.orphans import GoldenFiles, prune

    cases, cassettes = tmp_path / "goldens", tmp_path / "cassettes"
    cases.mkdir()
    cassettes.mkdir()
    for name in ("a.yaml", "b.yaml"):
        (cassettes / name).write_text("interactions: []\nversion: 1\n")
    backdate(*cassettes.iterdir())
    files = GoldenFiles(cases, cassettes)
    orphans, note = files.orphans()
    assert note is None and [p.name for p in orphans] == ["a.yaml", "b.yaml"]
    (cases / "b.yaml").write_text("id: b\ninput: hi\nemulate: [{text: hello}]\n")  # a case now owns b.yaml
    deleted, kept = prune(files, orphans, time.time_ns())
    assert [p.name for p in deleted] == ["a.yaml"]
    assert [(p.name, why) for p, why in kept] == [("b.yaml", "a case uses it now")]
    assert (cassettes / "b.yaml").exists()


# ------------------------------------------------ defect 5: only files of their kind are orphans
def test_prune_deletes_only_cassettes_and_goldens_never_other_yaml(project):
    project.makeini("[pytest]\naddopts = -p no:cacheprovider\npythonpath = .\nrag_core_cassettes = .\n")
    record(project)
    assert (project.path / "with_tool.yaml").exists()  # the cassettes are in the project's root
    others = {"docker-compose.yaml": "services:\n  db: {image: postgres}\n", "mkdocs.yaml": "site_name: docs\n",
              "fixtures/goldens/notes.golden.yaml": "title: not a golden\n",
              "fixtures/goldens/empty.golden.yaml": ""}
    for name, text in others.items():
        (project.path / name).write_text(text)
    (project.path / "gone.yaml").write_bytes((project.path / "with_tool.yaml").read_bytes())
    (project.path / "fixtures" / "goldens" / "gone.golden.yaml").write_text("output: {equals: hi}\n")
    backdate(*(project.path / n for n in [*others, "gone.yaml", "fixtures/goldens/gone.golden.yaml"]))

    listed = project.runpytest("evals")
    listed.assert_outcomes(passed=len(CASES))
    assert orphan_lines(listed) == ["orphan (no case uses it): fixtures/goldens/gone.golden.yaml",
                            "orphan (no case uses it): gone.yaml"]
    project.runpytest("evals", "--prune-orphans").assert_outcomes(passed=len(CASES))
    for name, text in others.items():
        assert (project.path / name).read_text() == text, name
    assert not (project.path / "gone.yaml").exists()
    assert not (project.path / "fixtures" / "goldens" / "gone.golden.yaml").exists()
    assert (project.path / "with_tool.yaml").exists() and (project.path / "with_markdown.yaml").exists()


def test_prune_deletes_only_baseline_shaped_files(suites):
    suites.runpytest("evals", "--update-baselines").assert_outcomes(passed=1)
    folder = suites.path / "fixtures" / "retrieval" / "baselines" / "alpha"
    others = {"empty.json": "{}", "list.json": "[]", "package.json": '{"name": "site", "version": "1.0.0"}',
              "broken.json": "{not json"}
    for name, text in others.items():
        (folder / name).write_text(text)
    (folder / "removed.json").write_text((folder / "bm25.json").read_text().replace('"bm25"', '"removed"'))
    backdate(*folder.iterdir())
    result = suites.runpytest("evals")
    result.assert_outcomes(passed=1)
    assert orphan_lines(result) == ["orphan (no retriever uses it): fixtures/retrieval/baselines/alpha/removed.json"]
    suites.runpytest("evals", "--prune-orphans").stdout.fnmatch_lines(["*orphan deleted: *alpha/removed.json"])
    assert sorted(p.name for p in folder.iterdir()) == sorted([*others, "bm25.json"])


def test_paths_resolved_a_folder_at_a_time_are_what_resolve_gives(tmp_path, monkeypatch):
    """The orphan check resolves two files per case; ``resolved_all`` resolves each folder once.
    Links to files and folders, names that are not there, ``..`` and relative paths included."""
    from rag_core.evals.common.paths import resolved_all

    real = tmp_path / "real"
    (real / "sub").mkdir(parents=True)
    (real / "a.yaml").write_text("x")
    (tmp_path / "linked").symlink_to(real, target_is_directory=True)
    (real / "link.yaml").symlink_to(real / "sub" / "elsewhere.yaml")
    (real / "sub" / "elsewhere.yaml").write_text("y")
    (real / "loop.yaml").symlink_to(real / "loop.yaml")
    monkeypatch.chdir(tmp_path)
    paths = [real / "a.yaml", tmp_path / "linked" / "a.yaml", tmp_path / "linked" / "link.yaml",
             real / "missing.yaml", tmp_path / "linked" / "sub" / "..", real / "sub" / ".." / "a.yaml",
             Path("linked") / "a.yaml", Path("linked/sub/elsewhere.yaml"), Path(".")]
    assert resolved_all(paths) == [p.resolve() for p in paths]
    with pytest.raises(Exception) as theirs:
        (real / "loop.yaml").resolve()
    with pytest.raises(type(theirs.value)):  # a link to itself fails as resolve fails
        resolved_all([real / "loop.yaml"])
