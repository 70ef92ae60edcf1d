"""A tool loop on the ``anthropic`` SDK, written as Anthropic's tool-use guide writes one: a
module-level ``Anthropic()`` client (key and endpoint from the environment), ``messages.create``
with a system prompt and tools until the model stops asking for them, each ``tool_use`` block
answered by a ``tool_result``; and the same loop streamed (``messages.stream`` and the SDK's own
accumulation), yielding the answer's text as it comes.

Nothing here knows about rag_core; the harness pins what it sends. The SDK is in the
``frameworks`` extra; the cases say ``requires: [anthropic]``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic

from evals.foreign_agents.recipes import DESCRIPTION, INSTRUCTIONS, PARAMETERS, lookup_recipe

client = anthropic.Anthropic()
MODEL = "claude-sonnet-4-5"
TOOLS = [{"name": "lookup_recipe", "description": DESCRIPTION, "input_schema": PARAMETERS}]
MAX_ROUNDS = 5


def _results(content: list[Any]) -> list[dict[str, Any]]:
    return [{"type": "tool_result", "tool_use_id": block.id, "content": lookup_recipe(**block.input)}
            for block in content if block.type == "tool_use"]


def recipe_agent(question: str) -> str:
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for _ in range(MAX_ROUNDS):
        response = client.messages.create(model=MODEL, max_tokens=1024, system=INSTRUCTIONS, tools=TOOLS,
                                          messages=messages)
        if response.stop_reason != "tool_use":
            return "".join(block.text for block in response.content if block.type == "text")
        messages += [{"role": "assistant", "content": response.content},
                     {"role": "user", "content": _results(response.content)}]
    raise RuntimeError(f"no answer after {MAX_ROUNDS} rounds")


def streamed_agent(question: str) -> Iterator[str]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for _ in range(MAX_ROUNDS):
        with client.messages.stream(model=MODEL, max_tokens=1024, system=INSTRUCTIONS, tools=TOOLS,
                                    messages=messages) as stream:
            yield from stream.text_stream
            response = stream.get_final_message()
        if response.stop_reason != "tool_use":
            return
        messages += [{"role": "assistant", "content": response.content},
                     {"role": "user", "content": _results(response.content)}]
    raise RuntimeError(f"no answer after {MAX_ROUNDS} rounds")
