"""Judged retrieval datasets: the BEIR folder layout, and a small YAML format for project corpora.

BEIR: ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl`` (``_id``, ``text``)
and ``qrels/<split>.tsv`` (header, then ``query-id corpus-id score``). The text the built-in
stores index is ``title + " " + text``, the BEIR/MTEB convention; a retriever target is given
every document as the file holds it (``records``).

Whatever is wrong with a dataset file (not UTF-8, not JSON or YAML, a field of the wrong type,
a grade that is not an integer, no judged query at all) is one DatasetError naming the file, the
line or field, and the cause.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Iterator, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt, StrictStr, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from rag_core.errors import RagCoreError
from rag_core.evals.common.paths import shown
from rag_core.evals.retrieval.corpus_record import CorpusRecord
from rag_core.evals.retrieval.corpus_record import title_and_text as _content
from rag_core.evals.retrieval.reading import brief, not_utf8, parse_json, read_yaml, validation_problems, yaml_where

BEIR_HELP = (
    "BEIR datasets are published by the BEIR project (github.com/beir-cellar/beir) as zip files; "
    "unpack one into a folder holding corpus.jsonl, queries.jsonl and qrels/<split>.tsv"
)


class DatasetError(RagCoreError, ValueError):
    """A dataset file is missing or malformed; the message names the file and line."""


@dataclass
class Dataset:
    name: str
    corpus: dict[str, str]  # doc id -> text ("" for every id when read without texts)
    queries: dict[str, str]  # query id -> text (only judged queries of the split)
    qrels: dict[str, dict[str, int]]  # query id -> doc id -> graded relevance
    corpus_file: Path | None = None  # the BEIR-style lines the corpus was read from (iter_corpus)
    # read without texts: how many documents have none (blank), their texts left in corpus_file
    # for texts() to read again; None when ``corpus`` holds the texts
    blank_in_file: int | None = None

    def texts(self) -> Iterator[tuple[str, str]]:
        """(doc id, text) of every document in corpus order: from ``corpus``, or read again from
        ``corpus_file`` when the dataset was read without its texts."""
        if self.blank_in_file is None or self.corpus_file is None:
            return iter(self.corpus.items())
        return iter_corpus(self.corpus_file, unique_ids=False)

    def records(self) -> Iterator[CorpusRecord]:
        """Every document as the dataset holds it, in its order, those with no text too: from
        ``corpus_file``, or (a dataset made in memory) from ``corpus``."""
        if self.corpus_file is None:
            return (CorpusRecord(doc_id, text) for doc_id, text in self.corpus.items())
        return iter_records(self.corpus_file)

    @property
    def blank(self) -> int:
        """Documents with no text (BEIR: empty title and text), which no store can index."""
        if self.blank_in_file is None:
            return sum(1 for text in self.corpus.values() if not text.strip())
        return self.blank_in_file


def _identifier(value: Any) -> str:
    """A document or query id: a string, or an integer (YAML reads ``101`` as one; some BEIR files have them)."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise PydanticCustomError("identifier", "expected an id (a non-empty string or an integer), got {got}",
                              {"got": brief(value)})


Identifier = Annotated[str, BeforeValidator(_identifier)]


class _Line(BaseModel):
    model_config = ConfigDict(extra="ignore")  # BEIR lines carry more than is read here (metadata)


LineType = TypeVar("LineType", bound=_Line)


class CorpusLine(_Line):
    id: Identifier = Field(alias="_id")
    title: StrictStr | None = None
    text: StrictStr | None = None

    def content(self) -> str:
        """``title + " " + text``, the BEIR/MTEB convention."""
        return _content(self.title, self.text)


class QueryLine(_Line):
    id: Identifier = Field(alias="_id")
    text: StrictStr | None = None


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(number, text) of each line, read one at a time (corpora can be large), each decoded on its own
    so that one that is not UTF-8 is named by its number."""
    try:
        with open(path, "rb") as handle:
            for number, raw in enumerate(handle, start=1):
                try:
                    yield number, raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise DatasetError(not_utf8(shown(path), exc, line=number)) from None
    except OSError as exc:
        raise DatasetError(f"{shown(path)}: cannot be read ({exc.strerror or exc})") from None


def _json_rows(path: Path) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(number, where, object) of each non-blank line of a BEIR JSONL file, an object with an ``_id``."""
    if not path.is_file():
        raise DatasetError(f"{shown(path)}: missing. {BEIR_HELP}")
    name = shown(path)
    for number, line in _lines(path):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        row = parse_json(line, where, DatasetError)
        if not isinstance(row, dict):
            raise DatasetError(f"{where}: expected a JSON object with '_id' and 'text', got {brief(row)}")
        if "_id" not in row:
            raise DatasetError(f"{where}: no '_id' field")
        yield number, where, row


