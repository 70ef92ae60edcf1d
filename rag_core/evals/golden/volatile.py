"""A replayed request that differs from the recorded one only in values made anew each run (an id
from ``os.urandom``, numpy's generator, the time): which fields, both values, and the
``normalize:`` rules that absorb them, ready to paste into the case file.

A difference is taken for such a value only when it is a token of its own in a string (a run of
letters and digits, a canonical uuid, a base64 or hex token) at least ``MIN_TOKEN`` characters
long, with a digit in it, and everything around it is the same on both sides: an edited prompt,
a renamed field or a changed number is a change of the program, which no rule should hide. Each
rule is checked to absorb what it was made for before it is offered.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Any, Iterator

from rag_core.evals.golden.normalize_rules import NormalizeRule
from rag_core.evals.golden.normalizing import normalize

MIN_TOKEN = 8  # a random id is at least this long; the words and numbers a program edits mostly are not
CONTEXT = 16  # at most this many characters before the value anchor its rule's pattern
EXCERPT = 40  # characters of a long value shown on each side of the one that differs

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
# ways to cut a string into tokens, the finest first: "pyd_ai_<hex>" keeps its prefix, and a
# base64 token that holds "-", "_" or "+" is still one token in a coarser cut
_CUTS = [re.compile(rf"{_UUID}|[A-Za-z0-9]+|[^A-Za-z0-9]"), re.compile(rf"{_UUID}|[A-Za-z0-9_-]+|[^A-Za-z0-9_-]"),
         re.compile(rf"{_UUID}|[A-Za-z0-9+/]+=*|[^A-Za-z0-9+/=]")]
# what a token is made of, the narrowest class first, and its placeholder; letters of both cases
# are taken for base64url (a token of that alphabet need not show its "-" or "_" every run)
_CLASSES = [("[0-9]", "<number, per run>"), ("[0-9a-f]", "<hex, per run>"), ("[0-9A-F]", "<hex, per run>"),
            ("[a-z0-9]", "<random, per run>"), ("[A-Z0-9]", "<random, per run>"),
            ("[A-Za-z0-9_-]", "<random, per run>"), ("[A-Za-z0-9+/]", "<random, per run>")]
_PATH_KEY = re.compile(r"[^.\[\]]+")  # a key a normalize path can name (observe.py's path steps)


@dataclass(frozen=True)
class VolatileValue:
    field: str  # where in the request body, e.g. contents[1].parts[0].functionCall.id
    recorded: str
    sent: str


@dataclass(frozen=True)
class Volatile:
    """What differs between two requests, when all of it is values made anew each run."""

    values: list[VolatileValue]
    rules: list[NormalizeRule]

    def fields(self) -> str:
        """Each field with both values (the part around the difference, of a long one)."""
        return "; ".join(f"{v.field}: recorded {_excerpt(v.recorded, v.sent)!r}, now {_excerpt(v.sent, v.recorded)!r}"
                         for v in self.values)

    def yaml(self) -> str:
        """The rules as a case file's ``normalize:`` holds them."""
        return "\n".join(["normalize:", *(f"  - {rule_yaml(rule)}" for rule in self.rules)])


def rule_yaml(rule: NormalizeRule) -> str:
    """A rule as one YAML flow mapping (JSON strings are YAML double-quoted scalars)."""
    fields = {"path": rule.path, "pattern": rule.pattern, "placeholder": rule.placeholder}
    return "{" + ", ".join(f"{key}: {json.dumps(value)}" for key, value in fields.items() if value is not None) + "}"


def volatile(recorded: Any, sent: Any, prefix: str = "requests[*]") -> Volatile | None:
    """The values a request (``sent``) differs from its recording in and the rules (their paths
    under ``prefix``) that absorb them, when every difference is such a value; None otherwise."""
    values: list[VolatileValue] = []
    rules: list[NormalizeRule] = []
    for field, pattern_path, before, after in _leaves(recorded, sent):
        if not (isinstance(before, str) and isinstance(after, str)) or pattern_path is None:
            return None
        patterns = _token_patterns(before, after)
        if patterns is None:
            return None
        values.append(VolatileValue(field, before, after))
        for pattern, placeholder in patterns:
            joined = pattern_path if not pattern_path or pattern_path.startswith("[") else f".{pattern_path}"
            rule = NormalizeRule(path=prefix + joined, pattern=pattern, placeholder=placeholder)
            if rule not in rules:
                rules.append(rule)
    if not values:
        return None
    absorbed = normalize({"requests": [recorded]}, rules) == normalize({"requests": [sent]}, rules)
    return Volatile(values, rules) if absorbed else None


