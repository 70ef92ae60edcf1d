"""A ReAct agent on DSPy (dspy 3.4.1), written as DSPy's docs write one: configure the LM once
at module level (``dspy.configure(lm=dspy.LM("openai/gpt-5.2"))``), declare the task as a
signature, give ``dspy.ReAct`` plain Python functions as tools, and read the prediction's field.

DSPy's default engine speaks HTTP over its own sockets (its vendored lm15 transports), not
through an HTTP library: the harness routes that client's requests through the cassette like the
libraries vcrpy patches. ReAct asks the model for its next thought, tool name and tool arguments
as text fields (DSPy's chat adapter), then for the answer.
"""

from __future__ import annotations

import dspy

from evals.foreign_agents.recipes import lookup_recipe as _lookup_recipe

dspy.configure(lm=dspy.LM("openai/gpt-5.2"))


def lookup_recipe(dish: str) -> str:
    """Look up how a Thai dish is made."""
    return _lookup_recipe(dish)


react = dspy.ReAct("question -> answer", tools=[lookup_recipe])


def recipe_agent(question: str) -> str:
    return react(question=question).answer