def _validated(row: dict[str, Any], line_type: type[LineType], where: str) -> LineType:
    try:
        return line_type.model_validate(row)
    except ValidationError as exc:
        raise DatasetError(validation_problems(exc, row, lambda loc: where, whole="(line)")) from None


def _jsonl(path: Path, line_type: type[LineType]) -> Iterator[tuple[int, LineType]]:
    """Each non-blank line of a BEIR JSONL file, as ``line_type``."""
    for number, where, row in _json_rows(path):
        yield number, _validated(row, line_type, where)


_PLAIN = (str, type(None))


def iter_corpus(path: Path, unique_ids: bool = True) -> Iterator[tuple[str, str]]:
    """(doc id, text) of BEIR-style lines, one at a time; text is ``title + " " + text``. Without
    ``unique_ids`` (a file already read whole once), ids are not remembered to find duplicates."""
    seen: set[str] = set()
    for number, where, row in _json_rows(path):
        doc_id, title, text = row["_id"], row.get("title"), row.get("text")
        if not (type(doc_id) is str and doc_id and type(title) in _PLAIN and type(text) in _PLAIN):
            # anything but the usual line (an integer id, a field of another type) as CorpusLine reads it;
            # the usual one is read without building a model, which took a third of reading a corpus
            document = _validated(row, CorpusLine, where)
            doc_id, title, text = document.id, document.title, document.text
        if unique_ids:
            if doc_id in seen:
                raise DatasetError(f"{shown(path)}:{number}: duplicate document id {doc_id!r}")
            seen.add(doc_id)
        yield doc_id, _content(title, text)


# a line's fields that a record names itself: ``_id`` is the record's ``id``
_RECORD_NAMES = ("_id", "id", "title", "text")


def iter_records(path: Path) -> Iterator[CorpusRecord]:
    """Every document of BEIR-style lines as the file holds it, one at a time, in its order:
    ``id``, ``title`` and ``text`` ("" where the line has none), then the line's other fields
    (``metadata``) as they are. The file was read whole once already (its ids are unique)."""
    for _, where, row in _json_rows(path):
        doc_id, title, text = row["_id"], row.get("title"), row.get("text")
        if not (type(doc_id) is str and doc_id and type(title) in _PLAIN and type(text) in _PLAIN):
            document = _validated(row, CorpusLine, where)
            doc_id, title, text = document.id, document.title, document.text
        fields = {"id": doc_id, "title": title or "", "text": text or ""}
        fields.update((name, value) for name, value in row.items() if name not in _RECORD_NAMES)
        yield CorpusRecord.of(fields)


def _load_corpus(path: Path, texts: bool = True) -> tuple[dict[str, str], int | None]:
    """doc id -> text; without ``texts``, doc id -> "" (the ids checked, no text kept) and how
    many documents have no text (None with texts: the corpus tells)."""
    if texts:
        return dict(iter_corpus(path)), None
    corpus: dict[str, str] = {}
    blank = 0
    for doc_id, text in iter_corpus(path):
        corpus[doc_id] = ""
        blank += not text.strip()
    return corpus, blank


def load_beir(folder: str | Path, split: str = "test", texts: bool = True) -> Dataset:
    folder = Path(folder)
    if not folder.is_dir():
        raise DatasetError(f"{shown(folder)}: no such dataset folder. {BEIR_HELP}")
    corpus, blank = _load_corpus(folder / "corpus.jsonl", texts)
    all_queries: dict[str, str] = {}
    for number, query in _jsonl(folder / "queries.jsonl", QueryLine):
        if query.id in all_queries:
            raise DatasetError(f"{shown(folder / 'queries.jsonl')}:{number}: duplicate query id {query.id!r}")
        all_queries[query.id] = query.text or ""
    qrels_path = folder / "qrels" / f"{split}.tsv"
    qrels = load_qrels(qrels_path, corpus, all_queries)
    if not qrels:  # an empty suite scores nothing: it must not pass as if it had
        raise DatasetError(f"{shown(qrels_path)}: no judgements; a suite is scored on at least one judged query")
    queries = {q: all_queries[q] for q in qrels}
    return Dataset(name=folder.name, corpus=corpus, queries=queries, qrels=qrels, corpus_file=folder / "corpus.jsonl",
                   blank_in_file=blank)


