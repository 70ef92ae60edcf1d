"""Within a case's run, uuid, random and secrets give a sequence seeded from the case (and live
repeat): a program that makes ids and keys with them, in its thread, a pool job or an asyncio
task, records and replays with no ``normalize:`` rule; runs at once each draw their own sequence;
outside a run the functions are the real ones; a value from a source the harness does not seed
fails naming the field, both values and the rule that absorbs it."""

from __future__ import annotations

import asyncio
import json
import random
import secrets
import shlex
import textwrap
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import datetime, timezone

import pytest
import yaml

pytest_plugins = ["pytester"]

import bm25s  # noqa: E402,F401  (imported before pytester's in-process runs; see test_harness.py)
import numpy  # noqa: E402,F401
import openai  # noqa: E402,F401
import vcr  # noqa: E402,F401

from rag_core.evals.recording import seeded_randomness  # noqa: E402
from rag_core.evals.recording.seeded_randomness import seeded  # noqa: E402
from tests.golden_project import project  # noqa: E402,F401  (project: a fixture)


def _draws() -> list[str]:
    """Values a program makes for ids and keys: in its own thread, a thread it starts, a pool job
    and an asyncio task."""
    values = [uuid.uuid4().hex, f"{random.random():.17f}", str(random.randint(0, 10**9)), secrets.token_hex(8)]
    worker = threading.Thread(target=lambda: values.append(str(uuid.uuid4())))
    worker.start()
    worker.join()
    with ThreadPoolExecutor(1) as pool:
        values.append(pool.submit(lambda: secrets.token_urlsafe(12) + random.choice("abcdefgh")).result())

    async def task() -> str:
        return str(secrets.randbelow(10**9)) + str(uuid.uuid1())

    async def main() -> str:
        return await asyncio.create_task(task())

    values.append(asyncio.run(main()))
    return values


def test_a_run_and_what_it_starts_draw_from_the_runs_sequence():
    with seeded("pantry"):
        first = _draws()
    with seeded("pantry"):
        again = _draws()
    with seeded("pantry_other"):
        other = _draws()
    assert first == again
    assert all(a != b for a, b in zip(first, other))
    assert len(set(first)) == len(first)


def test_outside_a_run_the_functions_are_the_real_ones():
    seeded_randomness.install()
    assert seeded_randomness.current() is None
    random.seed(7)  # the real global generator, as a test outside any run uses it
    expected = random.Random(7)
    assert [random.random() for _ in range(3)] == [expected.random() for _ in range(3)]
    with seeded("pantry") as run:
        assert seeded_randomness.current() is run
        sequence = {uuid.uuid4() for _ in range(100)}
    outside = {uuid.uuid4() for _ in range(100)}
    assert len(outside) == 100 and not outside & sequence
    assert secrets.token_hex(16) != secrets.token_hex(16)


def test_code_a_run_left_running_draws_real_values_once_the_run_has_ended():
    ended, drawn = threading.Event(), []

    def left_behind() -> None:
        ended.wait()
        drawn.append((seeded_randomness.current(), uuid.uuid4()))

    with seeded("pantry"):
        thread = threading.Thread(target=left_behind)
        thread.start()
    ended.set()
    thread.join()
    with seeded("pantry"):
        sequence = [uuid.uuid4() for _ in range(3)]
    assert drawn[0][0] is None and drawn[0][1] not in sequence


def test_runs_at_once_each_draw_their_own_sequence_whatever_the_interleaving():
    """Two runs in two threads, drawing in turns: each gets what it gets alone."""
    alone = {}
    for name in ("case_a", "case_b"):
        with seeded(name):
            alone[name] = [uuid.uuid4().hex for _ in range(6)]
    for order in (["case_a", "case_b"] * 6, ["case_b"] * 3 + ["case_a"] * 6 + ["case_b"] * 3):
        turns = {name: threading.Semaphore(0) for name in alone}
        done = threading.Semaphore(0)
        drawn: dict[str, list[str]] = {name: [] for name in alone}

        def run(name: str) -> None:
            with seeded(name):
                for _ in range(6):
                    turns[name].acquire()
                    drawn[name].append(uuid.uuid4().hex)
                    done.release()

        threads = [threading.Thread(target=run, args=(name,)) for name in alone]
        for thread in threads:
            thread.start()
        for name in order:
            turns[name].release()
            done.acquire()
        for thread in threads:
            thread.join()
        assert drawn == alone


