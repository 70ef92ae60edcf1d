from __future__ import annotations

import json

import pytest

from rag_core.evals.wire.openai import validate_chat_body, validate_responses_body
from rag_core import Agent
from rag_core.messages import Message, ToolCall
from rag_core.models import OpenAIChat, OpenAIResponses
from rag_core.tools import ReasoningTools
from rag_core.tools.knowledge import SEARCH_KNOWLEDGE_FUNCTION

SYSTEM = "<additional_information>\n- Use markdown to format your answers.\n</additional_information>"

CONVERSATION = [
    Message(role="system", content="Be helpful."),
    Message(role="user", content="What is pad thai?"),
    Message(
        role="assistant",
        content=None,
        tool_calls=[ToolCall(id="call_1", name="search_knowledge_base", arguments='{"query":"pad thai"}')],
        provider_data={"response_id": "resp_1"},
    ),
    Message(role="tool", content="No documents found", tool_call_id="call_1", tool_name="search_knowledge_base"),
]


def test_responses_first_round_body(knowledge):
    agent = Agent(model=OpenAIResponses(id="gpt-5.2"), knowledge=knowledge, markdown=True)
    body = agent.build_request("What is pad thai?")
    assert list(body) == ["model", "input", "tools"]
    assert body["input"][0]["role"] == "developer"
    assert body["input"][1] == {"role": "user", "content": "What is pad thai?"}
    assert body["tools"] == [
        {
            "type": "function",
            "name": "search_knowledge_base",
            "description": "Use this function to search the knowledge base for information about a query.",
            "parameters": SEARCH_KNOWLEDGE_FUNCTION.parameters,
            "strict": False,
        }
    ]
    assert "stream" not in body
    assert agent.build_request("x", stream=True)["stream"] is True


def test_responses_second_round_replays_the_conversation_statelessly():
    body = OpenAIResponses(id="gpt-5.2").build_request(CONVERSATION, [SEARCH_KNOWLEDGE_FUNCTION])
    assert body["input"][2:] == [
        {"type": "function_call", "call_id": "call_1", "name": "search_knowledge_base", "arguments": '{"query":"pad thai"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "No documents found"},
    ]
    assert "previous_response_id" not in body


def test_responses_server_side_chaining_sends_only_what_is_new():
    model = OpenAIResponses(id="gpt-5.2", use_previous_response_id=True)
    body = model.build_request(CONVERSATION, [SEARCH_KNOWLEDGE_FUNCTION])
    assert body["previous_response_id"] == "resp_1"
    assert body["input"] == [
        {"role": "developer", "content": "Be helpful."},
        {"type": "function_call_output", "call_id": "call_1", "output": "No documents found"},
    ]
    first = model.build_request(CONVERSATION[:2], [])
    assert "previous_response_id" not in first and len(first["input"]) == 2


def test_chat_bodies_use_nested_tools_and_include_usage_when_streaming():
    model = OpenAIChat(id="gpt-4o")
    body = model.build_request(CONVERSATION, [SEARCH_KNOWLEDGE_FUNCTION], stream=True)
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": "search_knowledge_base",
            "description": "Use this function to search the knowledge base for information about a query.",
            "parameters": SEARCH_KNOWLEDGE_FUNCTION.parameters,
            "strict": False,
        },
    }
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"][2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "search_knowledge_base", "arguments": '{"query":"pad thai"}'}}
        ],
    }
    assert body["messages"][3] == {"role": "tool", "tool_call_id": "call_1", "content": "No documents found"}
    plain = model.build_request(CONVERSATION[:2], [])
    assert list(plain) == ["model", "messages"]


def test_model_options_and_request_params_reach_the_body():
    body = OpenAIResponses(
        id="gpt-5.2", temperature=0.2, max_output_tokens=100, reasoning_effort="low", request_params={"user": "u1"}
    ).build_request(CONVERSATION[:2], [])
    assert body["temperature"] == 0.2 and body["max_output_tokens"] == 100
    assert body["reasoning"] == {"effort": "low"} and body["user"] == "u1"


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("use_previous", [False, True])
def test_every_responses_body_validates_against_the_sdk_request_types(knowledge, stream, use_previous):
    model = OpenAIResponses(id="gpt-5.2", use_previous_response_id=use_previous, temperature=0.1)
    tools = Agent(knowledge=knowledge, tools=[ReasoningTools()]).get_tools()
    for conversation in (CONVERSATION[:2], CONVERSATION):
        validate_responses_body(model.build_request(conversation, tools, stream=stream))


