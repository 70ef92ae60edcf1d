"""Bad input to retrieval suites and ``rag-core cache record`` is one clear error naming the file,
the line or field, and the cause (issue 28, items 21 and 22): never a raw traceback, never a
session that stops, never a suite that passes on nothing. The other suites still run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

import bm25s  # noqa: E402,F401  (imported before pytester's in-process runs; see test_harness.py)
import numpy  # noqa: E402,F401

CORPUS = '{"_id": "d1", "text": "pad thai with tamarind"}\n{"_id": "d2", "text": "green curry with basil"}\n'
QUERIES = "corpus: corpus.jsonl\nqueries:\n  - {id: q1, text: pad thai, relevant: [d1]}\n"
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\n"

SUITE = """name: {name}
dataset: {dataset}
depth: 5
metrics: [ndcg@5]
retrievers:
  - {{name: bm25, store: memory, search_type: keyword}}
"""
JUDGED = "{judged: data/%s/queries.yaml}"
BEIR = "{beir: data/%s}"

EVALS = "def test_retrieval(retrieval_target, retrieval_check):\n    retrieval_check(retrieval_target)\n"


@dataclass
class BadInput:
    """A suite ``bad`` over a dataset with ``files`` written over a good one, and what its failure must say."""

    id: str
    files: dict[str, bytes]
    message: str
    beir: bool = False
    baseline: dict[str, bytes] = field(default_factory=dict)


def judged(queries: str | bytes = QUERIES, corpus: str | bytes = CORPUS) -> dict[str, bytes]:
    as_bytes = lambda text: text if isinstance(text, bytes) else text.encode()  # noqa: E731
    return {"queries.yaml": as_bytes(queries), "corpus.jsonl": as_bytes(corpus)}


def one_query(relevant: str) -> str:
    return f"corpus: corpus.jsonl\nqueries:\n  - {{id: q1, text: pad thai, relevant: {relevant}}}\n"


DATASETS = [
    BadInput("relevant-a-number", judged(one_query("5")),
             "data/bad/queries.yaml:3: queries[0].relevant: expected a list of document ids (grade 1 each) or a "
             "mapping of document id to grade, got 5"),
    BadInput("relevant-null", judged(one_query("null")),
             "data/bad/queries.yaml:3: queries[0].relevant: expected a list of document ids (grade 1 each) or a "
             "mapping of document id to grade, got null"),
    BadInput("grade-not-a-number", judged(one_query("{d1: high}")),
             'data/bad/queries.yaml:3: queries[0].relevant.d1: Input should be a valid integer, got "high"'),
    # int() made 1.5 a grade of 1 without a word
    BadInput("grade-a-fraction", judged(one_query("{d1: 1.5}")),
             "data/bad/queries.yaml:3: queries[0].relevant.d1: Input should be a valid integer, got 1.5"),
    BadInput("corpus-a-list", judged(QUERIES.replace("corpus: corpus.jsonl", "corpus: [corpus.jsonl]")),
             'data/bad/queries.yaml:1: corpus: Input should be a valid string, got ["corpus.jsonl"]'),
    BadInput("no-queries", judged("corpus: corpus.jsonl\nqueries: []\n"),
             "data/bad/queries.yaml:2: queries: no queries; a suite is scored on at least one judged query"),
    BadInput("queries-not-utf8", judged(QUERIES.replace("pad thai", "caf\xe9").encode("latin-1")),
             "data/bad/queries.yaml:3: not UTF-8 text (byte b'\\xe9': invalid continuation byte); save it as UTF-8"),
    BadInput("corpus-not-utf8", judged(corpus=CORPUS.replace("basil", "basil\xe9").encode("latin-1")),
             "data/bad/corpus.jsonl:2: not UTF-8 text (byte b'\\xe9': invalid continuation byte); save it as UTF-8"),
    BadInput("corpus-line-a-number", judged(corpus=CORPUS + "5\n"),
             "data/bad/corpus.jsonl:3: expected a JSON object with '_id' and 'text', got 5"),
    BadInput("corpus-text-a-number", judged(corpus=CORPUS + '{"_id": "d3", "text": 5}\n'),
             "data/bad/corpus.jsonl:3: text: Input should be a valid string, got 5"),
    BadInput("beir-queries-not-utf8", {"queries.jsonl": b'{"_id": "q1", "text": "caf\xe9"}\n'},
             "data/bad/queries.jsonl:1: not UTF-8 text (byte b'\\xe9': invalid continuation byte)", beir=True),
    BadInput("beir-qrels-not-utf8", {"qrels/test.tsv": QRELS.encode() + b"q1\td2\t\xe9\n"},
             "data/bad/qrels/test.tsv:3: not UTF-8 text (byte b'\\xe9'", beir=True),
    BadInput("beir-grade-not-a-number", {"qrels/test.tsv": QRELS.replace("\t1\n", "\thigh\n").encode()},
             "data/bad/qrels/test.tsv:2: relevance 'high' is not an integer", beir=True),
    BadInput("beir-no-judgements", {"qrels/test.tsv": b"query-id\tcorpus-id\tscore\n"},
             "data/bad/qrels/test.tsv: no judgements; a suite is scored on at least one judged query", beir=True),
]


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A user project with a good suite (``good``, over ``data/good``); each test adds a bad one."""
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    write_dataset(pytester.path / "data" / "good", judged())
    write(pytester.path / "fixtures" / "retrieval" / "good.yaml", SUITE.format(name="good", dataset=JUDGED % "good"))
    write(pytester.path / "evals" / "test_retrieval.py", EVALS)
    return pytester


