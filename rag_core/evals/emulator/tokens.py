"""How many input tokens the emulator says a request holds: one count for a model call's usage and
for the provider's token-counting endpoint alike.

A program that counts its input before it sends it (to stay under a context limit, or to decide
what to compact) must get the number the model call then reports as its input tokens, as it does
from the live API. So both count the same fields, those that carry the input (messages, system
prompt, tools); what only steers the answer (``stream``, ``max_tokens``, ``temperature``) counts
for nothing, and a call's input tokens are the same streamed or not.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from rag_core.evals.emulator.script import estimate_tokens

# the fields that carry a request's input, per API
RESPONSES_INPUT = ("instructions", "input", "tools", "text")  # OpenAI Responses (create and input_tokens)
CHAT_INPUT = ("messages", "tools", "functions", "response_format")  # OpenAI Chat Completions
MESSAGES_INPUT = ("system", "messages", "tools")  # Anthropic Messages (create and count_tokens)
GEMINI_INPUT = ("contents", "systemInstruction", "system_instruction", "tools")  # generateContent, countTokens
CONVERSE_INPUT = ("system", "messages", "toolConfig")  # Bedrock Converse (and CountTokens' converse input)
COHERE_CHAT_INPUT = ("messages", "tools", "documents")  # Cohere v2 chat


def input_tokens(request: Mapping[str, Any], fields: tuple[str, ...]) -> int:
    """The input tokens of ``request``: its ``fields`` that are present, counted as JSON."""
    carried = {name: request[name] for name in fields if name in request}
    return estimate_tokens(json.dumps(carried, sort_keys=True, ensure_ascii=False))
