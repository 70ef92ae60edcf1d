"""Every request body pinned in a golden file validates against the openai SDK's request types."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_core.evals.recording.cassette_format import read_cassette
from rag_core.evals.wire.traffic import validate_request

CASSETTES = Path(__file__).resolve().parents[1] / "cassettes"


def _bodies():
    # read as the harness reads cassettes: each text is parsed once per process, and the golden
    # cases replaying the same cassettes in this session find it parsed
    for cassette in sorted(CASSETTES.glob("*.yaml")):
        for index, interaction in enumerate(read_cassette(cassette)["interactions"]):
            request = interaction["request"]
            if request["body"].lstrip().startswith("{"):
                yield pytest.param(request["uri"].split("?")[0], json.loads(request["body"]), id=f"{cassette.stem}[{index}]")


BODIES = list(_bodies())


# the SDK a body's types come from, where it is not in the light install (the `evals` extra)
OPTIONAL_SDKS = {"/v1/messages": "anthropic", "/converse": "botocore", "/converse-stream": "botocore"}


@pytest.mark.parametrize(("path", "body"), BODIES)
def test_recorded_request_body_validates_against_the_sdk_types(path, body):
    for suffix, sdk in OPTIONAL_SDKS.items():
        if path.endswith(suffix):
            pytest.importorskip(sdk, reason=f"{sdk} is not installed (the frameworks or anthropic extra)")
    validate_request(path, body)


def test_there_are_bodies_to_check():
    assert len(BODIES) >= 16
