"""Line diffs of two values, as every check's failure shows them (``Failure.diff``)."""

from __future__ import annotations

import difflib
from typing import Any

from rag_core.evals.harness.yaml_dump import TRAILING_MARK, dump_for_diff


def unified(label: str, expected: Any, observed: Any) -> str:
    return unified_between(f"{label} (expected)", f"{label} (observed)", expected, observed)


def unified_between(before_label: str, after_label: str, before: Any, after: Any) -> str:
    """A line diff of two values as YAML, trailing whitespace made visible."""
    diff = "".join(difflib.unified_diff(dump_for_diff(before).splitlines(keepends=True),
                                        dump_for_diff(after).splitlines(keepends=True), before_label, after_label))
    marks = [f"{mark} a trailing {name}" for mark, name in ((TRAILING_MARK[" "], "space"), (TRAILING_MARK["\t"], "tab"))
             if mark in diff]
    return diff + (f"({', '.join(marks)})\n" if marks else "")
