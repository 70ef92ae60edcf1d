"""Within a case's run, the key orders a program's libraries leave to the process come in one
order: Chroma's record metadata (a Rust ``HashMap`` in its core) and Agno's documents (built from
a Python ``set``) are sorted, so a program that sends them records and replays with no
``normalize:`` rule in any process; outside a run they are the libraries' own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

pytest_plugins = ["pytester"]

chromadb = pytest.importorskip("chromadb")

import openai  # noqa: E402,F401  (imported before pytester's runs; see test_harness.py)
import vcr  # noqa: E402,F401

from rag_core.evals.recording import stable_orders  # noqa: E402
from rag_core.evals.recording.seeded_randomness import seeded  # noqa: E402
from tests.golden_project import project  # noqa: E402,F401  (project: a fixture)

ROOT = Path(__file__).resolve().parents[1]

# what Agno's Chroma store writes for a chunk of a recipe, and what the program sends of it
METADATA = {"source": "ThaiRecipes.pdf", "page": 2, "chunk": 1, "chunk_size": 349, "linked_to": "",
            "content_hash": "738ac704", "name": "tom_kha_gai", "content_id": "c1"}


def _collection(path: Path) -> object:
    client = chromadb.PersistentClient(path=str(path))
    collection = client.create_collection("recipes")
    collection.add(ids=[f"doc{i}" for i in range(8)], embeddings=[[1.0, i / 10] for i in range(8)],
                   documents=[f"recipe {i}" for i in range(8)], metadatas=[dict(METADATA, page=i) for i in range(8)])
    return collection


def test_within_a_run_chroma_gives_each_records_metadata_with_its_keys_sorted(tmp_path):
    stable_orders.install()
    collection = _collection(tmp_path)
    with seeded("pantry"):
        queried = collection.query(query_embeddings=[[1.0, 0.0]], n_results=8)["metadatas"][0]
        got = collection.get()["metadatas"]
        peeked = collection.peek()["metadatas"]
    for metadata in [*queried, *got, *peeked]:
        assert list(metadata) == sorted(METADATA)
    assert {each["page"] for each in queried} == set(range(8))  # the values as stored


def test_outside_a_run_chroma_gives_its_own_order(tmp_path):
    """The real conversion: each map in its own hash order (24 maps of 8 keys all in sorted order
    by chance: about 1 in 40320^24)."""
    stable_orders.install()
    collection = _collection(tmp_path)
    orders = [list(metadata) for _ in range(3)
              for metadata in collection.query(query_embeddings=[[1.0, 0.0]], n_results=8)["metadatas"][0]]
    assert any(order != sorted(METADATA) for order in orders)


AGNO_DOCUMENTS = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from rag_core.evals.recording import stable_orders
    from rag_core.evals.recording.seeded_randomness import seeded

    stable_orders.install()
    from agno.knowledge.document.base import Document

    document = Document(content="Simmer coconut milk with galangal.", name="tom_kha_gai", meta_data={"page": 2})
    with seeded("pantry"):
        within = list(document.to_dict())
    print(json.dumps({"within": within, "outside": list(document.to_dict())}))
""")


def test_agno_documents_give_their_fields_in_one_order_within_a_run_in_every_process():
    pytest.importorskip("agno")
    seen = []
    for seed in ("0", "1", "2", "3", "5"):  # hash seeds whose sets of the three names iterate in four orders
        result = subprocess.run([sys.executable, "-c", AGNO_DOCUMENTS, str(ROOT)], capture_output=True, text=True,
                                check=True, env={**os.environ, "PYTHONHASHSEED": seed})
        seen.append(json.loads(result.stdout.splitlines()[-1]))
    assert all(each["within"] == ["content", "meta_data", "name"] for each in seen)
    assert len({tuple(each["outside"]) for each in seen}) > 1  # outside a run: the process's own order


AGNO_IMPORTED_AGAIN = textwrap.dedent("""
    import importlib, json, sys
    sys.path.insert(0, sys.argv[1])
    from rag_core.evals.recording import stable_orders
    from rag_core.evals.recording.seeded_randomness import seeded

    stable_orders.install()  # a first run: its post-import hook waits for agno
    import agno.knowledge.document.base
    for name in [name for name in sys.modules if name.startswith("agno")]:
        del sys.modules[name]  # as pytest's in-process runs restore sys.modules after a run
    stable_orders.install()  # the next run's start
    document = importlib.import_module("agno.knowledge.document.base").Document(
        content="Simmer coconut milk with galangal.", name="tom_kha_gai", meta_data={"page": 2})
    with seeded("pantry"):
        print(json.dumps(list(document.to_dict())))
""")