def test_a_runs_uuid1_counts_from_the_case_clock_and_its_node_is_random():
    clock = datetime(2026, 1, 15, 9, 30, 0)
    with seeded("pantry", clock):
        first, second = uuid.uuid1(), uuid.uuid1()
        given = uuid.uuid1(node=0x123456789ABC, clock_seq=5)
    with seeded("pantry", clock):
        assert [uuid.uuid1(), uuid.uuid1()] == [first, second]
    assert first.version == 1 and second.time == first.time + 1
    gregorian = datetime(1582, 10, 15, tzinfo=timezone.utc)
    assert first.time == (clock.replace(tzinfo=timezone.utc) - gregorian).total_seconds() * 10**7
    assert first.node & 1 << 40  # the multicast bit: a random node, not a machine's address
    assert (given.node, given.clock_seq) == (0x123456789ABC, 5)


def test_every_function_of_the_global_generator_and_of_secrets_is_seeded():
    def draws() -> list[object]:
        items = list(range(10))
        random.shuffle(items)
        return [items, random.sample(range(100), 3), random.choices("abc", k=4), random.uniform(1, 2),
                random.gauss(0, 1), random.getrandbits(64), random.randbytes(4), random.randrange(5, 500, 5),
                secrets.token_bytes(8), secrets.token_urlsafe(), secrets.choice("abcdef"), secrets.randbits(32)]

    with seeded("pantry"):
        first = draws()
    with seeded("pantry"):
        assert draws() == first
    random.seed(1)
    expected = random.Random(1)
    with seeded("pantry"):  # a program that seeds the global generator seeds its run's
        random.seed(42)
        assert random.random() == random.Random(42).random()
    assert random.random() == expected.random()  # the real one goes on as it was
    with pytest.raises(ValueError):
        with seeded("pantry"):
            secrets.randbelow(0)


def test_stores_a_recorded_retriever_builds_have_names_of_their_own_in_every_run():
    """Its scratch collections and tables are named from the OS: with uuid4 seeded, two runs of
    the same retriever in one process would share one, and a table an earlier process left."""
    from rag_core.evals.retrieval.evaluate import build_store
    from rag_core.evals.retrieval.suite import RetrieverSpec
    from tests.fakes import HashEmbedder

    spec, names = RetrieverSpec(name="chroma", store="chroma", search_type="vector"), []
    for _ in range(2):
        with seeded("kitchen/chroma"):
            names.append(build_store(spec, HashEmbedder(), 10, lambda: "").collection_name)
    assert names[0] != names[1]


def test_a_retriever_that_breaks_ties_at_random_replays_its_recorded_rankings(tmp_path):
    import dataclasses

    from rag_core.evals.retrieval.evaluate import Rankings
    from rag_core.evals.retrieval.recording import ReplaySettings, run_recorded

    def ranked(emulated: bool) -> Rankings:
        tied = [f"d{i}" for i in range(20)]
        random.shuffle(tied)  # every document scores the same: ties broken at random
        return Rankings({"q1": tied})

    settings = ReplaySettings(tmp_path / "cassettes" / "retrieval", record_mode="once", emulator=True)
    recorded, _ = run_recorded("kitchen", "ties", 10, settings, "kitchen", ranked)
    replayed, notes = run_recorded("kitchen", "ties", 10, dataclasses.replace(settings, record_mode="none"),
                                   "kitchen", ranked)
    assert replayed.by_query == recorded.by_query and notes == []


