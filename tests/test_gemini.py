"""The Gemini adapter: pure request bodies, the SDK sending them unchanged, real and emulated replies."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("google.genai")

from rag_core.evals.emulator.server import EmulatorServer  # noqa: E402
from rag_core.evals.wire.gemini import validate_body as validate_gemini_body  # noqa: E402
from rag_core import Agent  # noqa: E402
from rag_core.embedder import GeminiEmbedder  # noqa: E402
from rag_core.errors import ModelProviderError  # noqa: E402
from rag_core.messages import Message, ToolCall  # noqa: E402
from rag_core.models import Gemini  # noqa: E402
from rag_core.tools.knowledge import SEARCH_KNOWLEDGE_FUNCTION  # noqa: E402
from tests.recordings import replay  # noqa: E402

SEARCH = {"tool_calls": [{"name": "search_knowledge_base", "arguments": {"query": "galangal"}}]}
ANSWER = {"text": "Tom kha gai uses galangal."}


@pytest.fixture
def emulator():
    server = EmulatorServer()
    yield server
    server.close()


def test_request_body_shape():
    conversation = [
        Message(role="system", content="Be brief."),
        Message(role="user", content="Which dish?"),
        Message(role="assistant", content=None, tool_calls=[
            ToolCall("gemini-call-1", "search_knowledge_base", '{"query":"a"}', {"thought_signature": "c2ln"}),
            ToolCall("gemini-call-2", "search_knowledge_base", '{"query":"b"}', {"id": "fc-7"}),
        ]),
        Message(role="tool", content="A", tool_call_id="gemini-call-1", tool_name="search_knowledge_base"),
        Message(role="tool", content="B", tool_call_id="gemini-call-2", tool_name="search_knowledge_base"),
    ]
    body = Gemini(temperature=0.2).build_request(conversation, [SEARCH_KNOWLEDGE_FUNCTION])
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["contents"][0] == {"role": "user", "parts": [{"text": "Which dish?"}]}
    assert body["contents"][1] == {"role": "model", "parts": [
        {"functionCall": {"name": "search_knowledge_base", "args": {"query": "a"}}, "thoughtSignature": "c2ln"},
        {"functionCall": {"name": "search_knowledge_base", "args": {"query": "b"}, "id": "fc-7"}},
    ]}
    # both results in one user turn; the id goes back only where Gemini gave one
    assert body["contents"][2] == {"role": "user", "parts": [
        {"functionResponse": {"name": "search_knowledge_base", "response": {"result": "A"}}},
        {"functionResponse": {"name": "search_knowledge_base", "response": {"result": "B"}, "id": "fc-7"}},
    ]}
    assert body["tools"][0]["functionDeclarations"][0]["parameters_json_schema"] == SEARCH_KNOWLEDGE_FUNCTION.parameters
    assert body["generationConfig"] == {"temperature": 0.2}
    validate_gemini_body(body)


@pytest.mark.parametrize("stream", [False, True])
def test_the_sdk_sends_exactly_the_built_body_and_signatures_round_trip(emulator, knowledge, stream):
    provider = emulator.load([SEARCH, ANSWER], seed="gemini")
    agent = Agent(model=Gemini(api_key="k", base_url=emulator.url), knowledge=knowledge, markdown=True)
    result = agent.run("Which dish uses galangal?", stream=stream)
    out = list(result)[-1].output if stream else result
    assert out.content == ANSWER["text"]
    assert provider.requests == out.requests
    assert provider.paths == [f"/v1beta/models/gemini-3-flash-preview:{'streamGenerateContent' if stream else 'generateContent'}"] * 2
    signature = out.messages[2].tool_calls[0].provider_data["thought_signature"]
    assert out.requests[1]["contents"][1]["parts"][0]["thoughtSignature"] == signature
    assert out.metrics.total_tokens == out.metrics.input_tokens + out.metrics.output_tokens > 0


def test_real_recording_round_trip():
    model = Gemini(id="gemini-2.0-flash", api_key="k")
    user = [Message(role="user", content="What is the largest city in the user country?")]
    with replay("gemini/gemini_generatecontent_function_call_roundtrip_2.0-flash.yaml"):
        first = model.invoke(model.build_request(user, []))
        [call] = first.tool_calls
        assert (call.name, json.loads(call.arguments)) == ("get_user_country", {})
        conversation = user + [first.to_message(),
                               Message(role="tool", content="Mexico", tool_call_id=call.id, tool_name=call.name)]
        second = model.invoke(model.build_request(conversation, []))
    assert [(c.name, json.loads(c.arguments)) for c in second.tool_calls] == [("final_result", {"city": "Mexico City", "country": "Mexico"})]
    assert (first.usage.input_tokens, first.usage.output_tokens, first.usage.total_tokens) == (33, 5, 38)
    assert first.response_id == "LlteaIDvD9m7nvgPz5Sb0Aw"


def test_provider_errors(emulator):
    emulator.load([{"status": 400, "message": "Request contains an invalid argument."}], seed="e")
    with pytest.raises(ModelProviderError) as info:
        Agent(model=Gemini(api_key="k", base_url=emulator.url)).run("hi")
    assert info.value.status_code == 400 and "invalid argument" in info.value.provider_message


def test_embedder_task_types_and_dimensions(emulator):
    emulator.load([], seed="e")
    embedder = GeminiEmbedder(api_key="k", base_url=emulator.url, dimensions=256)
    assert [len(v) for v in embedder.embed(["a", "b"])] == [256, 256]
    assert len(embedder.get_embedding("q")) == 256


def test_emulated_replies_have_the_real_shape_and_validate():
    from google.genai import types

    from rag_core.evals.emulator import gemini as emulated
    from rag_core.evals.emulator.script import DeterministicIds, ScriptedTurn
    from tests.recordings import response_json

    real = response_json("gemini/gemini_generatecontent_function_call_roundtrip_2.0-flash.yaml")
    turn = ScriptedTurn(tool_calls=[{"name": "get_user_country", "arguments": {}}])
    fake = emulated.generate_json(turn, {"contents": []}, "gemini-2.0-flash", DeterministicIds("g"))
    assert set(real) <= set(fake)
    assert set(real["usageMetadata"]) <= set(fake["usageMetadata"])
    assert set(real["candidates"][0]) - {"avgLogprobs"} <= set(fake["candidates"][0])
    for reply in (real, fake):
        parsed = types.GenerateContentResponse.model_validate_json(json.dumps(reply))
        assert parsed.candidates[0].content.parts[0].function_call.name == "get_user_country"
    chunks = emulated.stream_chunks(ScriptedTurn(text="Two words."), {}, "m", DeterministicIds("g"))
    assert [c["candidates"][0]["content"]["parts"][0]["text"] for c in chunks] == ["Two", " words."]
    assert "usageMetadata" in chunks[-1] and chunks[-1]["candidates"][0]["finishReason"] == "STOP"


@pytest.mark.parametrize("stream", [False, True])
def test_async_runs(emulator, knowledge, stream):
    import asyncio

    provider = emulator.load([SEARCH, ANSWER], seed="gemini-async")
    agent = Agent(model=Gemini(api_key="k", base_url=emulator.url), knowledge=knowledge)

    async def go():
        result = await agent.arun("Which dish uses galangal?", stream=stream)
        if stream:
            return [e async for e in result][-1].output
        return result

    out = asyncio.run(go())
    assert out.content == ANSWER["text"] and provider.requests == out.requests


def test_google_genai_clients_are_shared_per_key_endpoint_and_timeout(monkeypatch):
    from rag_core.models.gemini import gemini_client

    monkeypatch.delenv("GOOGLE_GEMINI_BASE_URL", raising=False)
    first = gemini_client("key-a", None, "test")
    assert gemini_client("key-a", None, "test") is first
    assert gemini_client("key-b", None, "test") is not first
    assert gemini_client("key-a", "http://127.0.0.1:9", "test") is not first
    assert gemini_client("key-a", None, "test", timeout=5) is not first
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9")  # read by the SDK at construction
    assert gemini_client("key-a", None, "test") is not first
