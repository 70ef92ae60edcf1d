"""What a value after a key-like name is: a key of a known shape, a random-looking token, a
password, a base64 ``user:password``; or nothing (a path, a URL, a mask, a word)."""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter

# the shapes a bare key has (also checked, as before, under a key-like name whatever the rules below say)
_KEY_SHAPED = {
    "an Azure-style key (32 hex digits)": re.compile(r"[0-9a-fA-F]{32}"),
    "a Cohere-style key (40 letters and digits)": re.compile(r"[A-Za-z0-9]{40}"),
    "an AWS secret access key": re.compile(r"[A-Za-z0-9/+]{40}"),
}
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_\-./+=~:%]+")
_PASSWORD_CHARS = re.compile(r"\S+")
_LETTER_RUN = re.compile(r"[A-Za-z]{16}")


def entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(c / len(value) * math.log2(c / len(value)) for c in counts.values())


def _pathish(value: str) -> bool:
    """A URL, or a path of lower-case words (projects/p/secrets/name), names a secret: it is none."""
    if "://" in value:
        return True
    return sum(1 for part in value.split("/") if len(part) >= 3 and part.isalpha() and part.islower()) >= 2


def _random_token(value: str) -> bool:
    """One token of key characters that looks random: 16+ characters, letters and digits, entropy ≥ 3 bits."""
    if not 16 <= len(value) <= 8192 or not _TOKEN_CHARS.fullmatch(value) or _pathish(value):
        return False
    letters = any(c.isalpha() for c in value)
    digits = any(c.isdigit() for c in value)
    mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
    # without digits, only a long run of mixed-case letters (not words joined by separators:
    # os.environ/OPENAI_API_KEY) looks random
    if not letters or not (digits or (mixed and len(value) >= 24 and _LETTER_RUN.search(value))):
        return False
    return entropy(value) >= (3.0 if digits else 3.5)


def _password_like(value: str) -> bool:
    """A password after a password-like name: 6+ characters, letters with digits (or with symbols
    beyond - _ . /), not a path and not a mask (****, <…>, ${…}, {{…}})."""
    if not 6 <= len(value) <= 128 or not _PASSWORD_CHARS.fullmatch(value) or _pathish(value):
        return False
    if value.startswith(("/", "~/", "./")):  # PWD=/home/chef: a directory
        return False
    if value[0] in "<$%{*" or set(value) <= set("*x.X#•"):
        return False
    letters = any(c.isalpha() for c in value)
    digits = any(c.isdigit() for c in value)
    symbols = any(not c.isalnum() and c not in "-_./" for c in value)
    return letters and (digits or (symbols and len(value) >= 8))


def value_kind(cls: str, value: str) -> str | None:
    """The kind of credential ``value`` is after a name of class ``cls``, or None."""
    if cls == "password":
        return "a password" if _password_like(value) else None
    for kind, shape in _KEY_SHAPED.items():
        if shape.fullmatch(value):
            return kind
    if cls == "strong":
        if 8 <= len(value) <= 512 and decodes_to_user_and_password(value):
            return "a basic-auth credential (base64 user:password)"
        if _random_token(value):
            return "a high-entropy value"
    elif cls == "weak" and len(value) >= 20 and "." not in value and _random_token(value):
        if any(c.isupper() for c in value) and any(c.islower() for c in value):
            return "a high-entropy value"
    return None


def decodes_to_user_and_password(candidate: str) -> bool:
    try:
        decoded = base64.b64decode(candidate + "=" * (-len(candidate) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    return ":" in decoded and decoded.isprintable()