@pytest.mark.parametrize("recorded, sent", [
    ({"instructions": "You are a Thai cook."}, {"instructions": "You are a Thai chef."}),
    ({"model": "gpt-5.2", "temperature": 0.2}, {"model": "gpt-5.2", "temperature": 0.7}),
    ({"input": "pad thai"}, {"input": "pad thai", "store": True}),
    ({"metadata": {"build": "release-20260115"}}, {"metadata": {"build": "release 20260115"}}),
    ({"key": "agents-sdk:run:" + "a1" * 16}, {"key": "agents-sdk:group:" + "b2" * 16}),
    ({"tool": "lookupRecipes"}, {"tool": "fetchRecipesNow"}),  # a renamed tool: words of both cases, no digit
])
def test_an_edit_of_the_program_is_never_offered_a_rule(recorded, sent):
    from rag_core.evals.golden.volatile import volatile

    assert volatile(recorded, sent) is None


def test_a_random_token_of_letters_alone_is_a_value_made_anew_each_run():
    """About one base64 token of 11 characters in ten has no digit: it is random still."""
    from rag_core.evals.golden.volatile import volatile

    found = volatile({"task": "8074b3df:OyxZhdyVtxI"}, {"task": "41d67b80:QbNOlwGrTUs"})
    assert found is not None and [value.field for value in found.values] == ["task"]


def test_values_made_anew_each_run_are_named_with_both_values_and_rules_that_absorb_them():
    from rag_core.evals.golden.normalize_rules import NormalizeRule
    from rag_core.evals.golden.normalizing import normalize
    from rag_core.evals.golden.volatile import volatile

    text = "You help the pantry. " * 10
    recorded = {"prompt_cache_key": "agents-sdk:run:" + "3f" * 16, "input": [
        {"content": f"{text}Session 1b4e28ba-2fa1-11d2-883f-0016d3cca427 opened."}, {"token": "Ab3-xY9_" + "q" * 14}]}
    sent = {"prompt_cache_key": "agents-sdk:run:" + "9c" * 16, "input": [
        {"content": f"{text}Session 6fa459ea-ee8a-3ca4-894e-db77e160355e opened."}, {"token": "Zk83mQp4" + "r" * 14}]}
    found = volatile(recorded, sent)
    assert found is not None
    assert [value.field for value in found.values] == ["prompt_cache_key", "input[0].content", "input[1].token"]
    # a long value: the part around where it differs
    assert ("input[0].content: recorded '…he pantry. You help the pantry. Session 1b4e28ba-2fa1-11d2-883f-0016d3cca427 "
            "opened.', now '…he pantry. You help the pantry. Session 6fa459ea-ee8a-3ca4-894e-db77e160355e opened.'"
            ) in found.fields()
    rules = [NormalizeRule(**rule) for rule in yaml.safe_load(found.yaml())["normalize"]]
    assert rules == found.rules
    assert [rule.path for rule in rules] == ["requests[*].prompt_cache_key", "requests[*].input[*].content",
                                             "requests[*].input[*].token"]
    assert normalize({"requests": [recorded]}, rules) == normalize({"requests": [sent]}, rules)
    assert normalize({"requests": [recorded]}, rules)["requests"][0]["input"][0]["content"].endswith(
        "Session <uuid, per run> opened.")


# ---------------------------------------------------------------- golden cases (meta-tests)

RANDOM_IDS_AGENT = '''
import asyncio
import os
import random
import secrets
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from uuid import uuid4  # bound while the case imports this module

from openai import OpenAI

AT_IMPORT = uuid4().hex  # made while the case imports it


def ids():
    made = {"uuid4": uuid4().hex, "uuid1": str(uuid.uuid1())}
    worker = threading.Thread(target=lambda: made.update(thread=uuid.uuid4().hex))
    worker.start()
    worker.join()
    with ThreadPoolExecutor(1) as pool:
        made["pool_job"] = pool.submit(lambda: f"{random.random():.17f}:{random.randint(0, 10**9)}").result()

    async def task():
        return secrets.token_hex(8) + ":" + secrets.token_urlsafe(8)

    async def main():
        return await asyncio.create_task(task())

    made["asyncio_task"] = asyncio.run(main())
    return made


def agent(question):
    client = OpenAI(max_retries=0)
    response = client.responses.create(model="gpt-5.2", input=question, metadata={"at_import": AT_IMPORT, **ids()})
    return response.output_text


def answering_with_ids(question):
    """Its answer is the ids it made (those made at import are the importing case's)."""
    made = ids()
    OpenAI(max_retries=0).responses.create(model="gpt-5.2", input=question, metadata=made)
    return " ".join(made[key] for key in sorted(made))


def unseeded(question):
    """An id from the OS, which the harness leaves alone."""
    client = OpenAI(max_retries=0)
    response = client.responses.create(model="gpt-5.2", input=question,
                                       metadata={"request_id": "req_" + os.urandom(16).hex(), "app": "pantry"})
    return response.output_text
'''


