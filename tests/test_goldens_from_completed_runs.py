"""Meta-tests: a golden is only ever written from a run that completed. A run that raised (and was
not expected to) or made no provider call is reported by its exception and where it was raised,
without a diff against the nothing it observed, without an ``--update-goldens`` hint, and
``--update-goldens`` keeps the reviewed golden byte for byte."""

from __future__ import annotations

import textwrap

import pytest

pytest_plugins = ["pytester"]

import bm25s  # noqa: E402,F401  (imported before pytester's in-process runs; see test_harness.py)
import numpy  # noqa: E402,F401
import openai  # noqa: E402,F401
import vcr  # noqa: E402,F401

from tests.golden_project import CASES, project  # noqa: E402,F401  (project: a fixture)
from tests.test_harness_targets import SHOP_AGENT, SHOP_CASE  # noqa: E402

# an agent whose knowledge lives behind a service of the team's own; the shelf goes offline later
KITCHEN = '''
from rag_core import Agent, Document, Knowledge


class Shelf(Knowledge):
    def search(self, query, max_results=None, filters=None):
        return [Document(content="Soak the rice noodles in warm water.", name="pad_thai")]


def make(model):
    return Agent(model=model, knowledge=Shelf(), add_knowledge_to_context=True, search_knowledge=False, instructions=["Be brief."])
'''
OFFLINE_SHELF = '''
    def search(self, query, max_results=None, filters=None):
        raise ConnectionError("the recipe shelf is offline")
'''
KITCHEN_CASE = """
    id: kitchen
    agent: kitchen:make
    input: How do I make pad thai?
    emulate:
      - text: Soak the noodles.
"""


def _golden(project: pytest.Pytester, case_id: str) -> bytes:
    return (project.path / "fixtures" / "goldens" / f"{case_id}.golden.yaml").read_bytes()


def _failure_text(result: pytest.RunResult, case_id: str) -> str:
    """What the failing case printed, from its first line to the end of its report."""
    out = result.stdout.str()
    start = out.index(f"_ test_golden_case[{case_id}] _")
    return out[out.index("\n", start) + 1:out.index("rag-core run record:", start)]


@pytest.fixture
def shop(project: pytest.Pytester) -> pytest.Pytester:
    (project.path / "shop_agent.py").write_text(SHOP_AGENT)
    (project.path / "fixtures" / "goldens" / "shop.yaml").write_text(textwrap.dedent(SHOP_CASE))
    project.runpytest("evals", "-k", "shop", "--record-mode=once", "--emulator").assert_outcomes(passed=1)
    return project


@pytest.fixture
def kitchen(project: pytest.Pytester) -> pytest.Pytester:
    (project.path / "kitchen.py").write_text(KITCHEN)
    (project.path / "fixtures" / "goldens" / "kitchen.yaml").write_text(textwrap.dedent(KITCHEN_CASE))
    project.runpytest("evals", "-k", "kitchen", "--record-mode=once", "--emulator").assert_outcomes(passed=1)
    return project


def _assert_kept(project: pytest.Pytester, case_id: str, reviewed: bytes, lead: str, where: str) -> None:
    """Replay and ``--update-goldens`` alike: the exception leads, nothing is offered to accept,
    and the reviewed golden stays byte for byte."""
    replayed = project.runpytest("evals", "-k", case_id)
    replayed.assert_outcomes(failed=1, deselected=len(CASES))
    text = _failure_text(replayed, case_id)
    assert text.startswith(f"{case_id}: {lead}\n  raised {where}"), text
    assert "--update-goldens" not in replayed.stdout.str()  # accepting what it observed is never the fix
    assert "(expected)" not in text and "+null" not in text  # no diff against a run that never happened
    assert "differences not shown, since the run did not complete: " in text

    # what a user who still tries it gets: the golden as it was, and why first
    updated = project.runpytest("evals", "-k", case_id, "--update-goldens")
    updated.assert_outcomes(failed=1, deselected=len(CASES))
    text = _failure_text(updated, case_id)
    assert text.startswith(f"{case_id}: {lead}\n  raised {where}"), text
    assert (f"fixtures/goldens/{case_id}.golden.yaml is kept as it was: a golden is written only from a run that "
            "completed") in text
    updated.stdout.fnmatch_lines(["1 cases, 1 failed, 0 new goldens, 0 goldens updated, *"])
    assert "golden updated:" not in updated.stdout.str()
    assert _golden(project, case_id) == reviewed

    # nor does the command that accepts a change: it is offered nowhere, and run anyway it keeps
    # the golden and the cassette as they were
    assert "--accept" not in replayed.stdout.str() and "--accept" not in updated.stdout.str()
    cassette = (project.path / "cassettes" / f"{case_id}.yaml").read_bytes()
    accepted = project.runpytest("evals", "-k", case_id, "--accept")
    accepted.assert_outcomes(failed=1, deselected=len(CASES))
    text = _failure_text(accepted, case_id)
    assert text.startswith(f"{case_id}: {lead}\n  raised {where}"), text
    assert f"fixtures/goldens/{case_id}.golden.yaml is kept as it was" in text
    assert "accepted:" not in accepted.stdout.str()
    assert _golden(project, case_id) == reviewed
    assert (project.path / "cassettes" / f"{case_id}.yaml").read_bytes() == cassette


