"""Keep a record's size bounded whatever a case observes: values made JSON-able, then cut.

A golden field can be a whole request body or a long answer; a run of thousands of failing cases
must still give a record a browser opens. Each value and each diff is cut to ``VALUE_LIMIT``
bytes, and a record keeps values and diffs only until it has spent ``DETAIL_BUDGET`` on them
(``keep_within_budget``, applied to every record written).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rag_core.evals.runs.schema import CaseEntry

VALUE_LIMIT = 64 * 1024  # bytes of one golden value, one observed value, one diff, one message
DETAIL_BUDGET = 8 * 1024 * 1024  # bytes of failure values and diffs one record keeps in all
# runs of one --live --repeat case kept one by one (the aggregate counts them all): enough to see
# how a flaky case fails, and a --repeat 10000 cannot make a record no browser opens
REPEAT_LIMIT = 100


def jsonable(value: Any, depth: int = 0) -> Any:
    """``value`` as plain JSON data: mappings, sequences, text, numbers, booleans and null; anything
    else as its text (a failure may hold an SDK object or a pydantic model)."""
    if depth > 64:  # a structure this deep is not something anyone reads in a report
        return "…"
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v, depth + 1) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(v, depth + 1) for v in value), key=repr)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    dump = getattr(value, "model_dump", None)  # pydantic models
    if callable(dump):
        try:
            return jsonable(dump(mode="json"), depth + 1)
        except Exception:  # a model that cannot dump itself is shown as its text
            pass
    return repr(value)


def size_of(value: Any) -> int:
    """Bytes of ``value``'s compact JSON text (UTF-8), as the record writes it."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def cut_text(text: str, limit: int = VALUE_LIMIT, whole: int | None = None) -> tuple[str, int | None]:
    """``text`` cut to ``limit`` UTF-8 bytes (at a character boundary, with a closing mark), and its
    full size when it was cut (None when whole); ``whole`` is the size the mark names, when ``text``
    is itself a shortened form of something larger."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text, None
    head = data[:limit].decode("utf-8", "ignore")
    return f"{head}\n… (cut: {whole or len(data):,} bytes in all)", len(data)


def bound_value(value: Any, limit: int = VALUE_LIMIT) -> tuple[Any, int | None]:
    """``value`` as JSON data if its text fits in ``limit`` bytes; else the head of its YAML text (what
    the failure's diff compares), and the full size."""
    plain = jsonable(value)
    size = size_of(plain)
    if size <= limit:
        return plain, None
    if isinstance(plain, str):
        head, _ = cut_text(plain, limit)
        return head, size
    # the head of its YAML text; a large value is cut before it is written out (``abridge.alone``)
    from rag_core.evals.common.abridge import alone
    from rag_core.evals.common.yaml_dump import dump_for_diff

    head, _ = cut_text(dump_for_diff(alone(plain)), limit, whole=size)
    return head, size


def keep_within_budget(cases: list[CaseEntry]) -> list[str]:
    """Keep failure values and diffs, in case order (a case's own, then its live runs'), until
    ``DETAIL_BUDGET`` is spent; later failures keep their check, file, field and message. Notes
    saying what was left out."""
    spent, dropped = 0, 0
    for case in cases:
        repeats = case.live.repeats if case.live else []
        for failure in [*case.failures, *(f for repeat in repeats for f in repeat.failures)]:
            size = size_of([failure.golden, failure.observed, failure.diff]) if failure.has_values or failure.diff else 0
            if spent + size <= DETAIL_BUDGET:
                spent += size
                continue
            failure.has_values, failure.golden, failure.observed, failure.diff = False, None, None, ""
            failure.truncated["detail"] = size
            dropped += 1
    if not dropped:
        return []
    return [f"{dropped} failure(s) kept without their values and diffs: the record had spent its "
            f"{DETAIL_BUDGET // (1024 * 1024)} MB on earlier ones"]