def _case(project, case_id: str, target: str) -> None:
    (project.path / "random_ids_agent.py").write_text(RANDOM_IDS_AGENT)
    (project.path / "fixtures" / "goldens" / f"{case_id}.yaml").write_text(textwrap.dedent(f"""\
        id: {case_id}
        target: random_ids_agent:{target}
        input: What is in the pantry?
        emulate:
          - text: Fish sauce and palm sugar.
    """))


def _golden(project, case_id: str) -> dict:
    return yaml.safe_load((project.path / "fixtures" / "goldens" / f"{case_id}.golden.yaml").read_text())


def test_a_target_making_ids_in_its_threads_and_tasks_records_and_replays_with_no_rule(project, monkeypatch):
    _case(project, "random_ids", "agent")
    recorded = project.runpytest("evals", "--case", "random_ids", "--record-mode=once", "--emulator")
    recorded.assert_outcomes(passed=1)
    metadata = _golden(project, "random_ids")["requests"][0]["metadata"]
    assert set(metadata) == {"at_import", "uuid4", "uuid1", "thread", "pool_job", "asyncio_task"}
    monkeypatch.setenv("CI", "true")  # stale cassettes fail
    for _ in range(2):
        replayed = project.runpytest("evals", "--case", "random_ids")
        replayed.assert_outcomes(passed=1)
        replayed.stdout.fnmatch_lines(["1 cases, 0 failed, 0 new goldens, 0 goldens updated, 0 recorded, 0 stale*"])
    assert _golden(project, "random_ids")["requests"][0]["metadata"] == metadata


def _live_answers(project, *options: str) -> dict[str, list[str]]:
    results = project.path / "live-results.jsonl"
    results.unlink(missing_ok=True)
    result = project.runpytest("evals", "--case", "ids_a", "--case", "ids_b", "--live", "--emulator", *options)
    result.assert_outcomes(passed=2)
    entries = [json.loads(line) for line in results.read_text().splitlines()]
    return {entry["id"]: [run["answer"] for run in entry["repeats"]] for entry in entries}


def test_runs_at_once_each_draw_their_own_sequence_and_repeat_0_is_the_recordings(project):
    for case_id in ("ids_a", "ids_b"):
        _case(project, case_id, "answering_with_ids")
    project.makeconftest("""
        import json

        def pytest_runtest_logreport(report):
            for key, info in report.user_properties:
                if key == "rag_core_live":
                    with open("live-results.jsonl", "a") as out:
                        out.write(json.dumps(info) + "\\n")
    """)
    one_at_a_time = _live_answers(project, "--repeat", "3", "--concurrency", "1")
    at_once = _live_answers(project, "--repeat", "3", "--concurrency", "6", "--emulator-latency", "0.1")
    assert at_once == one_at_a_time
    answers = one_at_a_time["ids_a"] + one_at_a_time["ids_b"]
    assert len(set(answers)) == 6  # every repeat of every case its own
    project.runpytest("evals", "--case", "ids_a", "--record-mode=once", "--emulator").assert_outcomes(passed=1)
    assert _golden(project, "ids_a")["output"]["equals"] == one_at_a_time["ids_a"][0]


def _printed_rules(output: str) -> str:
    """The first ``normalize:`` block a failure printed, as printed."""
    lines = output.splitlines()
    start = lines.index("normalize:")
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("  - {"))
    return "\n".join(lines[start:end]) + "\n"


