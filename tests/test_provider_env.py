"""The environment a case's subject runs in: the user's own, the same in every mode; only missing
keys (dummies) and the frameworks' side-effect switches are added, and only where unset."""

from __future__ import annotations

import os

from rag_core.evals.recording.provider_env import DUMMY_KEY, QUIET, planned, provider_environment

ENDPOINTS = ("OPENAI_BASE_URL", "OPENAI_API_BASE", "CO_API_URL", "GOOGLE_GEMINI_BASE_URL", "ANTHROPIC_BASE_URL",
             "AZURE_OPENAI_ENDPOINT")


def test_no_endpoint_is_ever_set_or_unset():
    for environ in ({}, {"OPENAI_BASE_URL": "https://proxy.example/v1"}, {v: "https://x.example" for v in ENDPOINTS}):
        assert not set(planned(environ, "/scratch")) & set(ENDPOINTS)


def test_a_key_the_user_has_is_kept_and_a_missing_one_gets_a_dummy():
    changes = planned({"OPENAI_API_KEY": "sk-real", "GEMINI_API_KEY": "g-real", "COHERE_API_KEY": "co-real"}, "/s")
    assert "OPENAI_API_KEY" not in changes and "GOOGLE_API_KEY" not in changes and "CO_API_KEY" not in changes
    assert changes["ANTHROPIC_API_KEY"] == DUMMY_KEY and changes["AZURE_OPENAI_API_KEY"] == DUMMY_KEY
    # google-genai and pydantic-ai both read GOOGLE_API_KEY first
    assert planned({}, "/s")["GOOGLE_API_KEY"] == DUMMY_KEY and "GEMINI_API_KEY" not in planned({}, "/s")


def test_framework_side_effects_are_switched_off_unless_the_user_chose():
    changes = planned({}, "/scratch")
    assert changes["OPENAI_AGENTS_DISABLE_TRACING"] == "1" and changes["HAYSTACK_TELEMETRY_ENABLED"] == "False"
    assert changes["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert changes["DSPY_CACHEDIR"] == os.path.join("/scratch", "dspy-cache")  # never ~/.dspy_cache
    chosen = {variable: "mine" for variable, _, _ in QUIET} | {"DSPY_CACHEDIR": "/mine"}
    assert not set(planned(chosen, "/scratch")) & set(chosen)


def test_the_environment_is_the_same_whatever_the_mode_and_restored_after(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "https://proxy.example/v1")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    before = dict(os.environ)
    with provider_environment():
        inside = dict(os.environ)
    with provider_environment():
        assert dict(os.environ) == inside  # no mode argument exists to make it differ
    assert inside["OPENAI_BASE_URL"] == "https://proxy.example/v1" and inside["ANTHROPIC_API_KEY"] == DUMMY_KEY
    assert dict(os.environ) == before