def write(path: Path, content: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())


def write_dataset(folder: Path, files: dict[str, bytes]) -> None:
    for name, content in files.items():
        write(folder / name, content)


def beir_dataset(folder: Path, files: dict[str, bytes]) -> None:
    queries = '{"_id": "q1", "text": "pad thai"}\n'
    write_dataset(folder, {"corpus.jsonl": CORPUS.encode(), "queries.jsonl": queries.encode(),
                           "qrels/test.tsv": QRELS.encode()} | files)


def assert_one_clear_failure(result: pytest.RunResult, message: str, passed: int = 1) -> None:
    """The bad suite's test fails with ``message`` and no traceback; the good suite's test passes."""
    result.assert_outcomes(failed=1, passed=passed)
    output = result.stdout.str() + result.stderr.str()
    assert message in output, output
    # a raw exception shows as the code that raised it, then "E   <exception>" lines
    assert not any(line.startswith("E  ") for line in result.stdout.lines), output
    assert "Traceback" not in output and "INTERNALERROR" not in output, output


@pytest.mark.parametrize("bad", DATASETS, ids=lambda bad: bad.id)
def test_a_bad_dataset_fails_its_suite_with_one_clear_error_and_the_other_suites_run(project, bad):
    folder = project.path / "data" / "bad"
    if bad.beir:
        beir_dataset(folder, bad.files)
    else:
        write_dataset(folder, judged() | bad.files)
    write(project.path / "fixtures" / "retrieval" / "bad.yaml",
          SUITE.format(name="bad", dataset=(BEIR if bad.beir else JUDGED) % "bad"))
    assert_one_clear_failure(project.runpytest("evals"), f"suite bad: {bad.message}")


@pytest.mark.parametrize(("content", "message"), [
    (b"name: caf\xe9\n", "fixtures/retrieval/bad.yaml:1: not UTF-8 text (byte b'\\xe9'"),
    (b"name: [bad\n", "fixtures/retrieval/bad.yaml:2: not valid YAML:"),
    (b"- name: bad\n", 'fixtures/retrieval/bad.yaml: a suite file is a mapping of name, dataset, metrics, retrievers '
                       'and the other suite fields, got [{"name": "bad"}]'),
    (SUITE.format(name="bad", dataset=JUDGED % "good").replace("depth: 5", "depth: deep").encode(),
     'fixtures/retrieval/bad.yaml: depth: Input should be a valid integer, unable to parse string as an integer, '
     'got "deep"'),
], ids=["not-utf8", "not-yaml", "a-list", "field-of-the-wrong-type"])
def test_a_bad_suite_file_fails_as_one_clear_error_and_the_other_suites_run(project, content, message):
    write(project.path / "fixtures" / "retrieval" / "bad.yaml", content)
    assert_one_clear_failure(project.runpytest("evals"), message)


BASELINE_FOLDER = "fixtures/retrieval/baselines/bad"


