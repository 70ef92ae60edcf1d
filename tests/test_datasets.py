from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_core.evals.retrieval.datasets import DatasetError, load_beir, load_judged_yaml

SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "scifact"


def beir(folder: Path, corpus=None, queries=None, qrels=None) -> Path:
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    corpus = corpus if corpus is not None else [{"_id": "d1", "title": "T", "text": "one"}, {"_id": "d2", "text": "two"}]
    queries = queries if queries is not None else [{"_id": "q1", "text": "first"}, {"_id": "q2", "text": "unjudged"}]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus))
    (folder / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in queries))
    (folder / "qrels" / "test.tsv").write_text(qrels if qrels is not None else "query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return folder


def test_beir_layout(tmp_path):
    dataset = load_beir(beir(tmp_path))
    assert dataset.corpus == {"d1": "T one", "d2": "two"}  # title + " " + text
    assert dataset.queries == {"q1": "first"}  # only the judged queries of the split
    assert dataset.qrels == {"q1": {"d1": 1}}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"qrels": "query-id\tcorpus-id\tscore\nq1\tnope\t1\n"}, r"test.tsv:2: document 'nope' is not in corpus.jsonl"),
        ({"qrels": "query-id\tcorpus-id\tscore\nq9\td1\t1\n"}, r"test.tsv:2: query 'q9' is not in queries.jsonl"),
        ({"qrels": "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td1\t2\n"}, r"test.tsv:3: duplicate judgement"),
        ({"qrels": "q1 d1 1\n"}, r"test.tsv:1: expected 3 tab-separated fields"),
        ({"corpus": [{"_id": "d1", "text": "a"}, {"_id": "d1", "text": "b"}]}, r"corpus.jsonl:2: duplicate document id 'd1'"),
        ({"queries": [{"text": "no id"}]}, r"queries.jsonl:1: no '_id' field"),
    ],
)
def test_beir_errors_name_file_and_line(tmp_path, kwargs, message):
    with pytest.raises(DatasetError, match=message):
        load_beir(beir(tmp_path, **kwargs))


def test_missing_files_say_how_to_get_beir(tmp_path):
    with pytest.raises(DatasetError, match="no such dataset folder.*BEIR datasets are published"):
        load_beir(tmp_path / "absent")
    beir(tmp_path)
    with pytest.raises(DatasetError, match=r"qrels/dev.tsv: missing"):
        load_beir(tmp_path, split="dev")


def test_judged_yaml(tmp_path):
    beir(tmp_path)
    (tmp_path / "q.yaml").write_text(
        "corpus: corpus.jsonl\nqueries:\n  - {id: a, text: 'one?', relevant: [d1]}\n  - {id: b, text: 'two?', relevant: {d2: 2, d1: 0}}\n"
    )
    dataset = load_judged_yaml(tmp_path / "q.yaml")
    assert dataset.qrels == {"a": {"d1": 1}, "b": {"d2": 2, "d1": 0}}
    (tmp_path / "bad.yaml").write_text("corpus: corpus.jsonl\nqueries:\n  - {id: a, text: x, relevant: [d7]}\n")
    with pytest.raises(DatasetError, match=r"queries\[0\] \(a\): relevant document\(s\) not in corpus.jsonl: \['d7'\]"):
        load_judged_yaml(tmp_path / "bad.yaml")
    (tmp_path / "dup.yaml").write_text("corpus: corpus.jsonl\nqueries:\n  - {id: a, text: x, relevant: [d1]}\n  - {id: a, text: y, relevant: [d1]}\n")
    with pytest.raises(DatasetError, match="duplicate query id 'a'"):
        load_judged_yaml(tmp_path / "dup.yaml")


def test_scifact_loads_with_its_published_sizes():
    if not SCIFACT.exists():
        pytest.skip("SciFact is read from ../shared/datasets/scifact")
    dataset = load_beir(SCIFACT, "test")
    assert (len(dataset.corpus), len(dataset.queries), sum(len(r) for r in dataset.qrels.values())) == (5183, 300, 339)
