"""The one place fix commands come from. Every command a failure message tells a user to run is
built here, and tests run each one to check that it ends green.

A command selects exactly the failing case by its pytest node id (``-k`` would also match
every case whose id contains the same words), and records against the emulator when the case
is emulated (it has an ``emulate:`` script, or its cassette was recorded against the emulator).
"""

from __future__ import annotations

import shlex


def _pytest(selector: str, *options: str) -> str:
    return " ".join(["pytest", shlex.quote(selector), *options])


def _source(emulated: bool) -> list[str]:
    return ["--emulator"] if emulated else []


def live_note(emulated: bool) -> str:
    return "" if emulated else " (set the provider's API key, e.g. OPENAI_API_KEY, to record against the live API)"


def record(selector: str, emulated: bool) -> str:
    """A case with no cassette yet: record it; its first golden is written with it."""
    return _pytest(selector, "--record-mode=once", *_source(emulated))


def rerecord(selector: str, emulated: bool) -> str:
    """A cassette that no longer matches what the agent sends: record it again and accept the new
    golden (review the golden diff before committing)."""
    return _pytest(selector, "--record-mode=rewrite", *_source(emulated), "--update-goldens")


def update_goldens(selector: str) -> str:
    """The cassette is fine but the snapshot changed: accept what the case now observes."""
    return _pytest(selector, "--update-goldens")
