from __future__ import annotations

import asyncio
import io
import json

import pytest

from rag_core.agent.events import RunCompleted, RunContent, ToolCallCompleted, ToolCallStarted
from rag_core.errors import AgentRunError, ModelProviderError
from rag_core.models import OpenAIResponses
from rag_core.tools import ReasoningTools

from tests.conftest import scripted_agent

SEARCH = {"tool_calls": [{"name": "search_knowledge_base", "arguments": {"query": "pad thai"}}]}
ANSWER = {"text": "Pad thai is a **noodle** dish."}


def _last_tool_output(model_class, request: dict) -> str:
    if model_class is OpenAIResponses:
        return request["input"][-1]["output"]
    return request["messages"][-1]["content"]


def _collect(events):
    events = list(events)
    assert isinstance(events[-1], RunCompleted)
    return events, events[-1].output


async def _acollect(agen):
    return [e async for e in agen]


@pytest.mark.parametrize("mode", ["sync", "stream", "async", "async-stream"])
def test_agentic_rag_two_rounds(model_class, knowledge, mode):
    asynchronous = mode.startswith("async")
    agent, provider = scripted_agent(model_class, [SEARCH, ANSWER], asynchronous, knowledge=knowledge, markdown=True)
    stream = mode.endswith("stream")
    if asynchronous:
        result = asyncio.run(agent.arun("What is pad thai?", stream=stream))
        if stream:
            result = asyncio.run(_acollect(result))
    else:
        result = agent.run("What is pad thai?", stream=stream)
    if stream:
        events, out = _collect(result)
        assert "".join(e.content for e in events if isinstance(e, RunContent)) == ANSWER["text"]
        assert [type(e) for e in events if isinstance(e, (ToolCallStarted, ToolCallCompleted))] == [ToolCallStarted, ToolCallCompleted]
        assert out.metrics.time_to_first_token is not None
    else:
        out = result
    assert out.status == "completed"
    assert out.content == ANSWER["text"]
    assert out.requests == provider.requests  # the bodies we record are the bodies that were sent
    assert len(out.requests) == 2 and out.metrics.rounds == 2
    [call] = out.tool_calls
    assert (call.name, call.arguments, call.error) == ("search_knowledge_base", {"query": "pad thai"}, None)
    [ref] = out.references
    assert ref["query"] == "pad thai" and ref["references"][0]["name"] == "pad_thai"
    assert json.loads(_last_tool_output(model_class, out.requests[1]))[0]["name"] == "pad_thai"
    assert out.metrics.total_tokens == out.metrics.input_tokens + out.metrics.output_tokens > 0
    assert [m.role for m in out.messages] == ["system", "user", "assistant", "tool", "assistant"]


def test_traditional_rag_puts_references_in_the_user_message(model_class, knowledge):
    agent, provider = scripted_agent(
        model_class, [ANSWER], knowledge=knowledge, add_knowledge_to_context=True, search_knowledge=False, references_format="yaml"
    )
    out = agent.run("pad thai")
    [request] = provider.requests
    assert "tools" not in request
    user = out.messages[-2].content
    assert user.startswith("pad thai\n\nUse the following references from the knowledge base if it helps:\n<references>\n- content: Pad thai")
    assert user.endswith("\n</references>")
    assert out.references[0]["query"] == "pad thai"


def test_reasoning_think_search_analyze_answer(model_class, knowledge):
    turns = [
        {"tool_calls": [{"name": "think", "arguments": {"title": "Plan", "thought": "Search first.", "action": "search"}}]},
        SEARCH,
        {"tool_calls": [{"name": "analyze", "arguments": {"title": "Check", "result": "found", "analysis": "enough", "next_action": "final_answer", "confidence": 0.9}}]},
        ANSWER,
    ]
    agent, provider = scripted_agent(model_class, turns, knowledge=knowledge, tools=[ReasoningTools(add_instructions=True)])
    out = agent.run("What is pad thai?", run_id="run-1")
    assert [c.name for c in out.tool_calls] == ["think", "search_knowledge_base", "analyze"]
    steps = agent.session_state["reasoning_steps"]["run-1"]
    assert [s["title"] for s in steps] == ["Plan", "Check"] == [s["title"] for s in out.reasoning_steps]
    analyze_output = out.tool_calls[2].result
    assert analyze_output.startswith("Step 1:\nTitle: Plan\nReasoning: Search first.\nAction: search\nConfidence: 0.8")
    assert "Step 2:\nTitle: Check\nResult: found\nAnalysis: enough\nNext action: final_answer\nConfidence: 0.9" in analyze_output


def boom(x: int) -> str:
    """Always fails."""
    raise RuntimeError("kaput")