BASELINES_THAT_CANNOT_BE_READ = {
    "not-json": f"{BASELINE_FOLDER}/bm25.json: not valid JSON (Expecting value: line 1 column 1 (char 0)); fix it or "
                "rewrite it with pytest evals/ --update-baselines",
    "wrong-shape": f"{BASELINE_FOLDER}/bm25.json: not a baseline: expected a mapping with suite, retriever, metrics "
                   "and per_query, got [1, 2]",
    "not-utf8": f"{BASELINE_FOLDER}/bm25.json:1: not UTF-8 text (byte b'\\xff': invalid start byte); save it as "
                "UTF-8, or rewrite it with pytest evals/ --update-baselines",
    "a-folder": f"{BASELINE_FOLDER}/bm25.json: a folder where the baseline file should be; move it away, then write "
                "the baseline with pytest evals/ --update-baselines",
    # the gate silently had no baseline: every retriever passed as if it had none yet
    "folder-a-file": f"{BASELINE_FOLDER}: the suite's baseline folder is a file (baseline: in "
                     "fixtures/retrieval/bad.yaml); move it away, or name another folder",
}


@pytest.mark.parametrize("damage", list(BASELINES_THAT_CANNOT_BE_READ))
def test_a_baseline_that_cannot_be_used_is_one_clear_error(project, damage):
    suite_with_a_damaged_baseline(project.path, damage)
    assert_one_clear_failure(project.runpytest("evals"), BASELINES_THAT_CANNOT_BE_READ[damage])


def suite_with_a_damaged_baseline(root: Path, damage: str) -> None:
    """A suite ``bad`` (over the good dataset) whose retriever's baseline is damaged so."""
    write(root / "fixtures" / "retrieval" / "bad.yaml",
          SUITE.format(name="bad", dataset=JUDGED % "good") + f"baseline: {BASELINE_FOLDER}\n")
    baseline = root / BASELINE_FOLDER / "bm25.json"
    if damage == "folder-a-file":
        write(baseline.parent, "")
    elif damage == "a-folder":
        baseline.mkdir(parents=True)
    else:
        write(baseline, {"not-json": b"not json", "wrong-shape": b"[1, 2]", "not-utf8": b"\xff"}[damage])


BASELINES_THAT_CANNOT_BE_WRITTEN = {
    "a-folder": f"{BASELINE_FOLDER}/bm25.json: the baseline cannot be written (a folder is in its place)",
    "folder-a-file": f"{BASELINE_FOLDER}/bm25.json: the baseline cannot be written ({BASELINE_FOLDER} is a file, "
                     "where a folder is needed)",
}


@pytest.mark.parametrize("damage", list(BASELINES_THAT_CANNOT_BE_WRITTEN))
def test_a_baseline_that_cannot_be_written_is_one_clear_error(project, damage):
    suite_with_a_damaged_baseline(project.path, damage)
    assert_one_clear_failure(project.runpytest("evals", "--update-baselines"), BASELINES_THAT_CANNOT_BE_WRITTEN[damage])


# ----------------------------------------------------------------------------- rag-core cache record

EMBEDDED_SUITE = """name: tiny
dataset: {judged: data/queries.yaml}
embedder: {kind: openai, id: text-embedding-3-small, cache: cassettes/embeddings/tiny}
metrics: [ndcg@10]
retrievers: [{name: dense, search_type: vector}]
"""


def embedded_project(folder: Path) -> Path:
    write(folder / "data" / "corpus.jsonl", CORPUS)
    write(folder / "data" / "queries.yaml", QUERIES)
    write(folder / "suite.yaml", EMBEDDED_SUITE)
    return folder


def test_cache_record_checks_the_cache_folder_before_it_embeds_anything(tmp_path, monkeypatch):
    """The embedding is the expensive part (11 s for the kitchen corpus on MiniLM): an unwritable
    cache folder failed only after it, losing the work."""
    from rag_core.embedder import EmbeddingCache
    from rag_core.evals.retrieval import record_cache
    from rag_core.evals.retrieval.suite import SuiteFileError
    from tests.fakes import HashEmbedder

    embedder = HashEmbedder()
    monkeypatch.setattr(record_cache, "build_embedder",
                        lambda spec, root, mode: EmbeddingCache(embedder, root / spec.cache, mode=mode))
    root = embedded_project(tmp_path)
    write(root / "cassettes" / "embeddings", "")  # a file where the cache's folder must be made
    monkeypatch.chdir(root)
    with pytest.raises(SuiteFileError, match=r"^suite.yaml: embedder.cache: cassettes/embeddings is a file, where a "
                                             r"folder is needed \(on the way to cassettes/embeddings/tiny\); nothing "
                                             r"was embedded$"):
        record_cache.record(Path("suite.yaml"), Path("."))
    assert embedder.calls == []


