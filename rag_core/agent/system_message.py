"""Assembly of the system message: a pure function of the agent's settings.

The parts and their separators are the contract that goldens pin byte for byte; see
``build_system_message`` for the order. Nothing here reads a clock or the environment:
the current time arrives as an argument.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Iterable, Mapping, Sequence

from rag_core.knowledge.search_tool import KNOWLEDGE_SEARCH_BLOCK

# KNOWLEDGE_SEARCH_BLOCK lived here; it is importable from here still
__all__ = ["KNOWLEDGE_SEARCH_BLOCK", "build_system_message", "fill_placeholders", "format_instructions"]

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def format_instructions(instructions: Sequence[str], use_instruction_tags: bool = False) -> str:
    """One instruction as is; several single-line ones as ``- `` bullets on separate lines;
    if any is multi-line, blocks separated by a blank line (single-line ones still bulleted)."""
    if len(instructions) == 1:
        text = instructions[0]
    elif any("\n" in i for i in instructions):
        text = "\n\n".join(i if "\n" in i else f"- {i}" for i in instructions)
    else:
        text = "\n".join(f"- {i}" for i in instructions)
    if use_instruction_tags:
        text = f"<instructions>\n{text}\n</instructions>"
    return text


def fill_placeholders(text: str, values: Mapping[str, Any]) -> str:
    """Replace ``{name}`` with ``values[name]``; unknown names and other braces stay as written."""
    if not values:
        return text
    return _PLACEHOLDER.sub(
        lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), text
    )


def build_system_message(
    *,
    description: str | None = None,
    role: str | None = None,
    instructions: Sequence[str] = (),
    use_instruction_tags: bool = False,
    markdown: bool = False,
    now: datetime | None = None,
    datetime_format: str | None = None,
    name: str | None = None,
    tool_instructions: Iterable[str] = (),
    session_state: Mapping[str, Any] | None = None,
    resolve_in_context: bool = True,
    expected_output: str | None = None,
    additional_context: str | None = None,
    knowledge_context: str | None = None,
    model_system_message: str | None = None,
) -> str | None:
    """The system message, or None when no part applies.

    Order: description; role; instructions; additional information (markdown, current
    time when ``now`` is given, name when ``name`` is given); toolkit instructions; then
    ``{placeholders}`` in all of the above are filled from ``session_state``; then
    expected output; additional context; the knowledge-base block (``knowledge_context``,
    given when the agent searches a knowledge base); what the model adds (``model_system_message``,
    e.g. Claude's sentence for agents with tools). The whole is stripped.
    """
    text = ""
    if description:
        text += description + "\n"
    if role:
        text += f"\n<your_role>\n{role}\n</your_role>\n\n"
    if instructions:
        text += format_instructions(instructions, use_instruction_tags) + "\n\n"
    info: list[str] = []
    if markdown:
        info.append("Use markdown to format your answers.")
    if now is not None:
        # Agno's rendering: str(datetime) (microseconds and offset when present) unless a format is given
        info.append(f"The current time is {now.strftime(datetime_format) if datetime_format else now}.")
    if name:
        info.append(f"Your name is: {name}.")
    if info:
        text += "<additional_information>" + "".join(f"\n- {i}" for i in info)
        text += "\n</additional_information>\n\n"
    for block in tool_instructions:
        text += block + "\n"
    if resolve_in_context and session_state:
        text = fill_placeholders(text, session_state)
    if expected_output:
        text += f"<expected_output>\n{expected_output.strip()}\n</expected_output>\n\n"
    if additional_context:
        text += additional_context + "\n"
    if knowledge_context:
        text += knowledge_context + "\n"
    if model_system_message:
        text += model_system_message
    text = text.strip()
    return text or None
