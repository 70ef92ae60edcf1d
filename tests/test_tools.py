from __future__ import annotations

from typing import Literal, Optional

import pytest
from pydantic import BaseModel

from rag_core import Agent
from rag_core.tools import Function, ReasoningTools, Toolkit, tool
from rag_core.tools.knowledge import SEARCH_KNOWLEDGE_FUNCTION
from rag_core.tools.schema import parse_docstring


def test_search_knowledge_base_definition_is_exact():
    assert SEARCH_KNOWLEDGE_FUNCTION.to_dict() == {
        "name": "search_knowledge_base",
        "description": "Use this function to search the knowledge base for information about a query.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "The query to search for."}},
            "required": ["query"],
            "additionalProperties": False,
        },
        "strict": False,
    }


def test_reasoning_tools_required_parameters():
    think, analyze = ReasoningTools().functions
    assert (think.name, think.parameters["required"]) == ("think", ["title", "thought"])
    assert list(think.parameters["properties"]) == ["title", "thought", "action", "confidence"]
    assert (analyze.name, analyze.parameters["required"]) == ("analyze", ["title", "result", "analysis"])
    assert analyze.parameters["properties"]["next_action"]["enum"] == ["continue", "validate", "final_answer"]
    assert "run_context" not in think.parameters["properties"]
    only_think = ReasoningTools(enable_analyze=False).functions
    assert [f.name for f in only_think] == ["think"]


class Address(BaseModel):
    city: str
    zip_code: str | None = None


def rich_signature(
    name: str,
    count: int,
    ratio: float,
    flag: bool,
    tags: list[str],
    mode: Literal["a", "b"],
    weights: dict[str, float],
    address: Address,
    note: Optional[str] = None,
    limit: int | None = 5,
) -> str:
    """Do many things.

    Longer explanation that is part of the description.

    Args:
        name: The name.
        count: How many,
            continued on a second line.
        ratio (float): A ratio.

    Returns:
        Nothing interesting.
    """
    return name


def test_schema_from_a_rich_signature():
    fn = Function.from_callable(rich_signature)
    assert fn.description == "Do many things.\n\nLonger explanation that is part of the description."
    props = fn.parameters["properties"]
    assert props["name"] == {"type": "string", "description": "The name."}
    assert props["count"] == {"type": "integer", "description": "How many, continued on a second line."}
    assert props["ratio"] == {"type": "number", "description": "A ratio."}
    assert props["flag"] == {"type": "boolean"}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["mode"] == {"type": "string", "enum": ["a", "b"]}
    assert props["weights"] == {"type": "object", "additionalProperties": {"type": "number"}}
    assert props["address"]["properties"]["city"] == {"type": "string"}
    assert "title" not in str(props["address"])
    assert props["note"] == {"type": ["string", "null"]}
    assert fn.parameters["required"] == ["name", "count", "ratio", "flag", "tags", "mode", "weights", "address"]
    assert fn.parameters["additionalProperties"] is False


def test_strict_schema_requires_everything_and_makes_optionals_nullable():
    fn = Function.from_callable(rich_signature, strict=True)
    assert fn.parameters["required"] == list(fn.parameters["properties"])
    assert fn.parameters["properties"]["limit"]["type"] == ["integer", "null"]


def test_sphinx_docstrings():
    summary, params = parse_docstring("Summary.\n\n:param x: The x.\n:param int y: The y.\n:returns: z")
    assert summary == "Summary."
    assert params == {"x": "The x.", "y": "The y."}


def test_tool_decorator_overrides_name_and_description():
    @tool(name="lookup", description="Look it up.")
    def find(term: str) -> str:
        """Ignored."""
        return term

    assert isinstance(find, Function)
    assert (find.name, find.description) == ("lookup", "Look it up.")

    @tool
    def plain(term: str) -> str:
        """Plain."""
        return term

    assert plain.to_dict()["description"] == "Plain."


def get_weather(city: str) -> str:
    """Get the weather for a city."""
    return "sunny"


def test_tools_go_out_in_declared_order_then_knowledge_search(knowledge):
    kit = Toolkit(name="misc", tools=[get_weather])
    agent = Agent(knowledge=knowledge, tools=[ReasoningTools(), kit])
    assert [f.name for f in agent.get_tools()] == ["think", "analyze", "get_weather", "search_knowledge_base"]
    assert [f.name for f in Agent(knowledge=knowledge, search_knowledge=False).get_tools()] == []


def test_duplicate_tool_names_are_rejected_at_construction(knowledge):
    with pytest.raises(ValueError, match="two tools are named 'get_weather'"):
        Agent(tools=[get_weather, get_weather])

    def search_knowledge_base(query: str) -> str:
        return query

    with pytest.raises(ValueError, match="clashes with the knowledge search tool"):
        Agent(knowledge=knowledge, tools=[search_knowledge_base])


def test_a_non_callable_tool_is_rejected():
    with pytest.raises(ValueError, match="is not a function"):
        Agent(tools=[42])
