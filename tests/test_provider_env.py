"""The providers' environment variables while a case runs: factories written like user programs
(no base_url, no api_key) reach the emulator when recording and replay from the cassette."""

from __future__ import annotations

import os

from rag_core.evals.harness.provider_env import DUMMY_KEY, planned, provider_environment

EMULATOR = "http://127.0.0.1:5999"


def test_recording_against_the_emulator_points_every_sdk_at_it_with_dummy_keys():
    changes = planned(EMULATOR, recording=True, environ={"OPENAI_API_KEY": "sk-real", "GOOGLE_API_KEY": "real"})
    assert changes["OPENAI_BASE_URL"] == EMULATOR + "/v1"
    assert changes["CO_API_URL"] == EMULATOR and changes["GOOGLE_GEMINI_BASE_URL"] == EMULATOR
    # a real key in the environment is replaced, never sent to the emulator
    assert changes["OPENAI_API_KEY"] == DUMMY_KEY and changes["GOOGLE_API_KEY"] == DUMMY_KEY
    assert changes["CO_API_KEY"] == DUMMY_KEY and "GEMINI_API_KEY" not in changes


def test_replay_uses_the_default_endpoints_and_fills_only_missing_keys():
    changes = planned(None, recording=False, environ={"OPENAI_BASE_URL": "https://proxy.example/openai/v1",
                                                      "COHERE_API_KEY": "co-real"})
    assert changes == {"OPENAI_BASE_URL": None, "OPENAI_API_KEY": DUMMY_KEY, "GEMINI_API_KEY": DUMMY_KEY}


def test_live_recording_leaves_the_environment_alone():
    assert planned(None, recording=True, environ={"OPENAI_BASE_URL": "https://proxy.example/v1"}) == {}


def test_the_environment_is_restored_after_the_case(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "https://proxy.example/v1")
    monkeypatch.delenv("CO_API_URL", raising=False)
    with provider_environment(EMULATOR, recording=True):
        assert os.environ["CO_API_URL"] == EMULATOR
    assert os.environ["OPENAI_BASE_URL"] == "https://proxy.example/v1" and "CO_API_URL" not in os.environ


def test_a_cohere_client_built_without_url_or_key_reaches_the_emulator():
    from rag_core.embedder import CohereEmbedder
    from rag_core.evals.emulator.server import EmulatorServer

    server = EmulatorServer()
    try:
        server.load([], seed="env")
        with provider_environment(server.url, recording=True):
            vectors = CohereEmbedder(id="embed-v4.0", dimensions=8).get_embeddings(["som tam"], "query")
        assert len(vectors) == 1 and len(vectors[0]) == 8
    finally:
        server.close()


def test_cohere_clients_read_co_api_url_when_built_not_when_the_sdk_was_imported(monkeypatch):
    import cohere  # noqa: F401 (imported first, with whatever CO_API_URL was then)

    from rag_core.embedder.cohere import cohere_client

    monkeypatch.setenv("CO_API_URL", "http://127.0.0.1:5998")
    client = cohere_client("key", None, None, "test")
    assert client._client_wrapper.get_base_url() == "http://127.0.0.1:5998"
    monkeypatch.delenv("CO_API_URL")
    assert cohere_client("key", None, None, "test")._client_wrapper.get_base_url() == "https://api.cohere.com"
