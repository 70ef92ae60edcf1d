"""What SDKs and frameworks call besides model calls, answered by the emulator and read through each
SDK's own client, the way a program calls it: token counting (which must agree with the usage the
model call then reports for the same input), model listing and retrieval, and embeddings.

Every SDK here talks to ``rag-core emulator serve``'s HTTP server (``EmulatorServer``) through its
base URL, so the requests are the SDK's own (paths, methods, headers)."""

from __future__ import annotations

import json

import pytest

from rag_core.evals.emulator import gemini
from rag_core.evals.emulator.provider import ScriptedProvider
from rag_core.evals.emulator.script import DeterministicIds, ScriptedTurn
from rag_core.evals.emulator.server import EmulatorServer

QUESTION = "How do I make pad thai?"
INSTRUCTIONS = "You are a Thai cook. Answer in one sentence."
ANSWER = "Soak rice noodles, then fry them with tamarind."


@pytest.fixture
def emulator():
    server = EmulatorServer()
    yield server
    server.close()


# --- OpenAI ---------------------------------------------------------------------------------------

def _openai(emulator):
    openai = pytest.importorskip("openai")
    return openai.OpenAI(api_key="sk-test", base_url=f"{emulator.url}/v1", max_retries=0)


OPENAI_TOOLS = [{"type": "function", "name": "lookup_recipe", "description": "Look up how a Thai dish is made.",
                 "parameters": {"type": "object", "properties": {"dish": {"type": "string"}}, "required": ["dish"],
                                "additionalProperties": False}, "strict": True}]


@pytest.mark.parametrize("stream", [False, True])
def test_openai_input_tokens_count_is_what_the_response_then_reports(emulator, stream):
    client = _openai(emulator)
    provider = emulator.load([{"text": ANSWER}], seed="openai-count")
    request = dict(model="gpt-5.2", instructions=INSTRUCTIONS, input=QUESTION, tools=OPENAI_TOOLS)
    counted = client.responses.input_tokens.count(**request)
    assert counted.object == "response.input_tokens" and counted.input_tokens > 10
    # what only steers the answer (stream, max_output_tokens, store) counts for nothing
    if stream:
        with client.responses.stream(**request, max_output_tokens=300, store=False) as events:
            response = events.get_final_response()
    else:
        response = client.responses.create(**request, max_output_tokens=300, store=False)
    assert response.output_text == ANSWER
    assert response.usage.input_tokens == counted.input_tokens
    assert provider.unused == 0 and provider.unserved == []  # the count used up no turn
    longer = client.responses.input_tokens.count(**{**request, "input": QUESTION * 20})
    assert longer.input_tokens > counted.input_tokens


def test_openai_models_list_and_retrieve(emulator):
    client = _openai(emulator)
    emulator.load([], seed="openai-models")
    listed = [model.id for model in client.models.list()]
    assert "gpt-5.2" in listed and "text-embedding-3-small" in listed
    model = client.models.retrieve("gpt-4o-mini")
    assert (model.id, model.object, model.owned_by) == ("gpt-4o-mini", "model", "system")
    assert client.models.retrieve("ft:gpt-4o-mini:acme::abc123").id == "ft:gpt-4o-mini:acme::abc123"


def test_openai_replies_validate_strictly_against_the_sdk_types():
    pytest.importorskip("openai")
    from openai.types import Model
    from openai.types.responses.input_token_count_response import InputTokenCountResponse

    provider = ScriptedProvider([], seed="strict")
    counted = provider.reply("POST", "/v1/responses/input_tokens", json.dumps({"input": "hi"}).encode())
    InputTokenCountResponse.model_validate(json.loads(counted.body), strict=True)
    listed = json.loads(provider.reply("GET", "/v1/models", b"").body)
    assert listed["object"] == "list"
    for model in listed["data"]:
        Model.model_validate(model, strict=True)


def test_haystacks_openai_token_counter_counts_through_the_emulator(emulator):
    """Haystack's ``OpenAITokenCounter`` (what its compaction hooks measure with) calls
    ``POST /v1/responses/input_tokens``; it got a 404."""
    pytest.importorskip("haystack")
    from haystack.dataclasses import ChatMessage
    from haystack.token_counters import OpenAITokenCounter
    from haystack.utils import Secret

    emulator.load([], seed="haystack-count")
    counter = OpenAITokenCounter("gpt-5.2", api_key=Secret.from_token("sk-test"), api_base_url=f"{emulator.url}/v1",
                                 max_retries=0)
    short = counter.count([ChatMessage.from_user("Hi")])
    long = counter.count([ChatMessage.from_system(INSTRUCTIONS), ChatMessage.from_user(QUESTION * 10)])
    assert 0 < short < long