def _leaves(recorded: Any, sent: Any, field: str = "", path: str | None = "") -> Iterator[tuple[str, str | None, Any, Any]]:
    """(field, its normalize path with every list index ``[*]``, or None when a key cannot be
    named in one; the recorded value; the sent one) of each value that differs. A key or item on
    one side only is a difference of the whole mapping or list."""
    if isinstance(recorded, dict) and isinstance(sent, dict) and recorded.keys() == sent.keys():
        for key in recorded:
            nameable = path is not None and isinstance(key, str) and _PATH_KEY.fullmatch(key) is not None
            yield from _leaves(recorded[key], sent[key], f"{field}.{key}" if field else str(key),
                               (f"{path}.{key}" if path else key) if nameable else None)
    elif isinstance(recorded, list) and isinstance(sent, list) and len(recorded) == len(sent):
        for index, (before, after) in enumerate(zip(recorded, sent)):
            yield from _leaves(before, after, f"{field}[{index}]", f"{path}[*]" if path is not None else None)
    elif recorded != sent:
        yield field, path, recorded, sent


def _token_patterns(before: str, after: str) -> list[tuple[str, str]] | None:
    """(pattern, placeholder) for each token that differs between the two strings, when the
    strings are the same but for such tokens (see the module docstring); None otherwise."""
    for cut in _CUTS:
        old, new = cut.findall(before), cut.findall(after)
        if len(old) != len(new):
            continue
        changed = [i for i, (a, b) in enumerate(zip(old, new)) if a != b]
        if all(_looks_random(old[i]) and _looks_random(new[i]) for i in changed):
            return list(dict.fromkeys(_pattern(old, i, new[i], set(changed)) for i in changed))
    return None


# a word a program names things with: lower case, or camelCase / PascalCase
_WORD = re.compile(r"[A-Za-z][a-z]+(?:[A-Z][a-z]+)*")


def _looks_random(token: str) -> bool:
    """A token long enough for an id, with a digit, or of both cases and not shaped like a word (a
    base64 token of letters alone: about one in ten of 11 characters has no digit)."""
    if len(token) < MIN_TOKEN:
        return False
    mixed = any(c.isupper() for c in token) and any(c.islower() for c in token)
    return any(c.isdigit() for c in token) or (mixed and _WORD.fullmatch(token) is None)


def _pattern(tokens: list[str], index: int, other: str, changed: set[int]) -> tuple[str, str]:
    """The pattern matching token ``index`` of ``tokens`` (and ``other``, the other side's) after
    the same tokens before it (at most ``CONTEXT`` characters, none past another changed token or
    a space), and its placeholder."""
    token = tokens[index]
    if re.fullmatch(_UUID, token) and re.fullmatch(_UUID, other):
        body, placeholder = _UUID, "<uuid, per run>"
    else:
        chars, placeholder = next(((c, p) for c, p in _CLASSES if re.fullmatch(f"{c}+", token + other)),
                                  ("[^\\s]", "<random, per run>"))
        body = chars + (f"{{{len(token)}}}" if len(token) == len(other) else "+")
    context = ""
    for previous in range(index - 1, -1, -1):
        piece = tokens[previous]
        if previous in changed or piece.isspace() or len(context) + len(piece) > CONTEXT:
            break
        context = piece + context
    return (f"(?<={re.escape(context)}){body}" if context else body), placeholder


def _excerpt(value: str, other: str) -> str:
    """``value``, or for a long one the part around where it differs from ``other``."""
    if len(value) <= 2 * EXCERPT + 32:
        return value
    differing = [op for op in difflib.SequenceMatcher(None, value, other, autojunk=False).get_opcodes()
                 if op[0] != "equal"]
    start, end = (differing[0][1], differing[-1][2]) if differing else (0, 0)
    end = min(end, start + 4 * EXCERPT)  # values far apart: the first ones
    head, tail = max(0, start - EXCERPT), min(len(value), end + EXCERPT)
    return ("…" if head else "") + value[head:tail] + ("…" if tail < len(value) else "")
