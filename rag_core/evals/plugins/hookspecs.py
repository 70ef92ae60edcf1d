"""Hooks a project implements in its ``conftest.py`` to adapt the harness to its own needs."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.hookspec
def pytest_rag_core_configure_cassette(case: Any, vcr: Any) -> None:
    """Configure the ``vcr.VCR`` a case's cassette is opened with, before it opens, as
    pytest-recording's ``pytest_recording_configure`` does: register a matcher or a serializer,
    add a ``before_record_request`` / ``before_record_response`` filter (it runs before the
    harness's own scrubbing, which always runs), ignore a host. ``case`` is the
    ``GoldenCase`` being run. The record mode, the persister and the body matching stay the
    harness's: they are what makes a recording replace the old one whole."""
