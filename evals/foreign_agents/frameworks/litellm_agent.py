"""A tool loop on LiteLLM (litellm 1.110.2), written as LiteLLM's "Function Calling" docs write
one: ``litellm.completion(model=..., messages=..., tools=..., tool_choice="auto")``; while the
reply has ``tool_calls``, append the reply message and one ``role: tool`` message per call (with
the call's id and the function's name), and call again.

``"openai/gpt-5.2"`` goes to OpenAI's Chat Completions with key and endpoint from the
environment.
"""

from __future__ import annotations

import json

import litellm

from evals.foreign_agents.recipes import DESCRIPTION, INSTRUCTIONS, PARAMETERS, lookup_recipe

MODEL = "openai/gpt-5.2"
MAX_ROUNDS = 5

tools = [{"type": "function", "function": {"name": "lookup_recipe", "description": DESCRIPTION,
                                           "parameters": PARAMETERS}}]
available_functions = {"lookup_recipe": lookup_recipe}


def recipe_agent(question: str) -> str:
    messages = [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": question}]
    for _ in range(MAX_ROUNDS):
        response = litellm.completion(model=MODEL, messages=messages, tools=tools, tool_choice="auto")
        response_message = response.choices[0].message
        if not response_message.tool_calls:
            return response_message.content
        messages.append(response_message)
        for tool_call in response_message.tool_calls:
            function_name = tool_call.function.name
            function_args = json.loads(tool_call.function.arguments)
            messages.append({"tool_call_id": tool_call.id, "role": "tool", "name": function_name,
                             "content": available_functions[function_name](**function_args)})
    raise RuntimeError(f"no answer after {MAX_ROUNDS} rounds")
