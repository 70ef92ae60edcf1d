from __future__ import annotations

import pytest

from rag_core.evals.harness.sdk_types import validate_chat_body, validate_responses_body
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
