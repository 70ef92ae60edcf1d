"""Run files: the rankings an external system produced, as a suite's retriever (``run: path``).

Two formats, told apart by the file's first non-blank character:

- TREC run files, one line per retrieved document: ``qid Q0 docid rank score tag`` (what
  ``--report-dir`` writes under ``trec/``, what trec_eval, Anserini, Pyserini and ranx read);
- BEIR / ir_datasets result JSON: ``{"qid": {"docid": score, ...}, ...}``.

Either is read as trec_eval reads it: each query's documents ordered by score, descending, ties by
document id descending; the rank column is not used. A judged query the run does not answer scores
0 (trec_eval ``-c``); a query nobody judged is not scored. Whatever is wrong with a file is one
RunFileError naming the file, the line (TREC) or query (JSON), and the cause.
"""

from __future__ import annotations

import math
from pathlib import Path

from rag_core.evals.common.paths import shown
from rag_core.evals.retrieval.metrics import ranked
from rag_core.evals.retrieval.reading import brief, not_utf8, parse_json


class RunFileError(ValueError):
    pass


def read_run(path: Path) -> dict[str, list[str]]:
    """Each query's documents in trec_eval order."""
    where = shown(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RunFileError(not_utf8(where, exc)) from None
    except IsADirectoryError:
        raise RunFileError(f"{where}: a folder, where a run file should be") from None
    except OSError as exc:
        raise RunFileError(f"{where}: the run file cannot be read ({exc.strerror or exc})") from None
    scores = _json_scores(text, where) if text.lstrip().startswith("{") else _trec_scores(text, where)
    if not scores:
        raise RunFileError(f"{where}: no rankings in it; a run file ranks documents for at least one query")
    return {query: ranked(documents) for query, documents in scores.items()}


def _score(value: str, where: str) -> float:
    try:
        score = float(value)
    except ValueError:
        raise RunFileError(f"{where}: score {value!r} is not a number") from None
    if not math.isfinite(score):
        raise RunFileError(f"{where}: score {value!r} is not a finite number")
    return score


def _trec_scores(text: str, where: str) -> dict[str, dict[str, float]]:
    scores: dict[str, dict[str, float]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        at = f"{where}:{number}"
        if len(fields) != 6:
            raise RunFileError(f"{at}: expected 6 fields (qid Q0 docid rank score tag), got {len(fields)}")
        query, _, document, _, score, _ = fields
        documents = scores.setdefault(query, {})
        if document in documents:
            raise RunFileError(f"{at}: document {document!r} is ranked twice for query {query!r}")
        documents[document] = _score(score, at)
    return scores


def _json_scores(text: str, where: str) -> dict[str, dict[str, float]]:
    data = parse_json(text, where, RunFileError, with_line=True)
    if not isinstance(data, dict):
        raise RunFileError(f"{where}: a result JSON maps each query id to {{document id: score}}, got {brief(data)}")
    scores: dict[str, dict[str, float]] = {}
    for query, documents in data.items():
        if not isinstance(documents, dict):
            raise RunFileError(f"{where}: query {query!r}: expected {{document id: score}}, got {brief(documents)}")
        for document, score in documents.items():
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
                raise RunFileError(f"{where}: query {query!r}, document {document!r}: score {brief(score)} is not "
                                   "a finite number")
        scores[query] = {document: float(score) for document, score in documents.items()}
    return scores