def test_pydantic_ai_counts_before_each_request_and_the_count_is_the_usage(emulator):
    """pydantic-ai's ``UsageLimits(count_tokens_before_request=True)`` asks
    ``POST /v1/responses/input_tokens`` before each model request, and stops a run whose next
    request would go over its input limit."""
    pytest.importorskip("pydantic_ai.models.openai")
    from pydantic_ai import Agent
    from pydantic_ai.exceptions import UsageLimitExceeded
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.usage import UsageLimits

    provider = emulator.load([{"text": ANSWER}], seed="pydantic-ai-count")
    model = OpenAIResponsesModel("gpt-5.2", provider=OpenAIProvider(base_url=f"{emulator.url}/v1", api_key="sk-test"))
    agent = Agent(model, instructions=INSTRUCTIONS)
    run = agent.run_sync(QUESTION, usage_limits=UsageLimits(input_tokens_limit=1000, count_tokens_before_request=True))
    assert run.output == ANSWER and provider.paths == ["/v1/responses"] and provider.unserved == []
    used = run.usage().input_tokens
    with pytest.raises(UsageLimitExceeded, match=f"input_tokens={used}"):
        agent.run_sync(QUESTION, usage_limits=UsageLimits(input_tokens_limit=used - 1, count_tokens_before_request=True))
    assert provider.paths == ["/v1/responses"]  # stopped before it asked the model


# --- Anthropic ------------------------------------------------------------------------------------

ANTHROPIC_TOOLS = [{"name": "lookup_recipe", "description": "Look up how a Thai dish is made.",
                    "input_schema": {"type": "object", "properties": {"dish": {"type": "string"}},
                                     "required": ["dish"]}}]


def _anthropic(emulator):
    anthropic = pytest.importorskip("anthropic")
    return anthropic.Anthropic(api_key="k", base_url=emulator.url, max_retries=0)


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_count_tokens_is_what_the_message_then_reports(emulator, stream):
    client = _anthropic(emulator)
    provider = emulator.load([{"text": ANSWER}], seed="claude-count")
    request = dict(model="claude-sonnet-4-5-20250929", system=INSTRUCTIONS, tools=ANTHROPIC_TOOLS,
                   messages=[{"role": "user", "content": QUESTION}])
    counted = client.messages.count_tokens(**request)
    beta = client.beta.messages.count_tokens(**request)  # POST /v1/messages/count_tokens?beta=true
    assert counted.input_tokens == beta.input_tokens > 10
    if stream:
        with client.messages.stream(**request, max_tokens=512, stop_sequences=["END"]) as events:
            message = events.get_final_message()
    else:
        message = client.messages.create(**request, max_tokens=512, stop_sequences=["END"])
    assert message.content[0].text == ANSWER
    assert message.usage.input_tokens == counted.input_tokens
    assert provider.unused == 0 and provider.unserved == []


def test_anthropic_models_list_and_retrieve(emulator):
    client = _anthropic(emulator)
    emulator.load([], seed="claude-models")
    listed = list(client.models.list())
    assert "claude-opus-4-6" in [model.id for model in listed]
    model = client.models.retrieve("claude-haiku-4-5-20251001")
    assert (model.id, model.display_name, model.type, model.lifecycle) == (
        "claude-haiku-4-5-20251001", "Claude Haiku 4.5", "model", "active")
    assert model.capabilities.thinking.supported  # what Agno's reasoning reads before it thinks
    assert client.beta.models.retrieve("claude-opus-4-6").id == "claude-opus-4-6"
    # the same path as OpenAI's: an OpenAI client asking the same server gets OpenAI's shape
    assert _openai(emulator).models.retrieve("claude-opus-4-6").owned_by == "system"


def test_anthropic_replies_validate_against_the_sdk_types():
    pytest.importorskip("anthropic")
    from anthropic.types import MessageTokensCount, ModelInfo
    from anthropic.types.beta import BetaModelInfo

    provider = ScriptedProvider([], seed="strict")
    version = {"anthropic-version": "2023-06-01"}
    counted = provider.reply("POST", "/v1/messages/count_tokens", json.dumps({"messages": []}).encode(), version)
    MessageTokensCount.model_validate(json.loads(counted.body), strict=True)
    page = json.loads(provider.reply("GET", "/v1/models", b"", version).body)
    assert page["has_more"] is False and page["first_id"] == page["data"][0]["id"]
    for model in page["data"]:
        ModelInfo.model_validate(model)
        BetaModelInfo.model_validate(model)


# --- Gemini ---------------------------------------------------------------------------------------