@pytest.mark.parametrize("stream", [False, True])
def test_every_chat_body_validates_against_the_sdk_request_types(knowledge, stream):
    tools = Agent(knowledge=knowledge, tools=[ReasoningTools()]).get_tools()
    for conversation in (CONVERSATION[:2], CONVERSATION):
        validate_chat_body(OpenAIChat(id="gpt-4o").build_request(conversation, tools, stream=stream))


def test_the_validator_rejects_a_wrong_body():
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        validate_responses_body({"model": "gpt-5.2", "input": [{"type": "function_call_output"}], "tools": "nope"})
    with pytest.raises(ValueError, match="stream_option"):
        validate_responses_body({"model": "gpt-5.2", "input": "hi", "stream_option": {}})


def test_build_request_is_pure(knowledge):
    agent = Agent(model=OpenAIResponses(id="gpt-5.2"), knowledge=knowledge, tools=[ReasoningTools(add_instructions=True)])
    assert agent.build_request("q") == agent.build_request("q")
    assert agent.session_state is None  # nothing was run


# ---------------------------------------------------------------- the body goes on the wire as built
def _wire(send: object, model_class: type, body: dict, asynchronous: bool = False) -> tuple[bytes, dict[str, str]]:
    """What reaches the HTTP layer: the request bytes and headers (an in-process transport)."""

    import httpx2

    from rag_core.evals.emulator.provider import ScriptedProvider

    seen: list[httpx2.Request] = []
    provider = ScriptedProvider([{"text": "ok"}], seed="wire")
    transport = provider.transport()

    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return transport.handle_request(request)

    model = model_class(id="gpt-5.2", api_key="sk-wire", max_retries=0,
                        http_client=httpx2.Client(transport=httpx2.MockTransport(handle)))
    result = send(model, body)
    if hasattr(result, "__next__"):
        list(result)
    (request,) = seen
    headers = {k: v for k, v in request.headers.items() if not k.startswith("x-stainless-retry")}
    return request.read(), headers


@pytest.mark.parametrize("model_class", [OpenAIResponses, OpenAIChat])
@pytest.mark.parametrize("stream", [False, True])
def test_the_body_goes_on_the_wire_as_built_and_as_the_sdk_resource_would_send_it(model_class, stream, knowledge):
    """Models post their body through the SDK client without the resource's ``create`` (whose
    TypedDict transform is most of a run's cost). The bytes on the wire are the body exactly as
    ``build_request`` made it (the golden's order), the same JSON value with the same headers as
    ``create`` sends (``create`` reorders the keys into its parameter order)."""
    agent = Agent(model=model_class(id="gpt-5.2", reasoning_effort="low", temperature=0.2), knowledge=knowledge,
                  tools=[ReasoningTools(add_instructions=True)], instructions=["Cite sources."], markdown=True)
    body = agent.build_request("What is pad thai?", stream=stream)

    def via_create(model, request):
        endpoint = model.client().responses if model_class is OpenAIResponses else model.client().chat.completions
        return endpoint.create(**request)

    def via_model(model, request):
        return model.invoke_stream(request) if stream else model.invoke(request)

    sent, headers = _wire(via_model, model_class, body)
    sent_by_create, headers_by_create = _wire(via_create, model_class, body)
    assert sent == json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
    assert json.loads(sent) == json.loads(sent_by_create) and headers == headers_by_create


def test_an_async_http_client_is_recognised_by_what_it_is_not_its_class_name():
    """``openai.DefaultAsyncHttpxClient()`` (class ``_DefaultAsyncHttpxClient``) made ``client()``
    raise and was silently left out of ``async_client()``."""
    import openai

    from rag_core.models import OpenAIResponses

    given = openai.DefaultAsyncHttpxClient()
    model = OpenAIResponses(id="gpt-5.2", api_key="sk-test", http_client=given)
    assert model.async_client()._client is given
    assert model.client()._client is not given  # the sync client is the shared one, built without error
