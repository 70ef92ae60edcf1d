"""One google-genai call with a function declaration, then the answer: the SDK used directly."""

from __future__ import annotations

from typing import Any

from google import genai
from google.genai import types

from evals.foreign_agents.recipes import DESCRIPTION, INSTRUCTIONS, PARAMETERS, dated, lookup_recipe

MODEL = "gemini-2.5-flash"


def gemini_agent(question: str, context: Any) -> str | None:
    client = genai.Client()  # key and endpoint from the environment, as a program has them
    lookup = types.FunctionDeclaration(name="lookup_recipe", description=DESCRIPTION,
                                       parameters_json_schema=PARAMETERS)
    config = types.GenerateContentConfig(
        system_instruction=dated(INSTRUCTIONS, context.clock),
        tools=[types.Tool(function_declarations=[lookup])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    contents: list[types.Content] = [types.Content(role="user", parts=[types.Part(text=question)])]
    for _ in range(5):
        response = client.models.generate_content(model=MODEL, contents=contents, config=config)
        calls = response.function_calls or []
        if not calls:
            return response.text
        contents.append(response.candidates[0].content)
        contents.append(types.Content(role="user", parts=[
            types.Part.from_function_response(name=c.name, response={"result": lookup_recipe(**(c.args or {}))})
            for c in calls]))
    raise RuntimeError("no answer after 5 rounds")
