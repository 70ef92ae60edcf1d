"""The project's conftest.py hands pytest-xdist workers the tests recorded as slow first (see its
docstring), and leaves every other order alone."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]


def _project_conftest():
    spec = importlib.util.spec_from_file_location("rag_core_project_conftest", ROOT / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_slow_come_first_longest_first_and_the_rest_keep_their_order():
    conftest = _project_conftest()
    seconds = {"b": 6.0, "d": 40.0, "e": 6.0, "f": 4.9}
    order = conftest.slow_first(list("abcdefg"), lambda n: seconds.get(n, 0.0), slow=5.0)
    assert order == ["d", "b", "e", "a", "c", "f", "g"]


@pytest.mark.parametrize("text", [None, "", "{not json", "[[\"a\", 1]]", '{"a": "soon"}'],
                         ids=["missing", "empty", "broken", "a-list", "not-a-number"])
def test_a_missing_or_unreadable_durations_file_leaves_the_order_as_collected(tmp_path, text):
    conftest = _project_conftest()
    path = tmp_path / ".test_durations"
    if text is not None:
        path.write_text(text)
    assert conftest.recorded_durations(path) == {}


def test_pytest_splits_file_is_read():
    conftest = _project_conftest()
    assert conftest.DURATIONS == ROOT / ".test_durations"
    durations = conftest.recorded_durations()
    assert durations and all(isinstance(s, float) for s in durations.values())


MODULE = '''
import pytest

@pytest.mark.parametrize("n", range(4))
def test_quick(n):
    pass

def test_slow():
    pass

def test_slower():
    pass
'''


def _order(result: pytest.RunResult) -> list[str]:
    """The tests in the order they passed (pytest's and xdist's verbose lines)."""
    return [re.search(r"test_order\.py::(\S+)", line).group(1) for line in result.stdout.lines
            if "PASSED" in line and "test_order.py::" in line]


def test_an_xdist_worker_runs_the_recorded_slow_tests_first_and_a_plain_run_keeps_its_order(pytester: pytest.Pytester):
    pytest.importorskip("xdist")
    pytester.makeconftest((ROOT / "conftest.py").read_text(encoding="utf-8"))
    pytester.makepyfile(test_order=MODULE)
    (pytester.path / ".test_durations").write_text(json.dumps(
        {"test_order.py::test_slow": 7.0, "test_order.py::test_slower": 30.0, "test_order.py::test_quick[2]": 0.1}))
    quick = [f"test_quick[{n}]" for n in range(4)]

    plain = pytester.runpytest("-p", "no:cacheprovider", "-v")
    assert _order(plain) == [*quick, "test_slow", "test_slower"], plain.stdout.str()

    spread = pytester.runpytest("-p", "no:cacheprovider", "-v", "-n", "1")
    assert _order(spread) == ["test_slower", "test_slow", *quick], spread.stdout.str()
