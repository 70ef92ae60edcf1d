from __future__ import annotations

import pytest
from pydantic import ValidationError

from rag_core import Agent


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"references_format": "xml"}, "references_format"),
        ({"no_such_option": 1}, "no_such_option"),
        ({"tool_call_limit": -1}, "tool_call_limit"),
        ({"max_rounds": 0}, "max_rounds"),
        ({"model": "gpt-5.2"}, "model"),
        ({"add_knowledge_to_context": True}, "add_knowledge_to_context"),
        ({"knowledge": object()}, "knowledge"),
    ],
)
def test_bad_options_fail_at_construction_naming_the_field(options, field):
    with pytest.raises(ValidationError) as info:
        Agent(**options)
    assert field in str(info.value)


def test_running_without_a_model_is_a_clear_error():
    with pytest.raises(ValueError, match="Agent has no model"):
        Agent().run("hi")
