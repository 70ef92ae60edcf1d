"""Emulated embeddings, reranking and Cohere chat parse like the real recordings, through the SDKs."""

from __future__ import annotations

import json
import statistics
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

from rag_core.evals.emulator import cohere as cohere_api, openai_embeddings
from rag_core.evals.emulator.script import DeterministicIds, ScriptedTurn
from rag_core.evals.emulator.server import EmulatorServer
from rag_core import Document
from rag_core.embedder import CohereEmbedder, OpenAIEmbedder
from rag_core.reranker import CohereReranker
from tests.recordings import response_json


@pytest.fixture(scope="module")
def emulator():
    server = EmulatorServer()
    server.load([], seed="endpoints")
    yield server
    server.close()


@pytest.mark.parametrize("dimensions", [None, 256])
def test_openai_embeddings_through_the_sdk(emulator, dimensions):
    embedder = OpenAIEmbedder(api_key="sk-x", base_url=f"{emulator.url}/v1", dimensions=dimensions, max_retries=0)
    pad, pad_again, curry = embedder.embed(["pad thai noodles", "pad thai noodles", "green curry paste"])
    assert len(pad) == (dimensions or 1536)
    assert pad == pad_again and abs(np.linalg.norm(pad) - 1) < 1e-3
    assert np.dot(pad, embedder.get_embedding("thai noodles")) > np.dot(curry, embedder.get_embedding("thai noodles"))


def test_openai_embeddings_reply_has_the_real_shape():
    real = response_json("openai/embeddings_text-embedding-3-small_base64_batch.yaml")
    fake = openai_embeddings.embeddings_json({"model": "text-embedding-3-small", "input": ["a", "b"], "encoding_format": "base64"})
    assert set(fake) == set(real) and set(fake["data"][0]) == set(real["data"][0])
    assert set(fake["usage"]) == set(real["usage"])
    assert len(fake["data"][0]["embedding"]) == len(real["data"][0]["embedding"])  # same base64 length: 1536 floats


def test_cohere_embed_and_rerank_through_the_sdk(emulator):
    pytest.importorskip("cohere")
    embedder = CohereEmbedder(api_key="co-x", base_url=emulator.url)
    assert len(embedder.get_embedding("hello")) == 1536
    docs = [Document(content="Green curry paste.", id="a"), Document(content="Pad thai noodles with tamarind.", id="b")]
    ranked = CohereReranker(api_key="co-x", base_url=emulator.url).rerank("pad thai tamarind", docs)
    assert [d.id for d in ranked] == ["b", "a"]
    assert ranked[0].meta_data["reranking_score"] == 1.0


def test_cohere_v1_embed_and_rerank_through_the_sdks_v1_client(emulator):
    """Agno's Cohere embedder and reranker call the v1 endpoints through ``cohere.Client``."""
    cohere = pytest.importorskip("cohere")
    client = cohere.Client(api_key="co-x", base_url=emulator.url)
    floats = client.embed(texts=["hello", "pad thai"], model="embed-v4.0", input_type="search_document")
    assert floats.response_type == "embeddings_floats" and [len(v) for v in floats.embeddings] == [1536, 1536]
    by_type = client.embed(texts=["hello"], model="embed-v4.0", input_type="search_query", embedding_types=["float"])
    assert by_type.response_type == "embeddings_by_type" and by_type.embeddings.float_[0] == floats.embeddings[0]
    ranked = client.rerank(query="pad thai tamarind", documents=["Green curry paste.", "Pad thai with tamarind."],
                           model="rerank-v3.5")
    assert [r.index for r in ranked.results] == [1, 0]


