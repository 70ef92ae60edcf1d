"""Golden suite of the seed scenarios: exact system prompt, tools, request bodies, tool calls and references.

Runs every scenario through the real openai SDK against the in-process emulator, for both
OpenAI adapters, plain and streaming, and compares with ``fixtures/goldens/<scenario>.<adapter>.yaml``.
``pytest evals/ --update-goldens`` rewrites the golden files after a deliberate change.
"""

from __future__ import annotations


import pytest

from evals import golden
from evals.emulator.provider import ScriptedProvider
from evals.scenarios import FIXTURES, SCENARIOS, Scenario
from rag_core.models import OpenAIChat, OpenAIResponses

ADAPTERS = {"responses": OpenAIResponses, "chat": OpenAIChat}


def observe(scenario: Scenario, adapter: str, stream: bool) -> dict:
    provider = ScriptedProvider(scenario.turns, seed=f"{scenario.name}:{adapter}")
    model = ADAPTERS[adapter](id="gpt-5.2", api_key="sk-emulator", http_client=provider.http_client(), max_retries=0)
    agent = scenario.build(model)
    result = agent.run(scenario.input, stream=stream)
    out = list(result)[-1].output if stream else result
    assert out.status == "completed"
    return {
        "system_prompt": agent.get_system_message(),
        "tools": [f.to_dict() for f in agent.get_tools()],
        "tool_calls": [{"name": c.name, "arguments": c.arguments, "error": c.error} for c in out.tool_calls],
        # the search duration is volatile: normalised to a marker, the field itself is kept
        "references": [{**r, "time": "<elapsed>"} for r in out.references],
        "output": out.content,
        # a streaming body differs from a plain one only by the stream flags: pin the plain bodies
        "requests": [_without_stream_flags(r) for r in provider.requests],
    }


def _without_stream_flags(request: dict) -> dict:
    return {k: v for k, v in request.items() if k not in ("stream", "stream_options")}


@pytest.mark.parametrize("stream", [False, True], ids=["sync", "stream"])
@pytest.mark.parametrize("adapter", list(ADAPTERS))
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_seed_scenario_matches_its_golden(scenario, adapter, stream, update_goldens):
    path = FIXTURES / "goldens" / f"{scenario.name}.{adapter}.yaml"
    observed = observe(scenario, adapter, stream)
    if update_goldens and not stream:
        path.write_text(golden.dump(observed), encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"no golden file {path}: run `pytest evals/ --update-goldens` and review the result")
    diffs = golden.field_diffs(golden.load(path), observed, path.relative_to(FIXTURES.parent))
    if diffs:
        pytest.fail("golden mismatch; if the change is intended run `pytest evals/ --update-goldens`\n\n" + "\n".join(diffs), pytrace=False)