def load_qrels(path: Path, corpus: dict[str, str], queries: dict[str, str]) -> dict[str, dict[str, int]]:
    if not path.is_file():
        raise DatasetError(f"{shown(path)}: missing (no judgements for this split). {BEIR_HELP}")
    qrels: dict[str, dict[str, int]] = {}
    for number, line in _lines(path):
        where = f"{shown(path)}:{number}"
        parts = line.rstrip("\r\n").split("\t")
        if number == 1 and parts[0] == "query-id":
            continue
        if not line.strip():
            continue
        if len(parts) != 3:
            raise DatasetError(f"{where}: expected 3 tab-separated fields, got {len(parts)}")
        query_id, doc_id, score = parts
        if query_id not in queries:
            raise DatasetError(f"{where}: query {query_id!r} is not in queries.jsonl")
        if doc_id not in corpus:
            raise DatasetError(f"{where}: document {doc_id!r} is not in corpus.jsonl")
        if doc_id in qrels.get(query_id, {}):
            raise DatasetError(f"{where}: duplicate judgement of {doc_id!r} for query {query_id!r}")
        try:
            qrels.setdefault(query_id, {})[doc_id] = int(score)
        except ValueError:
            raise DatasetError(f"{where}: relevance {score!r} is not an integer") from None
    return qrels


def _grades(value: Any) -> Any:
    """``relevant:`` as document id -> grade: a list of ids is grade 1 each."""
    if isinstance(value, list):
        return dict.fromkeys((_identifier(item) for item in value), 1)
    if isinstance(value, dict):
        return value
    raise PydanticCustomError(
        "relevant", "expected a list of document ids (grade 1 each) or a mapping of document id to grade, got {got}",
        {"got": brief(value)})


class JudgedQuery(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: Identifier
    text: StrictStr = Field(min_length=1)
    # a grade is an integer: YAML reads ``true`` and ``1.5`` as numbers int() would quietly turn into 1
    relevant: Annotated[dict[Identifier, StrictInt], BeforeValidator(_grades)]


class JudgedQueries(BaseModel):
    """A judged-queries file: the corpus it judges, and its queries."""

    model_config = ConfigDict(extra="ignore")

    corpus: StrictStr = Field(min_length=1)  # BEIR-style lines, relative to this file
    queries: list[JudgedQuery]

    @field_validator("queries")
    @classmethod
    def _some_queries(cls, value: list[JudgedQuery]) -> list[JudgedQuery]:
        if not value:  # an empty suite scores nothing: it must not pass as if it had
            raise PydanticCustomError("no_queries", "no queries; a suite is scored on at least one judged query")
        return value


def load_judged_yaml(path: str | Path, texts: bool = True) -> Dataset:
    """Hand-written judgements over a project corpus::

        corpus: corpus.jsonl            # BEIR-style lines, relative to this file
        queries:
          - id: q1
            text: how do I braise lamb?
            relevant: {doc-7: 2, doc-9: 1}   # or a list of ids (grade 1 each)
    """
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{shown(path)}: missing")
    data = read_yaml(path, DatasetError)
    if not isinstance(data, dict):
        raise DatasetError(f"{shown(path)}: expected a mapping with 'corpus' (a file) and 'queries' (a list), "
                           f"got {brief(data)}")
    where = yaml_where(path)
    try:
        judged = JudgedQueries.model_validate(data)
    except ValidationError as exc:
        raise DatasetError(validation_problems(exc, data, where)) from None
    corpus, blank = _load_corpus(path.parent / judged.corpus, texts)
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    for index, query in enumerate(judged.queries):
        problem = None
        unknown = sorted(d for d in query.relevant if d not in corpus)
        if query.id in queries:
            problem = f"duplicate query id {query.id!r}"
        elif unknown:
            problem = f"relevant document(s) not in {judged.corpus}: {unknown}"
        elif not any(g >= 1 for g in query.relevant.values()):
            problem = "no relevant document (grade >= 1)"
        if problem:  # the line is looked up only now: finding lines means reading the file again
            raise DatasetError(f"{where(('queries', index, 'id'))}: queries[{index}] ({query.id}): {problem}")
        queries[query.id] = query.text
        qrels[query.id] = query.relevant
    return Dataset(name=path.parent.name, corpus=corpus, queries=queries, qrels=qrels,
                   corpus_file=path.parent / judged.corpus, blank_in_file=blank)
