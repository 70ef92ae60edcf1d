"""Lone surrogates: text that cannot be encoded as UTF-8 (JSON's ``"\\udce9"`` escapes, file names
decoded with ``surrogateescape``) would fail far from where it came in, in a request body, a
database row or an index.

One policy everywhere text enters rag_core (document text and metadata, a run's input, a
tool's output, what a session stores): surrogate pairs are joined into the character they
encode, any lone surrogate left is replaced by U+FFFD, and a ``SurrogatesReplaced`` warning
names the field. Replacing (rather than refusing) keeps a run alive when one tool returns one
bad character; the warning says it happened.
"""

from __future__ import annotations

import re
import warnings

_SURROGATE = re.compile("[\ud800-\udfff]")


class SurrogatesReplaced(UserWarning):
    """Lone surrogates in a text were replaced by U+FFFD."""


def has_surrogates(text: str) -> bool:
    """Whether ``without_surrogates`` would change ``text``."""
    return _SURROGATE.search(text) is not None


def without_surrogates(text: str, field: str) -> str:
    if not _SURROGATE.search(text):
        return text
    joined = text.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")  # pairs -> characters
    cleaned, count = _SURROGATE.subn("\ufffd", joined)
    if count:
        warnings.warn(f"{field}: {count} lone surrogate(s) replaced by U+FFFD (the text was not valid Unicode)",
                      SurrogatesReplaced, stacklevel=3)
    return cleaned