def _command_after(output: str, lead: str, end: str | None = None) -> list[str]:
    line = next(line for line in output.splitlines() if lead in line)
    command = line.split(lead, 1)[1]
    return shlex.split(command.split(end)[0] if end else command)


def test_a_value_the_harness_does_not_seed_fails_with_the_field_both_values_and_the_rule(project, monkeypatch):
    _case(project, "unseeded", "unseeded")
    project.runpytest("evals", "--case", "unseeded", "--record-mode=once", "--emulator").assert_outcomes(passed=1)
    recorded = _golden(project, "unseeded")["requests"][0]["metadata"]["request_id"]
    monkeypatch.setenv("CI", "true")
    replayed = project.runpytest("evals", "--case", "unseeded")
    replayed.assert_outcomes(failed=1)
    out = replayed.stdout.str()
    # said once, where the change is first shown (the golden's requests), with the cassette's request it makes stale
    assert "cassettes/unseeded.yaml:request[0] differs only in values made anew each run: metadata.request_id: " \
           f"recorded '{recorded}', now 'req_" in out
    rules = _printed_rules(out)
    assert rules == ('normalize:\n  - {path: "requests[*].metadata.request_id", pattern: "(?<=req_)[0-9a-f]{32}", '
                     'placeholder: "<hex, per run>"}\n')
    case = project.path / "fixtures" / "goldens" / "unseeded.yaml"
    case.write_text(case.read_text() + rules)  # pasted as printed
    project.runpytest(*_command_after(out, "if the change is intended: pytest ", ", then review")).assert_outcomes(passed=1)
    assert _golden(project, "unseeded")["requests"][0]["metadata"] == {"request_id": "req_<hex, per run>",
                                                                        "app": "pantry"}
    project.runpytest("evals", "--case", "unseeded").assert_outcomes(passed=1)


def test_a_recording_made_without_seeding_is_made_again_by_the_printed_command(project, monkeypatch):
    _case(project, "random_ids", "agent")

    real_seeded = seeded_randomness.seeded

    @contextmanager
    def seeded_otherwise(name, clock=None, part="turns"):
        # values of another sequence, as a recording made before seeding has: fixed, so that what
        # the stale report says of them does not depend on what a real random source gave
        with real_seeded(f"made before seeding: {name}", clock, part) as source:
            yield source

    with monkeypatch.context() as unseeded:
        unseeded.setattr(seeded_randomness, "seeded", seeded_otherwise)
        project.runpytest("evals", "--case", "random_ids", "--record-mode=once", "--emulator").assert_outcomes(passed=1)
    monkeypatch.setenv("CI", "true")
    stale = project.runpytest("evals", "--case", "random_ids")
    stale.assert_outcomes(failed=1)
    out = stale.stdout.str()
    assert "only in values made anew each run: metadata.at_import: recorded" in out
    assert "which the harness seeds within a case, recording it again makes them the same in every run" in out
    command = _command_after(out, "if the change is intended: ", ", then review")
    assert command[0] == "pytest"
    project.runpytest(*command[1:]).assert_outcomes(passed=1)
    project.runpytest("evals", "--case", "random_ids").assert_outcomes(passed=1)


def test_a_module_imported_by_conftest_binds_what_a_run_seeds(project, monkeypatch):
    """pytest imports the harness's plugin with its plugins, before ``conftest.py``: a module that
    conftest.py imports and that binds ``from uuid import uuid4`` then binds the function a run
    seeds (in a process of its own, as pytest starts)."""
    _case(project, "conftest_ids", "answering_with_ids")
    project.makeconftest("import random_ids_agent  # noqa: F401  (imported before any case runs)\n")
    recorded = project.runpytest_subprocess("evals", "--case", "conftest_ids", "--record-mode=once", "--emulator")
    recorded.assert_outcomes(passed=1)
    monkeypatch.setenv("CI", "true")
    project.runpytest_subprocess("evals", "--case", "conftest_ids").assert_outcomes(passed=1)
