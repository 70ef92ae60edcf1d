"""What the built-in rules find in a text, wherever it stands: the families, the ruleset, and the
labelled values; read again decoded where the text holds an escaped text, and not read again
within one scan once they found nothing in it."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from rag_core.evals.credentials.families import FAMILIES
from rag_core.evals.credentials.family_index import FAMILY_INDEX
from rag_core.evals.credentials.labelled import LABEL_HINT, basic_kinds, labelled_kinds, prose_kinds


class TextKinds(NamedTuple):
    """What the built-in rules find in a text alone, whatever its place: the kinds, by rule."""

    families: tuple[str, ...]
    ruleset: tuple[str, ...]
    basic: tuple[str, ...]
    labelled: tuple[str, ...]
    prose: tuple[str, ...]

    def __or__(self, other: tuple[Any, ...]) -> TextKinds:  # type: ignore[override]
        return TextKinds(*(tuple(dict.fromkeys(mine + theirs)) for mine, theirs in zip(self, other)))


_NOTHING = TextKinds((), (), (), (), ())

# a text that holds another text encoded (a tool call's JSON arguments, a server-sent event's JSON
# data, a JSON body kept as a string) is read decoded too: there a key that opens a line follows
# "\n", and no rule would see a token start after the "n"
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|([nrtbf\"\\/']))")
_ESCAPED = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}
_NESTING = 3  # encodings read through (a JSON text inside a JSON string inside a JSON string)


def _decoded(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        code, char = match.groups()
        if code is not None:
            value = int(code, 16)
            return "\ufffd" if 0xD800 <= value <= 0xDFFF else chr(value)  # a lone surrogate half: not text
        return _ESCAPED.get(char, char)

    return _ESCAPE.sub(one, text)


def text_kinds(text: str, clean: set[str]) -> TextKinds:
    """What the built-in rules find in ``text`` and in what it encodes; nothing if it is in
    ``clean``, the texts of this scan they found nothing in (an equal str: a str subclass could
    claim to equal one of them)."""
    exact = type(text) is str
    if exact and text in clean:
        return _NOTHING
    kinds = _read_one(text)
    view = text
    for _ in range(_NESTING):
        if "\\" not in view:
            break
        decoded = _decoded(view)
        if decoded == view:
            break
        view = decoded
        kinds = kinds | _read_one(view)
    if exact and not any(kinds):
        # only a clean text is passed over: one holding a credential is read, and reported, at every place
        clean.add(text)
    return kinds


def _read_one(text: str) -> TextKinds:
    from rag_core.evals.secret_rules import ruleset

    lowered = text.lower()
    families = (FAMILIES[index] for index in FAMILY_INDEX.candidates(text, lowered))
    return TextKinds(
        tuple(family.kind for family in families if family.found_in(text, lowered)),
        ruleset().kinds(text),
        tuple(basic_kinds(text, lowered)),
        tuple(labelled_kinds(text)) if LABEL_HINT.search(text) else (),
        tuple(prose_kinds(text, lowered)),
    )
