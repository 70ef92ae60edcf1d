"""Reading the retrieval suites' own files (suite files, judged queries, BEIR lines): whatever is
wrong with one is a single message naming the file, the line or field, and the cause, never a
traceback from deep inside a loader."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Callable

import yaml
from pydantic import ValidationError

from rag_core.evals.common.paths import shown
from rag_core.evals.common.yaml_read import line_of, load_bounded, load_with_lines, tab_problem

Mappings = list[tuple[dict[str, Any], dict[str, int]]]  # what load_with_lines gives: each mapping's key lines

# at most this many problems per message: a file wrong on every line is still one readable error
MAX_PROBLEMS = 5

# pydantic error types whose message does not say what the value was: the message adds it
_SHOWS_NO_VALUE = ("literal_error", "too_short", "string_too_short", "greater_than", "greater_than_equal",
                   "less_than", "less_than_equal")


def brief(value: Any) -> str:
    """A value as the file spells it (JSON, so ``null`` not ``None``), cut short."""
    try:
        text = json.dumps(value, default=str, ensure_ascii=False)
    except RecursionError:
        return "(a value nested too deeply to show)"
    return text if len(text) <= 60 else text[:57] + "..."


def not_utf8(where: str, exc: UnicodeDecodeError, line: int | None = None) -> str:
    """Where the first byte that is not UTF-8 is, as a person looks for it: the line."""
    if line is None and isinstance(exc.object, bytes):
        line = exc.object[:exc.start].count(b"\n") + 1
    at = f"{where}:{line}" if line else where
    return f"{at}: not UTF-8 text (byte {exc.object[exc.start:exc.start + 1]!r}: {exc.reason}); save it as UTF-8"


def parse_json(text: str, where: str, error: type[Exception], *, with_line: bool = False,
               object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None) -> Any:
    """``text`` as JSON, or ``error`` naming ``where`` (and, ``with_line``, the line) and the cause;
    ``object_pairs_hook`` as ``json.loads`` takes it (what an object naming a key twice becomes)."""
    try:
        return json.loads(text, object_pairs_hook=object_pairs_hook)
    except json.JSONDecodeError as exc:
        raise error(f"{where}{f':{exc.lineno}' if with_line else ''}: not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise error(f"{where}: not valid JSON (nested more deeply than can be read)") from None


def read_yaml(path: Path, error: type[Exception]) -> Any:
    """The document, read by the fast C parser within the YAML reader's bounds (aliases, nesting);
    ``error`` naming the file (and line) when it cannot be read, is not UTF-8, or is not YAML."""
    where = shown(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise error(not_utf8(where, exc)) from None
    except OSError as exc:
        raise error(f"{where}: cannot be read ({exc.strerror or exc})") from None
    try:
        return load_bounded(text)
    except yaml.YAMLError as exc:
        tab = tab_problem(exc, text)
        if tab is not None:
            raise error(f"{where}: {tab}") from None
        mark = getattr(exc, "problem_mark", None)
        at = f"{where}:{mark.line + 1}" if mark else where
        raise error(f"{at}: not valid YAML: {getattr(exc, 'problem', None) or exc}") from None


def field_name(loc: tuple[Any, ...], data: Any) -> str:
    """A pydantic error location as the file is written: ``queries[0].relevant.d1`` (list items
    by index, mapping keys by name; ``data`` tells the two apart, as both can be integers)."""
    parts: list[str] = []
    node = data
    for part in loc:
        if part == "[key]":  # pydantic's marker for a bad mapping key: the key itself is named already
            continue
        if isinstance(node, list) and isinstance(part, int):
            parts.append(f"[{part}]")
            node = node[part] if 0 <= part < len(node) else None
        else:
            parts.append(f".{part}")
            node = node.get(part) if isinstance(node, dict) else None
    return "".join(parts).lstrip(".")


def problem_text(error: Any) -> str:
    """pydantic's message for one error, with the offending value where the message lacks it."""
    message = error["msg"]
    if error["type"].endswith(("_type", "_parsing")) or error["type"] in _SHOWS_NO_VALUE:
        message += f", got {brief(error['input'])}"
    return message


def validation_problems(exc: ValidationError, data: Any, where: Callable[[tuple[Any, ...]], str],
                        whole: str = "(file)") -> str:
    """Every problem pydantic found (the first ``MAX_PROBLEMS``), each as ``<where>: <field>: <cause>``;
    ``where`` gives the file (and line) of an error location, ``whole`` names a problem of the whole document."""
    problems = [f"{where(e['loc'])}: {field_name(e['loc'], data) or whole}: {problem_text(e)}" for e in exc.errors()]
    problems = list(dict.fromkeys(problems))
    more = len(problems) - MAX_PROBLEMS
    return "; ".join(problems[:MAX_PROBLEMS]) + (f"; and {more} more" if more > 0 else "")


def yaml_where(path: Path) -> Callable[[tuple[Any, ...]], str]:
    """``file:line`` of an error location in a YAML file that ``read_yaml`` read (``file`` where no
    line is known). The file is read again for its lines only when a message needs one: the loader
    that keeps them is pure Python, several times slower than the one every run uses."""

    @functools.cache
    def with_lines() -> tuple[Any, Mappings]:
        try:
            return load_with_lines(path)
        except (OSError, ValueError, yaml.YAMLError):  # changed meanwhile: the message goes without a line
            return None, []

    def where(loc: tuple[Any, ...]) -> str:
        data, mappings = with_lines()
        line = line_of(data, mappings, tuple(p for p in loc if p != "[key]"))
        return f"{shown(path)}:{line}" if line else shown(path)

    return where