def test_cohere_replies_validate_against_the_sdk_types_like_the_real_ones():
    cohere = pytest.importorskip("cohere")
    ids = DeterministicIds("c")
    for real_name, fake, model in (
        ("cohere/cohere_v2_embed_embed-v4.0_float.yaml", cohere_api.embed_json({"texts": ["Hello, world!"]}, ids), cohere.EmbedByTypeResponse),
        ("cohere/cohere_v2_rerank_rerank-v3.5.yaml", cohere_api.rerank_json({"query": "q", "documents": ["a q", "b"]}, ids), cohere.RerankResponse),
    ):
        real = response_json(real_name)
        model.model_validate(real)
        model.model_validate(fake)
        assert set(fake) == set(real)
    from cohere.v2 import V2ChatResponse

    real_chat = response_json("cohere/cohere_v2_chat_tool_call_command-r.yaml")
    fake_chat = cohere_api.chat_json(ScriptedTurn(tool_calls=[{"name": "Person", "arguments": {"name": "Erick", "age": 27}}]), {}, ids)
    for chat in (real_chat, fake_chat):
        parsed = V2ChatResponse.model_validate(chat)
        assert parsed.finish_reason == "TOOL_CALL"
        assert json.loads(parsed.message.tool_calls[0].function.arguments) == {"age": 27, "name": "Erick"}


def test_closing_the_emulator_does_not_wait_out_a_poll_of_its_serving_loop():
    """Every recording session closes one at its end: with socketserver's default poll (0.5 s),
    each of them waited about half a second for nothing."""
    waits = []
    for _ in range(3):
        server = EmulatorServer()
        server.load([], seed="closing", then=ScriptedTurn(text="ok"))
        with urllib.request.urlopen(urllib.request.Request(f"{server.url}/v1/responses", data=b"{}")) as reply:
            reply.read()  # answered: the serving loop is polling again
        started = time.perf_counter()
        server.close()
        waits.append(time.perf_counter() - started)
    # the old loop took 0.5 s here every time; the bound leaves room for a busy machine
    assert statistics.median(waits) < 0.25, waits


def _post(url: str, body: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=body, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.parametrize(("body", "message"), [
    (b"not json", "the body is not JSON"),
    (b"[1, 2]", "the body is list JSON, not an object"),
    (b"\xff\xfe", "the body is not JSON"),
    (json.dumps({"model": "text-embedding-3-small", "input": ["a"], "dimensions": 100_000_000}).encode(),
     "dimensions must be a whole number from 1 to 16384"),
])
def test_a_bad_request_gets_a_json_400_not_a_dropped_connection(emulator, body, message):
    """Non-JSON bodies dropped the connection (traceback on stderr); 10^8 dimensions took 2.3 GB."""
    status, answer = _post(f"{emulator.url}/v1/embeddings", body)
    assert status == 400 and message in answer["error"]["message"]


def test_two_hundred_concurrent_requests_all_get_answers(emulator):
    """socketserver's listen backlog of 5 reset 5-75 of 200 concurrent connections."""
    from concurrent.futures import ThreadPoolExecutor

    body = json.dumps({"model": "text-embedding-3-small", "input": ["pad thai"]}).encode()
    with ThreadPoolExecutor(64) as pool:
        statuses = list(pool.map(lambda _: _post(f"{emulator.url}/v1/embeddings", body)[0], range(200)))
    assert statuses == [200] * 200


def test_a_request_the_emulator_does_not_serve_uses_up_no_turn():
    from rag_core.evals.emulator.provider import ScriptedProvider

    provider = ScriptedProvider([{"text": "hello"}], seed="unserved")
    assert provider.reply("GET", "/v1/files", b"").status == 404
    answer = provider.reply("POST", "/v1/chat/completions", json.dumps({"model": "m", "messages": []}).encode())
    assert answer.status == 200 and json.loads(answer.body)["choices"][0]["message"]["content"] == "hello"
    assert provider.unused == 0


def test_a_fault_of_the_emulator_is_not_reported_as_the_script_running_out(emulator, monkeypatch):
    """Every AssertionError was caught as 'the script ran out', hiding the emulator's own bugs."""
    from rag_core.evals.emulator import openai_chat

    def broken(*args):
        raise AssertionError("a formatting bug")

    monkeypatch.setattr(openai_chat, "completion_json", broken)
    emulator.load([{"text": "hello"}], seed="fault")
    status, answer = _post(f"{emulator.url}/v1/chat/completions", json.dumps({"model": "m", "messages": []}).encode())
    assert status == 500 and answer["error"]["message"] == "the emulator failed: AssertionError: a formatting bug"
