"""Run files: the rankings an external system produced, as a suite's retriever (``run: path``).

Two formats, told apart by the file's first non-blank character:

- TREC run files, one line per retrieved document: ``qid Q0 docid rank score tag`` (what
  ``--report-dir`` writes under ``trec/``, what trec_eval, Anserini, Pyserini and ranx read);
- BEIR / ir_datasets result JSON: ``{"qid": {"docid": score, ...}, ...}``.

Either is read as trec_eval reads it: each query's documents ordered by score, descending, ties by
document id descending; the rank column is not used. A judged query the run does not answer scores
0 (trec_eval ``-c``); a query nobody judged is not scored. Whatever is wrong with a file is one
RunFileError naming the file, the line (TREC) or query (JSON), and the cause: a document ranked
twice for a query is one in either format, and so is a query a result JSON names twice (JSON
readers keep the last silently). A file is UTF-8, or what its byte order mark says it is.
"""

from __future__ import annotations

import codecs
import math
from collections import Counter
from pathlib import Path
from typing import Any

from rag_core.evals.common.paths import shown
from rag_core.evals.retrieval.metrics import ranked
from rag_core.evals.retrieval.reading import brief, not_utf8, parse_json


class RunFileError(ValueError):
    pass


def read_run(path: Path) -> dict[str, list[str]]:
    """Each query's documents in trec_eval order."""
    where = shown(path)
    try:
        text = _decoded(path.read_bytes(), where)
    except IsADirectoryError:
        raise RunFileError(f"{where}: a folder, where a run file should be") from None
    except OSError as exc:
        raise RunFileError(f"{where}: the run file cannot be read ({exc.strerror or exc})") from None
    scores = _json_scores(text, where) if text.lstrip().startswith("{") else _trec_scores(text, where)
    if not scores:
        raise RunFileError(f"{where}: no rankings in it; a run file ranks documents for at least one query")
    return {query: ranked(documents) for query, documents in scores.items()}


# byte order marks, longest first (UTF-32's little-endian mark begins with UTF-16's), and the
# codec that reads the text after each
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def _decoded(raw: bytes, where: str) -> str:
    """The file's text: UTF-8, or the encoding its byte order mark names (the mark not part of
    the text, where it would be taken for the first query's id)."""
    encoding = next((codec for mark, codec in _BOMS if raw.startswith(mark)), "utf-8")
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        if encoding.startswith("utf-8"):
            raise RunFileError(not_utf8(where, exc)) from None
        raise RunFileError(f"{where}: starts with a {encoding.upper()} byte order mark, but is not {encoding.upper()} "
                           f"text ({exc.reason}); save it as UTF-8") from None


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


class _Repeated(dict):  # type: ignore[type-arg]
    """A JSON object that names a key twice (read as JSON readers read it, the last value kept)."""

    repeated: str


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict, marked with the first key it names twice, if any."""
    data = dict(pairs)
    if len(data) == len(pairs):
        return data
    marked = _Repeated(data)
    counts = Counter(key for key, _ in pairs)
    marked.repeated = next(key for key, count in counts.items() if count > 1)
    return marked


def _json_scores(text: str, where: str) -> dict[str, dict[str, float]]:
    data = parse_json(text, where, RunFileError, with_line=True, object_pairs_hook=_object)
    if not isinstance(data, dict):
        raise RunFileError(f"{where}: a result JSON maps each query id to {{document id: score}}, got {brief(data)}")
    if isinstance(data, _Repeated):
        raise RunFileError(f"{where}: query {data.repeated!r} is named twice; a result JSON names each query once")
    scores: dict[str, dict[str, float]] = {}
    for query, documents in data.items():
        if not isinstance(documents, dict):
            raise RunFileError(f"{where}: query {query!r}: expected {{document id: score}}, got {brief(documents)}")
        if isinstance(documents, _Repeated):
            raise RunFileError(f"{where}: document {documents.repeated!r} is ranked twice for query {query!r}")
        for document, score in documents.items():
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
                raise RunFileError(f"{where}: query {query!r}, document {document!r}: score {brief(score)} is not "
                                   "a finite number")
        scores[query] = {document: float(score) for document, score in documents.items()}
    return scores
