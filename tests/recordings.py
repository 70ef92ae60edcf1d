"""Access to the real provider recordings in ../shared/provider-recordings (read-only)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

RECORDINGS = Path(__file__).resolve().parents[2] / "shared" / "provider-recordings"


def recording_path(name: str) -> Path:
    path = RECORDINGS / name
    if not path.exists():
        pytest.skip(f"real provider recordings not found at {RECORDINGS} (they live beside the project in shared/)")
    return path


def interactions(name: str) -> list[dict[str, Any]]:
    return yaml.safe_load(recording_path(name).read_text())["interactions"]


def response_json(name: str, index: int = 0) -> dict[str, Any]:
    return json.loads(interactions(name)[index]["response"]["body"]["string"])


def sse_events(name: str, index: int = 0) -> list[dict[str, Any]]:
    body = interactions(name)[index]["response"]["body"]["string"]
    return [
        json.loads(line[len("data: "):])
        for line in body.splitlines()
        if line.startswith("data: ") and line != "data: [DONE]"
    ]


def replay(name: str) -> Any:
    """A vcrpy context that replays a recording, matching on method and path only
    (the recorded bodies are another project's requests, not ours)."""
    import vcr

    return vcr.VCR(record_mode="none", match_on=["method", "path"]).use_cassette(str(recording_path(name)))