@pytest.mark.parametrize(
    ("call", "error"),
    [
        ({"name": "boom", "raw_arguments": "{not json"}, "arguments for tool 'boom' are not valid JSON"),
        ({"name": "boom", "raw_arguments": "[1]"}, "must be a JSON object"),
        ({"name": "nope", "arguments": {}}, "unknown tool 'nope'; available tools: boom"),
        ({"name": "boom", "arguments": {"x": "seven"}}, "invalid arguments for tool 'boom': x: Input should be a valid integer"),
        ({"name": "boom", "arguments": {"x": 1, "y": 2}}, "invalid arguments for tool 'boom': y: Extra inputs are not permitted"),
        ({"name": "boom", "arguments": {"x": 1}}, "tool 'boom' raised RuntimeError: kaput"),
    ],
)
def test_bad_tool_calls_become_error_outputs_and_the_run_continues(model_class, call, error):
    agent, provider = scripted_agent(model_class, [{"tool_calls": [call]}, ANSWER], tools=[boom])
    out = agent.run("go")
    assert out.status == "completed" and out.content == ANSWER["text"]
    [execution] = out.tool_calls
    assert execution.result is None and error in execution.error
    assert _last_tool_output(model_class, provider.requests[1]) == f"Error: {execution.error}"


def test_tool_call_limit_refuses_calls_beyond_the_budget(model_class, knowledge):
    two = {"tool_calls": [SEARCH["tool_calls"][0], {"name": "search_knowledge_base", "arguments": {"query": "curry"}}]}
    agent, provider = scripted_agent(model_class, [two, ANSWER], knowledge=knowledge, tool_call_limit=1)
    out = agent.run("q")
    assert [c.error is None for c in out.tool_calls] == [True, False]
    assert "tool call limit reached: this run allows 1 tool call(s)" in out.tool_calls[1].error
    assert len(out.references) == 1  # the refused search never ran


def test_max_rounds_stops_a_runaway_loop_and_keeps_the_output(model_class, knowledge):
    agent, provider = scripted_agent(model_class, [SEARCH, SEARCH, SEARCH], knowledge=knowledge, max_rounds=2)
    with pytest.raises(AgentRunError, match="did not finish within max_rounds=2") as info:
        agent.run("q")
    assert info.value.output.status == "error"
    assert len(info.value.output.requests) == 2 and len(info.value.output.tool_calls) == 2


@pytest.mark.parametrize("stream", [False, True])
def test_provider_errors_carry_status_message_and_request_id(model_class, stream):
    agent, provider = scripted_agent(
        model_class, [{"status": 400, "message": "Invalid 'input': bad.", "code": "invalid_value"}]
    )
    with pytest.raises(ModelProviderError) as info:
        result = agent.run("q", stream=stream)
        if stream:
            list(result)
    error = info.value
    assert error.status_code == 400
    assert error.provider_message == "Invalid 'input': bad."
    assert error.request_id and error.request_id.startswith("req_")
    assert "HTTP 400" in str(error) and error.request_id in str(error)
    assert error.output is not None and error.output.status == "error" and len(error.output.requests) == 1


def test_a_missing_api_key_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    from rag_core import Agent

    with pytest.raises(ModelProviderError, match="no API key"):
        Agent(model=OpenAIResponses(id="gpt-5.2")).run("hi")


def test_print_response_shows_the_exchange(model_class, knowledge):
    turns = [
        {"tool_calls": [{"name": "think", "arguments": {"title": "Plan", "thought": "Search."}}]},
        ANSWER,
    ]
    for stream in (False, True):
        agent, _ = scripted_agent(model_class, turns, knowledge=knowledge, tools=[ReasoningTools()])
        buffer = io.StringIO()
        out = agent.print_response("What is pad thai?", stream=stream, show_full_reasoning=True, file=buffer)
        text = buffer.getvalue()
        assert "What is pad thai?" in text and ANSWER["text"] in text
        # streaming shows the step as it happens, instead of the raw tool call
        assert ("Reasoning step 1" if stream else "Tool: think") in text and text.count("Step 1: Plan") == 1
        assert out.content == ANSWER["text"]


def test_the_emulator_refuses_requests_beyond_its_script(model_class):
    agent, _ = scripted_agent(model_class, [])
    with pytest.raises(Exception, match="script has only 0 turn"):
        agent.run("q")


def test_non_string_input_is_rejected(model_class):
    agent, _ = scripted_agent(model_class, [ANSWER])
    with pytest.raises(TypeError, match="input must be a string"):
        agent.run(["q"])


def test_history_replays_earlier_runs_before_the_new_user_message(model_class, knowledge):
    agent, provider = scripted_agent(
        model_class, [SEARCH, ANSWER, {"text": "It has peanuts too."}, {"text": "Third."}],
        knowledge=knowledge, add_history_to_context=True, num_history_runs=1,
    )
    agent.run("What is pad thai?")
    second = agent.run("Anything else?")
    assert [m.role for m in second.messages] == ["system", "user", "assistant", "tool", "assistant", "user", "assistant"]
    third = agent.run("And?")
    # only the last run is replayed
    assert [m.content for m in third.messages if m.role == "user"] == ["Anything else?", "And?"]
    assert len(provider.requests) == 4
