"""A progress bar on a terminal, silent in CI and when output is not a TTY."""

from __future__ import annotations

import os
import sys
from typing import Iterable, TypeVar

from rag_core._optional import require

T = TypeVar("T")


def progress_bar(items: Iterable[T], desc: str, unit: str = "it") -> Iterable[T]:
    if os.environ.get("CI") or not sys.stderr.isatty():
        return items
    tqdm = require("tqdm", extra="agent", feature="the progress bar").tqdm

    return tqdm(items, desc=desc, unit=unit, leave=False)
