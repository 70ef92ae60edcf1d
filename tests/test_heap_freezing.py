"""The project's conftest.py freezes what outlives a test file, and never garbage (see its docstring)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]

# A file that keeps a large structure alive (as an imported library does) and leaves reference
# cycles behind as garbage, each with a finalizer that notes it ran.
KEEPS_AND_LITTERS = '''
import gc, os
KEPT = [[n] for n in range(60_000)]

class Cycle:
    def __init__(self):
        self.me = self
    def __del__(self):
        with open(os.environ["FINALIZED"], "a") as f:
            f.write("x")

def test_litters():
    gc.disable()  # the cycles must still be garbage when the file ends
    for _ in range(3):
        Cycle()
'''

# What the next file sees: the kept structure frozen, the garbage finalized, and its own
# cycles still collected.
CHECKS = '''
import gc, os, weakref

def test_the_survivors_are_frozen_and_the_garbage_is_gone():
    gc.enable()
    assert gc.get_freeze_count() >= 60_000
    with open(os.environ["FINALIZED"]) as f:
        assert f.read() == "xxx"

def test_cycles_made_after_the_freeze_are_still_collected():
    class Node:
        pass
    node = Node()
    node.me = node
    alive = weakref.ref(node)
    del node
    gc.collect()
    assert alive() is None
'''


def test_a_test_file_leaves_its_survivors_frozen_and_its_garbage_collected(pytester: pytest.Pytester,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makeconftest((ROOT / "conftest.py").read_text(encoding="utf-8"))
    pytester.makepyfile(test_a_keeps=KEEPS_AND_LITTERS, test_b_checks=CHECKS)
    monkeypatch.setenv("FINALIZED", str(pytester.path / "finalized.txt"))
    (pytester.path / "finalized.txt").write_text("")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", "test_a_keeps.py",
                                           "test_b_checks.py")
    result.assert_outcomes(passed=3)
