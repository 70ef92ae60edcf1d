from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_core import Agent
from rag_core.agent.system_message import (
    KNOWLEDGE_SEARCH_BLOCK,
    build_system_message,
    fill_placeholders,
    format_instructions,
)
from rag_core.tools import ReasoningTools
from rag_core.tools.reasoning import REASONING_INSTRUCTIONS

FROZEN = datetime(2026, 1, 2, 3, 4, 5, 678901)


def test_agentic_rag_with_markdown_is_exactly_the_documented_message(knowledge):
    agent = Agent(knowledge=knowledge, search_knowledge=True, markdown=True)
    assert agent.get_system_message() == (
        "<additional_information>\n- Use markdown to format your answers.\n</additional_information>\n\n"
        "<knowledge_base>\nYou have a knowledge base you can search using the search_knowledge_base tool. "
        "Search before answering questions—don't assume you know the answer. For ambiguous questions, "
        "search first rather than asking for clarification.\n</knowledge_base>"
    )


def test_every_part_in_order_with_exact_separators(knowledge):
    agent = Agent(
        description="You are a chef.",
        role="Cook",
        instructions=["Be brief.", "Cite {source}."],
        markdown=True,
        add_datetime_to_context=True,
        clock=lambda: FROZEN,
        name="Chef",
        add_name_to_context=True,
        tools=[ReasoningTools(add_instructions=True)],
        session_state={"source": "the book"},
        expected_output="  A recipe.  ",
        additional_context="Kitchen is small.",
        knowledge=knowledge,
    )
    expected = (
        "You are a chef.\n"
        "\n<your_role>\nCook\n</your_role>\n\n"
        "- Be brief.\n- Cite the book.\n\n"
        "<additional_information>\n- Use markdown to format your answers.\n"
        "- The current time is 2026-01-02 03:04:05.678901.\n- Your name is: Chef.\n</additional_information>\n\n"
        + REASONING_INSTRUCTIONS
        + "\n<expected_output>\nA recipe.\n</expected_output>\n\n"
        "Kitchen is small.\n" + KNOWLEDGE_SEARCH_BLOCK
    )
    assert agent.get_system_message() == expected


def test_reasoning_instructions_sit_between_additional_information_and_knowledge_base(knowledge):
    message = Agent(
        knowledge=knowledge, markdown=True, tools=[ReasoningTools(add_instructions=True)]
    ).get_system_message()
    assert message.index("</additional_information>\n\n<reasoning_instructions>") < message.index(
        "</reasoning_instructions>\n\n<knowledge_base>"
    )
    without = Agent(knowledge=knowledge, tools=[ReasoningTools()]).get_system_message()
    assert "<reasoning_instructions>" not in without


@pytest.mark.parametrize(
    ("instructions", "expected"),
    [
        (["Only one."], "Only one."),
        (["A.", "B."], "- A.\n- B."),
        (["Step 1\nStep 2", "Be kind."], "Step 1\nStep 2\n\n- Be kind."),
        (["Line one\nline two"], "Line one\nline two"),
    ],
)
def test_instruction_layout(instructions, expected):
    assert format_instructions(instructions) == expected
    assert format_instructions(instructions, use_instruction_tags=True) == f"<instructions>\n{expected}\n</instructions>"


def test_a_single_string_instruction_is_inserted_as_is():
    assert Agent(instructions="Answer in French.").get_system_message() == "Answer in French."


def test_placeholders_fill_known_names_and_leave_the_rest():
    assert fill_placeholders("Hi {user}, {unknown} {not a name} {}", {"user": "Ana"}) == "Hi Ana, {unknown} {not a name} {}"
    agent = Agent(instructions="Hi {user}", session_state={"user": "Ana"}, resolve_in_context=False)
    assert agent.get_system_message() == "Hi {user}"


def test_placeholders_are_not_filled_in_expected_output_or_additional_context():
    agent = Agent(expected_output="{x}", additional_context="{x}", session_state={"x": "filled"})
    assert agent.get_system_message() == "<expected_output>\n{x}\n</expected_output>\n\n{x}"


def test_user_system_message_replaces_the_assembled_one(knowledge):
    assert Agent(system_message="Custom.", knowledge=knowledge, markdown=True).get_system_message() == "Custom."


def test_no_system_message_when_nothing_applies(knowledge):
    assert Agent().get_system_message() is None
    assert Agent(knowledge=knowledge, search_knowledge=False).get_system_message() is None


def test_the_datetime_comes_from_the_injected_clock():
    message = Agent(add_datetime_to_context=True, clock=lambda: FROZEN).get_system_message()
    assert message == "<additional_information>\n- The current time is 2026-01-02 03:04:05.678901.\n</additional_information>"


# ---------------------------------------------------------------- properties
line = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r{}"), min_size=1, max_size=40).map(str.strip).filter(bool)
block = st.lists(line, min_size=1, max_size=3).map("\n".join)


@settings(max_examples=200, deadline=None)
@given(
    description=st.none() | line,
    role=st.none() | line,
    instructions=st.lists(line | block, max_size=4),
    markdown=st.booleans(),
    with_time=st.booleans(),
    name=st.none() | line,
    reasoning=st.booleans(),
    expected_output=st.none() | line,
    additional_context=st.none() | line,
    knowledge=st.booleans(),
)
def test_each_enabled_block_appears_once_in_order_and_text_round_trips(
    description, role, instructions, markdown, with_time, name, reasoning, expected_output, additional_context, knowledge
):
    message = build_system_message(
        description=description,
        role=role,
        instructions=instructions,
        markdown=markdown,
        now=FROZEN if with_time else None,
        name=name,
        tool_instructions=[REASONING_INSTRUCTIONS] if reasoning else [],
        expected_output=expected_output,
        additional_context=additional_context,
        knowledge_context=KNOWLEDGE_SEARCH_BLOCK if knowledge else None,
    )
    markers = []
    if role:
        markers.append("<your_role>")
    if markdown or with_time or name:
        markers.append("<additional_information>")
    if reasoning:
        markers.append("<reasoning_instructions>")
    if expected_output:
        markers.append("<expected_output>")
    if knowledge:
        markers.append("<knowledge_base>")
    if message is None:
        assert not (description or role or instructions or markers or additional_context)
        return
    assert message == message.strip()
    positions = [message.index(m) for m in markers]
    assert positions == sorted(positions)
    for marker in markers:
        assert message.count(marker) == 1
    if description:
        assert message.startswith(description)
    for text in (role, expected_output):
        if text:
            assert text in message
    if additional_context:
        assert additional_context in message
    cursor = 0
    for instruction in instructions:  # instructions keep their order and their text
        found = message.index(instruction, cursor)
        cursor = found + len(instruction)


@settings(max_examples=100, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=200))
def test_any_single_instruction_text_round_trips_untouched(text):
    message = build_system_message(instructions=[text])
    assert message == (text.strip() or None)
