"""Command lines the harness prints: each word quoted for a POSIX shell as ``shlex`` quotes it, so
that a command pasted from a message runs as printed; and the commands found again in a text that
names them, so that a summary can show each as code of its own, to be copied whole.

Which command fixes what is decided in ``recording/fix_commands.py``; this module only writes them.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

# a word as shlex.quote writes it: bare when it holds only the characters a shell reads as they
# are, else in single quotes (a quote inside is '"'"'); a test's node id holds [ ] and is quoted
_QUOTED = r"'[^']*'(?:\"'\"'[^']*')*"
_BARE = r"[\w@%+=:,./][\w@%+=:,./-]*"
_OPTION = r"--[a-z][a-z-]*(?:=[\w.-]+)?"
# what the harness prints: the selected tests, then at least one option; prose around it (", then
# review", " (set the key…)", "; if …") is none of these words
_COMMAND = re.compile(rf"pytest(?: (?:{_QUOTED}|{_BARE}))+(?: {_OPTION})+")


def pytest_command(selectors: Sequence[str], options: Sequence[str]) -> str:
    """``pytest`` with these tests (node ids, paths) and options, each word quoted for a shell."""
    return " ".join(["pytest", *map(shlex.quote, selectors), *options])


def spans(text: str) -> list[tuple[str, bool]]:
    """``text`` cut into its prose and the pytest commands in it: (part, whether it is a command),
    in order, with no empty part."""
    parts: list[tuple[str, bool]] = []
    start = 0
    for found in _COMMAND.finditer(text):
        if found.start() > start:
            parts.append((text[start:found.start()], False))
        parts.append((found.group(), True))
        start = found.end()
    if start < len(text):
        parts.append((text[start:], False))
    return parts
