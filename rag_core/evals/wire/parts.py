"""The pieces every API's wire format is made of, read the same way for all: a message's text
whatever shape its content takes, tool-call arguments, a server-sent event stream's payloads,
token counts, and a tool definition in one provider-neutral shape."""

from __future__ import annotations

import json
from typing import Any

SYSTEM_ROLES = ("system", "developer")


def text_of(content: Any) -> str | None:
    """A message's text: a string, or the text parts of a list joined (None when it has none)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = content.get("parts", [content])
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        texts += [p for p in content if isinstance(p, str)]
        return "".join(texts) if texts else None
    return None


def arguments(raw: Any) -> Any:
    """Tool-call arguments as data: the JSON string OpenAI sends is parsed; the text is kept when
    it is not JSON (a model's malformed call stays visible as it was)."""
    if isinstance(raw, str):
        try:
            return json.loads(raw) if raw else {}
        except ValueError:
            return raw
    return raw if raw is not None else {}


def dumped(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def leading_system(items: list[Any]) -> list[Any]:
    """The system and developer messages a conversation opens with."""
    leading = []
    for item in items:
        if not (isinstance(item, dict) and item.get("role") in SYSTEM_ROLES):
            break
        leading.append(item)
    return leading


def joined(parts: list[str | None]) -> str | None:
    """Several system texts as one: joined by a blank line (None when there is none)."""
    present = [part for part in parts if part]
    return "\n\n".join(present) if present else None


def dict_items(items: Any) -> list[dict[str, Any]]:
    """A conversation's messages: the mappings of a list (a string is one user message)."""
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    return [m for m in items or [] if isinstance(m, dict)]


def last_user_text(messages: list[dict[str, Any]]) -> str | None:
    """The text of the last user message (a tool result is not a user message, even where an API
    sends it with role ``user``: a message with no text is passed over)."""
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        parts = message.get("parts")
        if parts is not None and not any(isinstance(p, dict) and "text" in p for p in parts):
            continue  # Gemini's functionResponse turn
        text = text_of(parts if parts is not None else message.get("content"))
        if text is not None:
            return text
    return None


def sse_events(stream: str) -> list[Any]:
    """The JSON payloads of a server-sent event stream (``[DONE]`` and comments skipped)."""
    payloads = []
    for block in stream.replace("\r\n", "\n").split("\n\n"):
        data = "\n".join(line[5:].lstrip() for line in block.split("\n") if line.startswith("data:"))
        if data and data != "[DONE]":
            try:
                payloads.append(json.loads(data))
            except ValueError:
                pass
    return payloads


def total(*counts: Any) -> int | None:
    """The sum of the counts present (None when none is)."""
    present = [c for c in counts if c is not None]
    return int(sum(present)) if present else None


def usage(inputs: Any, outputs: Any, overall: Any) -> dict[str, int]:
    named = {"input_tokens": inputs, "output_tokens": outputs, "total_tokens": overall}
    return {k: int(v) for k, v in named.items() if v is not None}


def summed_usage(inputs: Any, outputs: Any) -> dict[str, int]:
    """Usage of an API that reports no total (Cohere, Anthropic): the total is input + output."""
    return usage(inputs, outputs, inputs + outputs if inputs is not None and outputs is not None else None)


def neutral_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool definition in one provider-neutral shape: name, description, parameters."""
    spec = tool.get("function", tool) if isinstance(tool.get("function"), dict) else tool
    parameters = next((spec[k] for k in ("parameters", "parameters_json_schema", "parametersJsonSchema", "input_schema")
                       if k in spec), None)
    out: dict[str, Any] = {"name": spec.get("name")}
    if spec.get("description") is not None:
        out["description"] = spec["description"]
    if parameters is not None:
        out["parameters"] = parameters
    return out


def function_or_builtin(tool: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry of an OpenAI-style or Anthropic tools list: a function (OpenAI's ``function``,
    Anthropic's ``input_schema``, Chat's deprecated functions) in the neutral shape, or a built-in
    tool (web search, a server tool) under its type."""
    kind = tool.get("type")
    if (isinstance(tool.get("function"), dict) or kind == "function"
            or (kind in (None, "custom") and "input_schema" in tool)
            or (kind is None and "name" in tool)):
        return [neutral_tool(tool)]
    return [{"type": kind}] if kind is not None else []


def listed_tools(listed: Any, functions: Any = None) -> list[dict[str, Any]]:
    """The function and built-in tools of a tools list (and Chat's deprecated ``functions``
    after it), neutral shape, in the order sent."""
    found = []
    for tool in (listed if isinstance(listed, list) else []) + (functions if isinstance(functions, list) else []):
        if isinstance(tool, dict):
            found += function_or_builtin(tool)
    return found
