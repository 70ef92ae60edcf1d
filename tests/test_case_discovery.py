"""Which case files a session reads, and that reading fewer changes nothing it reports.

Under ``--case`` only the files that can hold the selected cases, or clash with them, are read
whole; the others are skimmed. An xdist controller collects nothing and reads none (each worker
collects). Either way the tests, their ids, their errors and the number deselected are what
reading every file gives.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from rag_core.evals.golden import case_files as case_files_module
from rag_core.evals.golden.discovery import discover, selects
from tests.golden_project import UNUSED_PLUGINS_OPTIONS

pytest_plugins = ["pytester"]

# every kind of file discovery meets: valid, variants, clashes (direct and through a third file),
# unreadable ones, and tops a skim cannot read (merge keys, a key twice, a stream list, odd ids)
FILES = {
    "alpha": "id: alpha\ninput: hi\ntags: [smoke]\n",
    "beta": "id: beta\ninput: hi\nstream: [false, true]\n",
    "beta_sync": "id: beta.sync\ninput: hi\n",  # clashes with beta's sync variant
    "gamma": "id: gamma\ninput: hi\ncassette: shared.yaml\n",
    "delta": "id: delta\ninput: hi\ncassette: shared.yaml\ncompare_with: 'm:f'\n",
    "eps": "id: eps\ninput: hi\ncassette: shared.compare.yaml\n",  # clashes with delta's compared subject
    "zeta": "id: zeta\ninput: hi\ncassette: other.yaml\n",
    "eta": "id: eta\ninput: hi\ncassette: other.yaml\n",  # zeta and eta clash; alpha has nothing to do with them
    "broken": "id: broken\ninput: [unclosed\n",
    "not_a_case": "- a list\n",
    "invalid": "id: invalid\ninput: hi\nturns: [a]\n",  # both input and turns
    "bad_id": "id: 'has space'\ninput: hi\n",
    "renamed": "id: other_name\ninput: hi\n",
    "merged": "base: &b {input: hi}\n<<: *b\nid: merged\n",
    "twice": "id: twice\nid: twice_again\ninput: hi\n",
    "numbered": "id: 42\ninput: hi\n",
    "listed": "id: listed\ninput: hi\nstream: [true]\n",
    "bad_stream": "id: bad_stream\ninput: hi\nstream: []\n",
    "bomb": "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nid: bomb\ninput: hi\n",
}
WANTED = [["alpha"], ["beta"], ["beta.sync"], ["beta.stream"], ["gamma"], ["eps"], ["zeta"], ["broken"],
          ["invalid"], ["other_name"], ["renamed"], ["merged"], ["twice"], ["listed.stream"], ["bad_stream"],
          ["has space"], ["bad_id"], ["bomb"], ["nothing"], ["alpha", "eta"]]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for name, text in FILES.items():
        (tmp_path / f"{name}.yaml").write_text(text)
    return tmp_path


@pytest.mark.parametrize("wanted", WANTED, ids=["+".join(w) for w in WANTED])
def test_a_selection_sees_what_reading_every_file_sees(folder, wanted):
    every, some = discover(folder), discover(folder, wanted)
    assert len(some) == len(every)  # the same tests, so the same number deselected
    assert [shown(r) for r in some if selects(wanted, r.id)] == [shown(r) for r in every if selects(wanted, r.id)]
    assert all(r.case is not None or r.error for r in some)  # a skimmed file's test, if it ever ran, fails


def shown(ref):
    return ref.id, ref.case.model_dump() if ref.case else None, ref.error


def test_a_selection_reads_whole_only_what_can_matter_to_it(folder, monkeypatch):
    read = counting_reads(monkeypatch)
    discover(folder, ["alpha"])
    # alpha, the files a skim cannot tell about (they might hold it), and beta_sync, which clashes
    # with one of them (beta, a stream list)
    assert set(read) == {"alpha", "broken", "not_a_case", "merged", "twice", "numbered", "listed", "bad_stream",
                         "beta", "beta_sync"}
    read.clear()
    discover(folder, ["eps"])  # eps shares delta's cassette; delta shares gamma's
    assert {"eps", "delta", "gamma"} <= set(read) and not {"alpha", "zeta", "eta", "renamed", "invalid"} & set(read)


def test_a_skim_expands_no_alias(tmp_path):
    bomb = tmp_path / "bomb.yaml"
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"] + [
        f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, 12)]
    bomb.write_text("\n".join(levels) + "\nid: bomb\ninput: hi\n")  # 10**12 nodes written out
    skimmed = case_files_module.skim_case_file(bomb)
    assert skimmed is not None and skimmed.id == "bomb"


# ------------------------------------------------------------------ through pytest
CASE = """
    id: {id}
    input: How do I make pad thai?
    emulate:
      - text: Soak the noodles.
