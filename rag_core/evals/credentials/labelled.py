"""The credentials a text shows by what stands before them: a value after a key-like name
(``NAME=value``, ``NAME: value``, ``"name": "value"``, ``?name=value``), "the key is …" in prose,
and a ``Basic …`` credential; and a text that is itself the value of a key-like field."""

from __future__ import annotations

import re
from urllib.parse import unquote_plus

from rag_core.evals.credentials.names import label_class, query_class
from rag_core.evals.credentials.token_bounds import DIFF_MARK
from rag_core.evals.credentials.values import decodes_to_user_and_password, value_kind

_BASIC = re.compile(r"\b[Bb]asic\s++([A-Za-z0-9+/]{8,}+={0,2})")

# a label: a name (up to 64 characters, starting where a run of name characters starts) and a
# separator (=, :, :=, =>); the name may be quoted (JSON, also JSON inside a string) or start with --
_LABEL = re.compile(r"(?<![\w.\-])-{0,2}([A-Za-z_][\w.\-]{0,63}+)(?:\\?[\"'])?[ \t]*+(?:=>|:=|[:=])(?!=|//)")
# its value: up to the next space, quote, separator or bracket
_VALUE = re.compile(r"[ \t]*+(?:\\?[\"'`])?([^\s\"'`,;&<>\\(){}\[\]]{1,4096}+)")
# a name is looked at only when it holds one of these (cheap test before the full one)
LABEL_HINT = re.compile(r"(?i)key|token|secret|pass|pwd|pw|auth|cred|sig|cookie")
# "the key is …", "API key for the billing account: …"
_PROSE = re.compile(
    r"(?i)(?:(?<![\w\-])|" + DIFF_MARK + r")"
    r"(?<!cache )(?<!page )(?<!sort )(?<!public )(?<!primary )(?<!foreign )(?<!idempotency )"
    r"(key|token|secret|password)\s++(?:is|was|for\b[^:\n]{1,80}+:)\s*+:?\s*+[\"'`]?([A-Za-z0-9_\-./+=~]{16,512}+)"
)
_PROSE_HINTS = ("key ", "token ", "secret ", "password ")


def basic_kinds(text: str, lowered: str) -> list[str]:
    if "basic" in lowered:
        for match in _BASIC.finditer(text):
            if decodes_to_user_and_password(match.group(1)):
                return ["a basic-auth credential (Basic …)"]
    return []


def labelled_kinds(text: str) -> list[str]:
    """Values after key-like names in NAME=value, NAME: value, "name": "value" and ?name=value
    forms. A key-like name's value is read once: the search goes on after it, so the work stays
    linear whatever the text repeats."""
    found = []
    position = 0
    while True:
        match = _LABEL.search(text, position)
        if match is None:
            return found
        position = match.end()
        name = match.group(1)
        if not LABEL_HINT.search(name):
            continue
        start = match.start()
        if name.startswith("u0026") and text.endswith("\\", 0, start):  # & escaped in JSON text
            name, start = name[5:], start + 5
        query = (start > 0 and text[start - 1] in "?&") or text.endswith(("&amp;", "\\u0026"), 0, start)
        cls = query_class(name) if query else label_class(name)
        if cls is None:
            continue
        value_match = _VALUE.match(text, position)
        if value_match is None:
            continue
        value = value_match.group(1)
        position = value_match.end()
        kind = value_kind(cls, unquote_plus(value) if query else value)
        if kind:
            found.append(f"{kind} in the key-like field {name!r}")


def prose_kinds(text: str, lowered: str) -> list[str]:
    if any(hint in lowered for hint in _PROSE_HINTS):
        for match in _PROSE.finditer(text):
            label, value = match.group(1).lower(), match.group(2).rstrip(".")
            kind = value_kind("password" if label == "password" else "strong", value)
            if kind or re.fullmatch(r"[0-9a-fA-F]{32,}", value):
                return [f"{kind or 'a hex key'} after '{label} is/for …:' in text"]
    return []


def named_kinds(text: str, field_name: str) -> list[str]:
    """The text as the value of a key-like field: decided by the field's name, so at every place."""
    cls = label_class(field_name) if field_name else None
    kind = value_kind(cls, text.strip()) if cls else None
    return [f"{kind} in the key-like field {field_name!r}"] if kind else []
