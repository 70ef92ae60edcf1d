"""Every request body pinned in a golden file validates against the openai SDK's request types."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rag_core.evals.harness.sdk_types import validate_request

CASSETTES = Path(__file__).resolve().parents[1] / "cassettes"


def _bodies():
    for cassette in sorted(CASSETTES.glob("*.yaml")):
        data = yaml.load(cassette.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        for index, interaction in enumerate(data["interactions"]):
            body = interaction["request"]["body"].get("json")
            if body is not None:
                path = interaction["request"]["uri"].split("?")[0]
                yield pytest.param(path, body, id=f"{cassette.stem}[{index}]")


@pytest.mark.parametrize(("path", "body"), list(_bodies()))
def test_recorded_request_body_validates_against_the_sdk_types(path, body):
    validate_request(path, body)


def test_there_are_bodies_to_check():
    assert len(list(_bodies())) >= 16
