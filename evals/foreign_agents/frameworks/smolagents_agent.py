"""A smolagents ``ToolCallingAgent`` (smolagents 1.26.0), written as smolagents' docs write one:
an ``OpenAIServerModel(model_id=...)`` (key and endpoint from the environment), one ``@tool``
function (smolagents reads the tool's description and its argument's from the docstring's
``Args:``, and refuses a function without them), ``instructions`` added to its own system
prompt, built at module level; then ``agent.run(...)``.

The agent ends a run only when the model calls its built-in ``final_answer`` tool, whose
``answer`` is what ``run`` returns: the case's last scripted turn is that call.
"""

from __future__ import annotations

from smolagents import OpenAIServerModel, ToolCallingAgent, tool

from evals.foreign_agents import recipes
from evals.foreign_agents.recipes import INSTRUCTIONS


@tool
def lookup_recipe(dish: str) -> str:
    """Look up how a Thai dish is made.

    Args:
        dish: The dish's name, e.g. pad thai.
    """
    return recipes.lookup_recipe(dish)


model = OpenAIServerModel(model_id="gpt-5.2")
agent = ToolCallingAgent(tools=[lookup_recipe], model=model, instructions=INSTRUCTIONS)


def recipe_agent(question: str) -> str:
    return agent.run(question)
