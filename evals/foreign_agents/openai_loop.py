"""A tool loop written by hand on the openai SDK, once per API (Responses, Chat Completions).

Nothing here knows about rag_core: the client is built the way a program builds it (key and
endpoint from the environment), and the harness pins what it sends.
"""

from __future__ import annotations

import json
from typing import Any

from openai import OpenAI

from evals.foreign_agents.recipes import DESCRIPTION, INSTRUCTIONS, PARAMETERS, dated, lookup_recipe

MODEL = "gpt-5.2"
MAX_ROUNDS = 5


def responses_agent(question: str, context: Any) -> str:
    client = OpenAI(max_retries=0)
    tools = [{"type": "function", "name": "lookup_recipe", "description": DESCRIPTION, "parameters": PARAMETERS,
              "strict": True}]
    items: list[dict[str, Any]] = context.state.setdefault("items", [])
    items.append({"role": "user", "content": question})
    for _ in range(MAX_ROUNDS):
        response = client.responses.create(model=MODEL, instructions=dated(INSTRUCTIONS, context.clock),
                                           input=items, tools=tools, stream=False)
        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:
            items.append({"role": "assistant", "content": response.output_text})
            return response.output_text
        for call in calls:
            items.append({"type": "function_call", "call_id": call.call_id, "name": call.name,
                          "arguments": call.arguments})
            items.append({"type": "function_call_output", "call_id": call.call_id,
                          "output": lookup_recipe(**json.loads(call.arguments))})
    raise RuntimeError(f"no answer after {MAX_ROUNDS} rounds")


def chat_agent(question: str, context: Any) -> str:
    client = OpenAI(max_retries=0)
    tools = [{"type": "function", "function": {"name": "lookup_recipe", "description": DESCRIPTION,
                                               "parameters": PARAMETERS}}]
    messages: list[dict[str, Any]] = context.state.setdefault(
        "messages", [{"role": "system", "content": dated(INSTRUCTIONS, context.clock)}])
    messages.append({"role": "user", "content": question})
    for _ in range(MAX_ROUNDS):
        reply = client.chat.completions.create(model=MODEL, messages=messages, tools=tools).choices[0].message
        if not reply.tool_calls:
            messages.append({"role": "assistant", "content": reply.content})
            return reply.content
        messages.append({"role": "assistant", "content": reply.content, "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in reply.tool_calls]})
        for call in reply.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": lookup_recipe(**json.loads(call.function.arguments))})
    raise RuntimeError(f"no answer after {MAX_ROUNDS} rounds")
