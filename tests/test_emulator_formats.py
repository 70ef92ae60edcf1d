"""Emulator replies validate strictly against the openai SDK's response types, and are deterministic."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter

from rag_core.evals.emulator import openai_chat, openai_responses
from rag_core.evals.emulator.script import DeterministicIds, ScriptedTurn

TURNS = [
    ScriptedTurn(text="Hello there, friend."),
    ScriptedTurn(tool_calls=[{"name": "search_knowledge_base", "arguments": {"query": "pad thai"}}]),
    ScriptedTurn(text="Both.", tool_calls=[{"name": "think", "arguments": {"title": "t", "thought": "x"}}]),
]
REQUEST = {"model": "gpt-5.2", "input": "hi", "stream": True, "stream_options": {"include_usage": True}}


@pytest.mark.parametrize("turn", TURNS)
def test_responses_replies_validate(turn):
    from openai.types.responses import Response, ResponseStreamEvent

    Response.model_validate(openai_responses.response_json(turn, REQUEST, DeterministicIds("s")), strict=False)
    adapter = TypeAdapter(ResponseStreamEvent)
    for event in openai_responses.response_events(turn, REQUEST, DeterministicIds("s")):
        assert type(adapter.validate_python(event)).__name__ != "dict"


@pytest.mark.parametrize("turn", TURNS)
def test_chat_replies_validate(turn):
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

    ChatCompletion.model_validate(openai_chat.completion_json(turn, REQUEST, DeterministicIds("s")))
    for chunk in openai_chat.completion_chunks(turn, REQUEST, DeterministicIds("s")):
        ChatCompletionChunk.model_validate(chunk)


def test_replies_depend_only_on_the_seed_and_the_request():
    first = openai_responses.response_json(TURNS[1], REQUEST, DeterministicIds("case-a"))
    assert first == openai_responses.response_json(TURNS[1], REQUEST, DeterministicIds("case-a"))
    assert first["id"] != openai_responses.response_json(TURNS[1], REQUEST, DeterministicIds("case-b"))["id"]
    assert first["usage"]["total_tokens"] == first["usage"]["input_tokens"] + first["usage"]["output_tokens"]
