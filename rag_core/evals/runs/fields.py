"""Reading a run record's JSON fields: each reader takes a field of a JSON object, or its default
when the field is absent or null, and raises ``FieldError`` when the field holds another kind of
value. A record edited by hand, or written by something else, is refused naming the field
(``cases[3].id``) instead of failing later, elsewhere."""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, TypeVar


class RecordError(ValueError):
    """A file is not a run record this version can read; the message names the file and the cause."""

T = TypeVar("T")
# the largest count the page's script reads exactly (a JavaScript number)
_LARGEST_WHOLE = 2**53


class FieldError(RecordError):
    """A field holding the wrong kind of value; ``path`` says where (``cases[3].id``)."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem

    def within(self, prefix: str) -> FieldError:
        return FieldError(prefix + (self.path if self.path.startswith("[") else f".{self.path}"), self.problem)


def kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    return "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) else type(value).__name__


def shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def wrong(key: str, wanted: str, value: Any) -> FieldError:
    return FieldError(key, f"should be {wanted}, not {kind(value)} ({shown(value)})")


def within(key: str, read: Callable[[Any], T], value: Any) -> T:
    try:
        return read(value)
    except FieldError as exc:
        raise exc.within(key) from None


def required_text(data: Mapping[str, Any], key: str) -> str:
    if data.get(key) is None:
        raise FieldError(key, "is missing")
    return text(data, key)


def text(data: Mapping[str, Any], key: str, default: str = "") -> str:
    value = data.get(key)
    if value is None:
        return default
    if not isinstance(value, str):
        raise wrong(key, "text", value)
    return value


def optional_text(data: Mapping[str, Any], key: str) -> str | None:
    return None if data.get(key) is None else text(data, key)


def as_number(key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise wrong(key, "a number", value)
    try:
        number = float(value)
    except OverflowError:  # an integer too large for a float
        number = math.inf
    if not math.isfinite(number):
        raise FieldError(key, f"should be a finite number, not {shown(value)}")
    return number


def number(data: Mapping[str, Any], key: str, default: float = 0.0) -> float:
    value = data.get(key)
    return default if value is None else as_number(key, value)


def as_whole(key: str, value: Any) -> int:
    number = int(as_number(key, value))
    if abs(number) > _LARGEST_WHOLE:
        raise FieldError(key, f"should be a count, not {shown(value)}")
    return number


def whole(data: Mapping[str, Any], key: str, default: int = 0) -> int:
    value = data.get(key)
    return default if value is None else as_whole(key, value)


def flag(data: Mapping[str, Any], key: str, default: bool = False) -> bool:
    value = data.get(key)
    if value is None:
        return default
    if not isinstance(value, (bool, int)):
        raise wrong(key, "true or false", value)
    return bool(value)


def list_of(data: Mapping[str, Any], key: str) -> list[Any]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):  # a tuple: the harness hands its own data over in process
        raise wrong(key, "a list", value)
    return list(value)


def mapping(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise wrong(key, "an object", value)
    return value


def optional_mapping(data: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    return mapping(data, key) if data.get(key) is not None else None


def texts(data: Mapping[str, Any], key: str) -> list[str]:
    items = list_of(data, key)
    for number, item in enumerate(items):
        if not isinstance(item, str):
            raise wrong(f"{key}[{number}]", "text", item)
    return list(items)


def number_list(data: Mapping[str, Any], key: str) -> list[float]:
    return [as_number(f"{key}[{number}]", item) for number, item in enumerate(list_of(data, key))]


def numbers(data: Mapping[str, Any], key: str) -> dict[str, float]:
    return {name: as_number(f"{key}.{name}", value) for name, value in mapping(data, key).items()}


def wholes(data: Mapping[str, Any], key: str) -> dict[str, int]:
    return {name: as_whole(f"{key}.{name}", value) for name, value in mapping(data, key).items()}


def ranking(data: Mapping[str, Any], key: str) -> list[tuple[str, int | None]]:
    """A query's top documents: [doc id, its grade or null] pairs."""
    out: list[tuple[str, int | None]] = []
    for number, item in enumerate(list_of(data, key)):
        where = f"{key}[{number}]"
        if not (isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str)):
            raise wrong(where, "a [document id, grade] pair", item)
        out.append((item[0], None if item[1] is None else as_whole(f"{where}[1]", item[1])))
    return out


def each(data: Mapping[str, Any], key: str, read: Callable[[Mapping[str, Any]], T]) -> list[T]:
    """The list ``key`` of objects, each read by ``read``; a wrong one named by its place."""
    out = []
    for number, item in enumerate(list_of(data, key)):
        where = f"{key}[{number}]"
        if not isinstance(item, Mapping):
            raise wrong(where, "an object", item)
        out.append(within(where, read, item))
    return out
