"""A tool loop on AWS Bedrock's streaming Converse API through ``boto3``, written the way AWS's
tool-use documentation writes its ``converse_stream`` example: a module-level ``bedrock-runtime``
client, each answer streamed into a message (``messageStart`` gives its role,
``contentBlockStart`` opens a ``toolUse``, ``contentBlockDelta`` grows the text or the tool's
input JSON, ``contentBlockStop`` closes the block, ``messageStop`` gives the stop reason), and
each ``toolUse`` answered by a ``toolResult`` in the next user message until the stop reason is
no longer ``tool_use``.

Nothing here knows about rag_core; the harness pins what it sends and reads the event stream it
gets back. boto3 is in the ``frameworks`` extra; the case says ``requires: [boto3]``.
"""

from __future__ import annotations

import json
from typing import Any

import boto3

from evals.foreign_agents.recipes import DESCRIPTION, INSTRUCTIONS, PARAMETERS, lookup_recipe

client = boto3.client("bedrock-runtime", region_name="us-east-1")
MODEL_ID = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"  # a cross-region inference profile
TOOL_CONFIG = {"tools": [{"toolSpec": {"name": "lookup_recipe", "description": DESCRIPTION,
                                       "inputSchema": {"json": PARAMETERS}}}]}
MAX_ROUNDS = 5


def stream_message(messages: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """One ConverseStream call, its events gathered into the assistant's message."""
    response = client.converse_stream(modelId=MODEL_ID, system=[{"text": INSTRUCTIONS}], messages=messages,
                                      toolConfig=TOOL_CONFIG, inferenceConfig={"maxTokens": 1024})
    stop_reason = ""
    message: dict[str, Any] = {"content": []}
    text = ""
    tool_use: dict[str, Any] = {}
    for chunk in response["stream"]:
        if "messageStart" in chunk:
            message["role"] = chunk["messageStart"]["role"]
        elif "contentBlockStart" in chunk:
            tool = chunk["contentBlockStart"]["start"]["toolUse"]
            tool_use = {"toolUseId": tool["toolUseId"], "name": tool["name"]}
        elif "contentBlockDelta" in chunk:
            delta = chunk["contentBlockDelta"]["delta"]
            if "toolUse" in delta:
                tool_use["input"] = tool_use.get("input", "") + delta["toolUse"]["input"]
            elif "text" in delta:
                text += delta["text"]
        elif "contentBlockStop" in chunk:
            if "input" in tool_use:
                tool_use["input"] = json.loads(tool_use["input"])
                message["content"].append({"toolUse": tool_use})
                tool_use = {}
            else:
                message["content"].append({"text": text})
                text = ""
        elif "messageStop" in chunk:
            stop_reason = chunk["messageStop"]["stopReason"]
    return stop_reason, message


def recipe_agent(question: str) -> str:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": question}]}]
    for _ in range(MAX_ROUNDS):
        stop_reason, message = stream_message(messages)
        messages.append(message)
        if stop_reason != "tool_use":
            return "".join(block["text"] for block in message["content"] if "text" in block)
        results = [{"toolResult": {"toolUseId": block["toolUse"]["toolUseId"],
                                   "content": [{"text": lookup_recipe(**block["toolUse"]["input"])}]}}
                   for block in message["content"] if "toolUse" in block]
        messages.append({"role": "user", "content": results})
    raise RuntimeError(f"no answer after {MAX_ROUNDS} rounds")