def _gemini(emulator, api_version="v1beta"):
    genai = pytest.importorskip("google.genai")
    return genai.Client(api_key="k", http_options=genai.types.HttpOptions(base_url=emulator.url, api_version=api_version))


def test_gemini_count_tokens_is_what_generate_content_then_reports(emulator):
    client = _gemini(emulator)
    provider = emulator.load([{"text": ANSWER}], seed="gemini-count")
    counted = client.models.count_tokens(model="gemini-2.5-flash", contents=QUESTION)
    assert counted.total_tokens > 3
    response = client.models.generate_content(model="gemini-2.5-flash", contents=QUESTION,
                                              config={"temperature": 0.2, "max_output_tokens": 300})
    assert response.text == ANSWER
    assert response.usage_metadata.prompt_token_count == counted.total_tokens
    assert provider.paths == ["/v1beta/models/gemini-2.5-flash:generateContent"] and provider.unserved == []


def test_gemini_count_tokens_of_a_whole_generate_content_request():
    """countTokens may carry the generateContent request itself (system instruction and tools
    included): it counts what that call's usage reports."""
    generate = {"contents": [{"role": "user", "parts": [{"text": QUESTION}]}],
                "systemInstruction": {"parts": [{"text": INSTRUCTIONS}]}, "generationConfig": {"temperature": 0.1}}
    counted = gemini.count_tokens_json({"generateContentRequest": {"model": "models/gemini-2.5-flash", **generate}})
    answered = gemini.generate_json(ScriptedTurn(text="ok"), generate, "gemini-2.5-flash", DeterministicIds("g"))
    assert counted["totalTokens"] == answered["usageMetadata"]["promptTokenCount"]
    assert counted["totalTokens"] > gemini.count_tokens_json({"contents": generate["contents"]})["totalTokens"]


@pytest.mark.parametrize("api_version", ["v1beta", None])  # None: the SDK's default (v1 from google-genai 3)
def test_gemini_models_list_and_get(emulator, api_version):
    """Gemini's v1 paths are OpenAI's: Google's headers tell them apart."""
    client = _gemini(emulator, api_version)
    emulator.load([], seed="gemini-models")
    names = [model.name for model in client.models.list()]
    assert "models/gemini-2.5-flash" in names and "models/gemini-embedding-001" in names
    model = client.models.get(model="gemini-2.5-flash")
    assert model.name == "models/gemini-2.5-flash" and model.thinking is True  # what Agno's reasoning reads
    assert "generateContent" in model.supported_actions and model.input_token_limit > 0


def test_gemini_embed_content_and_batch_embed_contents(emulator):
    client = _gemini(emulator)
    emulator.load([], seed="gemini-embed")
    batch = client.models.embed_content(model="gemini-embedding-001", contents=["pad thai", "green curry"],
                                        config={"output_dimensionality": 64})
    assert [len(e.values) for e in batch.embeddings] == [64, 64]
    # embedContent (one text: what LiteLLM and the REST docs call) gives the same vector
    request = {"model": "models/gemini-embedding-001", "content": {"parts": [{"text": "pad thai"}]},
               "outputDimensionality": 64}
    reply = ScriptedProvider([], seed="g").reply("POST", "/v1beta/models/gemini-embedding-001:embedContent",
                                                 json.dumps(request).encode())
    assert reply.status == 200 and json.loads(reply.body) == {"embedding": {"values": batch.embeddings[0].values}}


# --- Bedrock --------------------------------------------------------------------------------------

def _bedrock(emulator):
    boto3 = pytest.importorskip("boto3")
    from botocore.config import Config

    return boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=emulator.url,
                        aws_access_key_id="k", aws_secret_access_key="s",
                        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}))


@pytest.mark.parametrize(("model_id", "body", "dimensions"), [
    ("amazon.titan-embed-text-v2:0", {"inputText": "pad thai", "dimensions": 256}, 256),
    ("amazon.titan-embed-text-v1", {"inputText": "pad thai"}, 1536),
])
def test_bedrock_titan_embeddings_through_invoke_model(emulator, model_id, body, dimensions):
    client = _bedrock(emulator)
    emulator.load([], seed="titan")
    response = client.invoke_model(modelId=model_id, body=json.dumps(body), contentType="application/json",
                                   accept="application/json")
    answer = json.loads(response["body"].read())
    assert len(answer["embedding"]) == dimensions and answer["inputTextTokenCount"] > 0
    again = json.loads(client.invoke_model(modelId=model_id, body=json.dumps(body))["body"].read())
    assert again["embedding"] == answer["embedding"]  # deterministic
    assert response["ResponseMetadata"]["HTTPHeaders"]["x-amzn-bedrock-input-token-count"] == str(
        answer["inputTextTokenCount"])


