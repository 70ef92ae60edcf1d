"""Where a token may start and end in a text: the boundaries the detector's patterns are written with."""

from __future__ import annotations

# a unified diff's mark ("-" or "+" opening a line) glued to a token's front: no part of the token.
# Run records and reports hold diffs, and a removed line "-sk-…" must not hide its key behind the
# boundaries below (a "-" there reads as the inside of a run of token characters). A line may
# also open after an escaped newline: a diff inside JSON text (a run record) or a quoted YAML string
DIFF_MARK = r"(?<=^[-+])|(?<=\n[-+])|(?<=\\n[-+])"
# where a token may not start or end: inside a run of the characters tokens are made of
START = r"(?:(?<![A-Za-z0-9_\-])|" + DIFF_MARK + ")"
END = r"(?![A-Za-z0-9_\-])"
