"""Judged retrieval datasets: the BEIR folder layout, and a small YAML format for project corpora.

BEIR: ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl`` (``_id``, ``text``)
and ``qrels/<split>.tsv`` (header, then ``query-id corpus-id score``). Document text is
``title + " " + text``, the BEIR/MTEB convention.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from rag_core.errors import RagCoreError

BEIR_HELP = (
    "BEIR datasets are published by the BEIR project (github.com/beir-cellar/beir) as zip files; "
    "unpack one into a folder holding corpus.jsonl, queries.jsonl and qrels/<split>.tsv"
)


class DatasetError(RagCoreError, ValueError):
    """A dataset file is missing or malformed; the message names the file and line."""


@dataclass
class Dataset:
    name: str
    corpus: dict[str, str]  # doc id -> text
    queries: dict[str, str]  # query id -> text (only judged queries of the split)
    qrels: dict[str, dict[str, int]]  # query id -> doc id -> graded relevance


def _jsonl(path: Path) -> list[tuple[int, dict]]:
    if not path.is_file():
        raise DatasetError(f"{path}: missing. {BEIR_HELP}")
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
            if "_id" not in row:
                raise DatasetError(f"{path}:{number}: no '_id' field")
            rows.append((number, row))
    return rows


def _load_corpus(path: Path) -> dict[str, str]:
    """doc id -> text from BEIR-style lines; text is ``title + " " + text``."""
    corpus: dict[str, str] = {}
    for number, row in _jsonl(path):
        doc_id = str(row["_id"])
        if doc_id in corpus:
            raise DatasetError(f"{path}:{number}: duplicate document id {doc_id!r}")
        title = row.get("title") or ""
        corpus[doc_id] = (title + " " + (row.get("text") or "")).strip() if title else (row.get("text") or "")
    return corpus


def load_beir(folder: str | Path, split: str = "test") -> Dataset:
    folder = Path(folder)
    if not folder.is_dir():
        raise DatasetError(f"{folder}: no such dataset folder. {BEIR_HELP}")
    corpus = _load_corpus(folder / "corpus.jsonl")
    all_queries: dict[str, str] = {}
    for number, row in _jsonl(folder / "queries.jsonl"):
        query_id = str(row["_id"])
        if query_id in all_queries:
            raise DatasetError(f"{folder / 'queries.jsonl'}:{number}: duplicate query id {query_id!r}")
        all_queries[query_id] = row.get("text") or ""
    qrels = load_qrels(folder / "qrels" / f"{split}.tsv", corpus, all_queries)
    queries = {q: all_queries[q] for q in qrels}
    return Dataset(name=folder.name, corpus=corpus, queries=queries, qrels=qrels)


def load_qrels(path: Path, corpus: dict[str, str], queries: dict[str, str]) -> dict[str, dict[str, int]]:
    if not path.is_file():
        raise DatasetError(f"{path}: missing (no judgements for this split). {BEIR_HELP}")
    qrels: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            parts = line.rstrip("\n").split("\t")
            if number == 1 and parts[0] == "query-id":
                continue
            if not line.strip():
                continue
            if len(parts) != 3:
                raise DatasetError(f"{path}:{number}: expected 3 tab-separated fields, got {len(parts)}")
            query_id, doc_id, score = parts
            if query_id not in queries:
                raise DatasetError(f"{path}:{number}: query {query_id!r} is not in queries.jsonl")
            if doc_id not in corpus:
                raise DatasetError(f"{path}:{number}: document {doc_id!r} is not in corpus.jsonl")
            if doc_id in qrels.get(query_id, {}):
                raise DatasetError(f"{path}:{number}: duplicate judgement of {doc_id!r} for query {query_id!r}")
            try:
                qrels.setdefault(query_id, {})[doc_id] = int(score)
            except ValueError as exc:
                raise DatasetError(f"{path}:{number}: relevance {score!r} is not an integer") from exc
    return qrels


def load_judged_yaml(path: str | Path) -> Dataset:
    """Hand-written judgements over a project corpus::

        corpus: corpus.jsonl            # BEIR-style lines, relative to this file
        queries:
          - id: q1
            text: how do I braise lamb?
            relevant: {doc-7: 2, doc-9: 1}   # or a list of ids (grade 1 each)
    """
    import yaml

    from rag_core.evals.harness.yaml_lines import load_bounded

    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: missing")
    try:
        data = load_bounded(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: not valid YAML ({exc})") from exc
    if not isinstance(data, dict) or "corpus" not in data or not isinstance(data.get("queries"), list):
        raise DatasetError(f"{path}: expected a mapping with 'corpus' (a file) and 'queries' (a list)")
    corpus = _load_corpus(path.parent / data["corpus"])
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    for index, entry in enumerate(data["queries"]):
        where = f"{path}: queries[{index}]"
        if not isinstance(entry, dict) or not {"id", "text", "relevant"} <= set(entry):
            raise DatasetError(f"{where}: needs id, text and relevant")
        query_id = str(entry["id"])
        if query_id in queries:
            raise DatasetError(f"{where}: duplicate query id {query_id!r}")
        relevant = entry["relevant"]
        grades = {str(d): 1 for d in relevant} if isinstance(relevant, list) else {str(d): int(g) for d, g in relevant.items()}
        unknown = sorted(d for d in grades if d not in corpus)
        if unknown:
            raise DatasetError(f"{where} ({query_id}): relevant document(s) not in {data['corpus']}: {unknown}")
        if not any(g >= 1 for g in grades.values()):
            raise DatasetError(f"{where} ({query_id}): no relevant document (grade >= 1)")
        queries[query_id] = str(entry["text"])
        qrels[query_id] = grades
    return Dataset(name=path.parent.name, corpus=corpus, queries=queries, qrels=qrels)