"""


@pytest.fixture
def cases_project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(f"[pytest]\naddopts = -p no:cacheprovider {UNUSED_PLUGINS_OPTIONS}\n")  # also read by xdist workers
    goldens = pytester.path / "fixtures" / "goldens"
    goldens.mkdir(parents=True)
    for name in ("first", "second", "third"):
        (goldens / f"{name}.yaml").write_text(textwrap.dedent(CASE.format(id=name)))
    (goldens / "broken.yaml").write_text("id: broken\ninput: [unclosed\n")
    (pytester.path / "evals").mkdir()
    (pytester.path / "evals" / "test_goldens.py").write_text(
        "def test_golden_case(golden_case, golden_harness):\n    golden_harness.check(golden_case)\n")
    return pytester


def counting_reads(monkeypatch) -> list[str]:
    read: list[str] = []
    parse = case_files_module.parse_case_file
    monkeypatch.setattr(case_files_module, "parse_case_file", lambda path: read.append(path.stem) or parse(path))
    return read


def test_case_reads_only_the_selected_file_and_reports_as_before(cases_project, monkeypatch):
    read = counting_reads(monkeypatch)
    result = cases_project.runpytest("evals", "--case", "second", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["*test_golden_case[[]second[]]*", "1/4 tests collected (3 deselected)*"])
    assert read == ["second", "broken"]  # broken: a skim cannot tell what it holds


def test_case_still_fails_a_case_that_clashes_with_an_unselected_file(cases_project):
    (cases_project.path / "fixtures" / "goldens" / "zzz.yaml").write_text(textwrap.dedent(CASE.format(id="second")))
    result = cases_project.runpytest("evals", "--case", "second")
    result.assert_outcomes(failed=2, deselected=3)
    result.stdout.fnmatch_lines(["*zzz.yaml and *second.yaml both define a case with the id 'second'*"])


def test_an_xdist_controller_reads_no_case_file(cases_project, monkeypatch):
    pytest.importorskip("xdist")
    from rag_core.evals.golden import discovery

    read = []  # the controller runs in this process, its workers do not
    found = discovery.discover
    monkeypatch.setattr(discovery, "discover", lambda *args: read.append(args) or found(*args))
    result = cases_project.runpytest("evals", "-n", "2", "-k", "broken or first")
    result.assert_outcomes(failed=2)  # first has no cassette; broken fails as it did (workers deselect the rest)
    result.stdout.fnmatch_lines(["*broken.yaml:*: not valid YAML*"])
    assert read == []
    cases_project.runpytest("evals", "-k", "broken or first").assert_outcomes(failed=2, deselected=2)
    assert len(read) == 1  # without xdist, the one process collects, and reads them once


# the controller's heap as its last report has come in (its workers write nothing here)
FREEZE_COUNT = """
import gc, pathlib

def pytest_sessionfinish(session):
    if not hasattr(session.config, "workerinput"):
        pathlib.Path("frozen.txt").write_text(str(gc.get_freeze_count()))
"""


def test_an_xdist_controller_freezes_its_heap_before_its_workers_report(cases_project):
    pytest.importorskip("xdist")
    (cases_project.path / "conftest.py").write_text(FREEZE_COUNT)
    cases_project.runpytest_subprocess("evals", "-n", "2", "-k", "first or second").assert_outcomes(failed=2)
    assert int((cases_project.path / "frozen.txt").read_text()) > 10_000  # pytest and the plugins it imported


def test_markers_lists_the_tags_of_the_cases(cases_project):
    (cases_project.path / "fixtures" / "goldens" / "first.yaml").write_text(
        textwrap.dedent(CASE.format(id="first")) + "tags: [smoke]\n")
    result = cases_project.runpytest("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.smoke: golden cases tagged 'smoke'"])
