"""A tool loop on AWS Bedrock's Converse API through ``boto3``, written the way AWS's Converse
tool-use documentation writes one: a module-level ``bedrock-runtime`` client (credentials from
the environment's usual chain), ``converse`` with a system prompt and a ``toolConfig`` until the
stop reason is no longer ``tool_use``, the assistant's message appended as it came back and each
``toolUse`` block answered by a ``toolResult`` in the next user message.

Nothing here knows about rag_core; the harness pins what it sends. boto3 is in the ``frameworks``
extra; the case says ``requires: [boto3]``.
"""

from __future__ import annotations

from typing import Any

import boto3

from evals.foreign_agents.recipes import DESCRIPTION, INSTRUCTIONS, PARAMETERS, lookup_recipe

client = boto3.client("bedrock-runtime", region_name="us-east-1")
MODEL_ID = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"  # a cross-region inference profile
TOOL_CONFIG = {"tools": [{"toolSpec": {"name": "lookup_recipe", "description": DESCRIPTION,
                                       "inputSchema": {"json": PARAMETERS}}}]}
MAX_ROUNDS = 5


def _tool_results(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One ``toolResult`` per ``toolUse`` block: Converse wants them all in the next user message."""
    return [{"toolResult": {"toolUseId": block["toolUse"]["toolUseId"],
                            "content": [{"text": lookup_recipe(**block["toolUse"]["input"])}]}}
            for block in content if "toolUse" in block]


def recipe_agent(question: str) -> str:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": question}]}]
    for _ in range(MAX_ROUNDS):
        response = client.converse(modelId=MODEL_ID, system=[{"text": INSTRUCTIONS}], messages=messages,
                                   toolConfig=TOOL_CONFIG, inferenceConfig={"maxTokens": 1024})
        message = response["output"]["message"]
        if response["stopReason"] != "tool_use":
            return "".join(block["text"] for block in message["content"] if "text" in block)
        messages += [message, {"role": "user", "content": _tool_results(message["content"])}]
    raise RuntimeError(f"no answer after {MAX_ROUNDS} rounds")