def rag_core_command(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")} | env
    return subprocess.run([sys.executable, "-m", "rag_core", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=environment)


@pytest.fixture(scope="module")
def emulator_env():
    """An embedding provider that works: had the command embedded, it would have succeeded."""
    from rag_core.evals.emulator.server import EmulatorServer

    server = EmulatorServer()
    server.load([], seed="cache")
    yield {"OPENAI_BASE_URL": f"{server.url}/v1", "OPENAI_API_KEY": "emulator"}
    server.close()


def replace_in(path: Path, old: str, new: str | bytes) -> None:
    text = path.read_bytes()
    assert old.encode() in text
    path.write_bytes(text.replace(old.encode(), new if isinstance(new, bytes) else new.encode()))


CLI_INPUTS = {
    "suite-not-utf8": (lambda root: replace_in(root / "suite.yaml", "name: tiny", b"name: tiny\xe9"),
                       "suite.yaml:1: not UTF-8 text (byte b'\\xe9': invalid continuation byte); save it as UTF-8"),
    "suite-not-yaml": (lambda root: replace_in(root / "suite.yaml", "metrics: [ndcg@10]", "metrics: [ndcg@10"),
                       "suite.yaml:5: not valid YAML:"),
    "suite-field": (lambda root: replace_in(root / "suite.yaml", "kind: openai", "kind: nope"),
                    "suite.yaml: embedder.kind: Input should be 'local', 'openai' or 'cohere', got \"nope\""),
    "corpus-not-utf8": (lambda root: replace_in(root / "data" / "corpus.jsonl", "basil", b"basil\xe9"),
                        "suite tiny: data/corpus.jsonl:2: not UTF-8 text (byte b'\\xe9'"),
    "relevant-null": (lambda root: replace_in(root / "data" / "queries.yaml", "[d1]", "null"),
                      "suite tiny: data/queries.yaml:3: queries[0].relevant: expected a list of document ids"),
    "cache-folder-a-file": (lambda root: write(root / "cassettes" / "embeddings" / "tiny", ""),
                            "suite.yaml: embedder.cache: cassettes/embeddings/tiny is a file, where a folder is "
                            "needed; nothing was embedded"),
}


@pytest.mark.parametrize("damage", list(CLI_INPUTS))
def test_cache_record_on_bad_input_is_one_line_and_exit_status_2(tmp_path, emulator_env, damage):
    root = embedded_project(tmp_path)
    spoil, message = CLI_INPUTS[damage]
    spoil(root)
    result = rag_core_command("cache", "record", "suite.yaml", cwd=root, env=emulator_env)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [result.stderr.strip()], result.stderr  # one line
    assert result.stderr.startswith(f"rag-core: error: {message}"), result.stderr
    assert not (root / "cassettes" / "embeddings" / "tiny" / "meta.json").exists()


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into any folder")
def test_cache_record_into_a_folder_without_write_permission_says_so_before_embedding(tmp_path, emulator_env):
    root = embedded_project(tmp_path)
    (root / "cassettes").mkdir()
    (root / "cassettes").chmod(0o555)
    try:
        result = rag_core_command("cache", "record", "suite.yaml", cwd=root, env=emulator_env)
    finally:
        (root / "cassettes").chmod(0o755)
    assert result.returncode == 2
    assert result.stderr.strip() == ("rag-core: error: suite.yaml: embedder.cache: cassettes/embeddings/tiny cannot be "
                                     "written (cassettes: Permission denied); nothing was embedded")


def test_cache_record_still_records_a_good_suite(tmp_path, emulator_env):
    """The checks before embedding stop nothing that works."""
    root = embedded_project(tmp_path)
    result = rag_core_command("cache", "record", "suite.yaml", cwd=root, env=emulator_env)
    assert result.returncode == 0, result.stderr
    meta = json.loads((root / "cassettes" / "embeddings" / "tiny" / "meta.json").read_text())
    assert meta["count"] == 3  # two documents, one query
    assert not list(root.rglob(".rag-core-write-check-*"))  # the probe left nothing behind