def test_a_module_imported_again_as_a_new_module_is_ordered_within_the_next_run():
    """wrapt's hooks fire once per module name: a module imported again after a run (a new module
    with new classes) is ordered all the same."""
    pytest.importorskip("agno")
    for seed in ("0", "1", "2", "3", "5"):
        result = subprocess.run([sys.executable, "-c", AGNO_IMPORTED_AGAIN, str(ROOT)], capture_output=True,
                                text=True, check=True, env={**os.environ, "PYTHONHASHSEED": seed})
        assert json.loads(result.stdout.splitlines()[-1]) == ["content", "meta_data", "name"], seed


# ---------------------------------------------------------------- golden cases (meta-tests)

CHROMA_AGENT = '''
import json
import tempfile

import chromadb
from openai import OpenAI

METADATA = {"source": "ThaiRecipes.pdf", "page": 2, "chunk": 1, "chunk_size": 349, "linked_to": "",
            "content_hash": "738ac704"}


def _search(question):
    """A store as a program builds it, searched for the question: the records with their metadata."""
    client = chromadb.PersistentClient(path=tempfile.mkdtemp(prefix="chroma-orders-"))
    collection = client.create_collection("recipes")
    collection.add(ids=["tom_kha_gai", "green_curry"], embeddings=[[1.0, 0.0], [0.0, 1.0]],
                   documents=["Simmer coconut milk with galangal.", "Pound the green chillies."],
                   metadatas=[METADATA, dict(METADATA, page=3)])
    found = collection.query(query_embeddings=[[1.0, 0.1]], n_results=2)
    return [{"content": text, "meta_data": meta}
            for text, meta in zip(found["documents"][0], found["metadatas"][0])]


def chroma_rag(question):
    """The search results in the prompt, as JSON."""
    references = json.dumps(_search(question), indent=2)
    return OpenAI(max_retries=0).responses.create(model="gpt-5.2", input=f"{question}\\n{references}").output_text


def agno_documents(question):
    """The search results as Agno's documents give them."""
    from agno.knowledge.document.base import Document

    documents = [Document(content=each["content"], meta_data=each["meta_data"], name="recipe").to_dict()
                 for each in _search(question)]
    references = json.dumps(documents, indent=2)
    return OpenAI(max_retries=0).responses.create(model="gpt-5.2", input=f"{question}\\n{references}").output_text
'''


def test_programs_sending_chroma_metadata_replay_in_fresh_processes_with_no_rule(project, monkeypatch):
    """Recorded in this process, replayed strictly in two fresh ones with other hash seeds: the
    same request bytes each time (the metadata keys came back in another order in every process)."""
    targets = ["chroma_rag"] + (["agno_documents"] if _installed("agno") else [])
    (project.path / "chroma_agent.py").write_text(CHROMA_AGENT)
    for target in targets:
        (project.path / "fixtures" / "goldens" / f"{target}.yaml").write_text(textwrap.dedent(f"""\
            id: {target}
            target: chroma_agent:{target}
            input: What gives tom kha gai its aroma?
            emulate:
              - text: Galangal.
        """))
    selected = [option for target in targets for option in ("--case", target)]
    project.runpytest("evals", *selected, "--record-mode=once", "--emulator").assert_outcomes(passed=len(targets))
    for target in targets:
        golden = yaml.safe_load((project.path / "fixtures" / "goldens" / f"{target}.golden.yaml").read_text())
        sent = json.loads(golden["requests"][0]["input"].split("\n", 1)[1])
        assert [list(each["meta_data"]) for each in sent] == [sorted(METADATA.keys() - {"name", "content_id"})] * 2
    monkeypatch.setenv("CI", "true")  # a stale cassette fails
    for seed in ("2", "3"):
        monkeypatch.setenv("PYTHONHASHSEED", seed)
        replayed = project.runpytest_subprocess("evals", *selected)
        replayed.assert_outcomes(passed=len(targets))
        replayed.stdout.fnmatch_lines([f"{len(targets)} cases, 0 failed, 0 new goldens, 0 goldens updated, "
                                       "0 recorded, 0 stale*"])


def _installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None