def test_update_goldens_keeps_the_golden_of_a_target_called_with_the_wrong_signature(shop):
    reviewed = _golden(shop, "shop")
    module = shop.path / "shop_agent.py"
    module.write_text(module.read_text().replace("def shop_agent(question, context):",
                                                 "def shop_agent(question, context, store):"))
    line = module.read_text().splitlines().index("def shop_agent(question, context, store):") + 1
    _assert_kept(shop, "shop", reviewed,
                 "shop_agent:shop_agent raised TypeError: shop_agent() missing 1 required positional argument: 'store'",
                 f"in calling it (defined at shop_agent.py:{line})")


def test_update_goldens_keeps_the_golden_of_an_agent_that_raises(kitchen):
    reviewed = _golden(kitchen, "kitchen")
    assert b"Soak the rice noodles" in reviewed
    module = kitchen.path / "kitchen.py"
    working = '''
    def search(self, query, max_results=None, filters=None):
        return [Document(content="Soak the rice noodles in warm water.", name="pad_thai")]
'''
    module.write_text(module.read_text().replace(working, OFFLINE_SHELF))
    line = module.read_text().splitlines().index('        raise ConnectionError("the recipe shelf is offline")') + 1
    _assert_kept(kitchen, "kitchen", reviewed, "the agent raised ConnectionError: the recipe shelf is offline",
                 f"at kitchen.py:{line}, in search")


def test_a_first_recording_of_a_run_that_raises_writes_nothing_and_says_where(project):
    (project.path / "kitchen.py").write_text(KITCHEN.replace('''
    def search(self, query, max_results=None, filters=None):
        return [Document(content="Soak the rice noodles in warm water.", name="pad_thai")]
''', OFFLINE_SHELF))
    (project.path / "fixtures" / "goldens" / "kitchen.yaml").write_text(textwrap.dedent(KITCHEN_CASE))
    result = project.runpytest("evals", "-k", "kitchen", "--record-mode=once", "--emulator", "--update-goldens")
    result.assert_outcomes(failed=1, deselected=len(CASES))
    result.stdout.fnmatch_lines(["*kitchen: recording failed, nothing was written*: the run failed: ConnectionError: "
                                 "the recipe shelf is offline (raised at kitchen.py:*, in search)"])
    assert not (project.path / "fixtures" / "goldens" / "kitchen.golden.yaml").exists()
    assert not (project.path / "cassettes" / "kitchen.yaml").exists()


def test_a_case_that_expects_its_error_still_gets_its_golden_written(project):
    case = project.path / "fixtures" / "goldens" / "refused.yaml"
    case.write_text(textwrap.dedent("""
        id: refused
        agent: {instructions: [Be brief.]}
        input: Hello?
        emulate:
          - {status: 400, message: "Invalid 'input[0].content': string too long.", type: invalid_request_error}
        expect:
          error: {type: ModelProviderError, status_code: 400}
    """))
    project.runpytest("evals", "-k", "refused", "--record-mode=once", "--emulator").assert_outcomes(passed=1)
    golden = project.path / "fixtures" / "goldens" / "refused.golden.yaml"
    assert "error:\n  type: ModelProviderError\n  status_code: 400\n" in golden.read_text()

    case.write_text(case.read_text().replace("Be brief.", "Be very brief."))
    project.runpytest("evals", "-k", "refused", "--update-goldens").assert_outcomes(passed=1, deselected=len(CASES))
    written = golden.read_text()
    assert "Be very brief." in written and "error:\n  type: ModelProviderError\n" in written
    project.runpytest("evals", "-k", "refused", "--no-strict-cassettes").assert_outcomes(passed=1, deselected=len(CASES))