def test_bedrock_cohere_embeddings_through_invoke_model(emulator):
    client = _bedrock(emulator)
    emulator.load([], seed="cohere-bedrock")
    body = {"texts": ["pad thai", "green curry"], "input_type": "search_document"}
    floats = json.loads(client.invoke_model(modelId="cohere.embed-english-v3", body=json.dumps(body))["body"].read())
    assert floats["response_type"] == "embeddings_floats" and [len(v) for v in floats["embeddings"]] == [1024, 1024]
    typed = json.loads(client.invoke_model(modelId="cohere.embed-english-v3",
                                           body=json.dumps({**body, "embedding_types": ["float"]}))["body"].read())
    assert typed["response_type"] == "embeddings_by_type" and typed["embeddings"]["float"] == floats["embeddings"]


def test_bedrock_invoke_model_errors_are_boto3s_exceptions(emulator):
    client = _bedrock(emulator)
    emulator.load([], seed="titan-error")
    with pytest.raises(client.exceptions.ValidationException, match="inputText"):
        client.invoke_model(modelId="amazon.titan-embed-text-v2:0", body=json.dumps({"text": "pad thai"}))


def test_bedrock_count_tokens_is_what_converse_then_reports(emulator):
    client = _bedrock(emulator)
    provider = emulator.load([{"text": ANSWER}], seed="bedrock-count")
    converse = {"messages": [{"role": "user", "content": [{"text": QUESTION}]}], "system": [{"text": INSTRUCTIONS}]}
    model_id = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    counted = client.count_tokens(modelId=model_id, input={"converse": converse})["inputTokens"]
    response = client.converse(modelId=model_id, **converse, inferenceConfig={"maxTokens": 300})
    assert response["output"]["message"]["content"] == [{"text": ANSWER}]
    assert response["usage"]["inputTokens"] == counted > 5
    invoke_body = json.dumps({"anthropic_version": "bedrock-2023-05-31", "max_tokens": 300,
                              "messages": [{"role": "user", "content": QUESTION}]}).encode()
    assert client.count_tokens(modelId=model_id, input={"invokeModel": {"body": invoke_body}})["inputTokens"] > 3
    assert provider.unserved == []


# --- what the emulator does not serve -------------------------------------------------------------

def test_an_endpoint_the_emulator_does_not_serve_is_named_with_what_to_do(emulator):
    """It answered 404 "the emulator does not serve GET /v1/files/file-abc", and the recording then
    said a case that tests an error must say so under expect: error:."""
    openai = pytest.importorskip("openai")
    client = _openai(emulator)
    provider = emulator.load([{"text": ANSWER}], seed="unserved")
    with pytest.raises(openai.NotFoundError) as raised:
        client.files.retrieve("file-abc")
    message = str(raised.value)
    assert "the emulator does not serve GET /v1/files/file-abc" in message
    assert "record against the live API" in message and "- {endpoint: GET /v1/files/file-abc, body: {...}}" in message
    assert provider.unserved == ["GET /v1/files/file-abc"] and provider.unused == 1  # no turn used up
    assert "script the answer in the case's emulate: list" in provider.unserved_problem


def test_a_scripted_endpoint_answers_every_request_to_it_and_uses_up_no_turn(emulator):
    client = _openai(emulator)
    file = {"id": "file-abc", "object": "file", "bytes": 120, "created_at": 1767225600, "filename": "menu.txt",
            "purpose": "assistants", "status": "processed"}
    provider = emulator.load([{"endpoint": "get /v1/files/file-abc", "body": file}, {"text": ANSWER}],
                             seed="scripted-endpoint")
    assert client.files.retrieve("file-abc").filename == "menu.txt"
    assert client.files.retrieve("file-abc").id == "file-abc"
    assert client.responses.create(model="gpt-5.2", input=QUESTION).output_text == ANSWER
    assert len(provider.turns) == 1 and provider.unused == 0 and provider.unserved == []


@pytest.mark.parametrize("endpoint", ["/v1/files", "FETCH /v1/files", "GET v1/files", "GET /v1/files?limit=2"])
def test_a_scripted_endpoint_must_name_a_method_and_a_path(endpoint):
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="is not a method and a path"):
        ScriptedProvider([{"endpoint": endpoint, "body": {}}])


def test_a_get_to_a_model_calls_path_uses_up_no_turn():
    """``GET /v1/chat/completions`` (stored completions) took the next scripted turn as if it were a model call."""
    provider = ScriptedProvider([{"text": ANSWER}], seed="get")
    assert provider.reply("GET", "/v1/chat/completions", b"").status == 404
    assert provider.unused == 1 and provider.unserved == ["GET /v1/chat/completions"]
