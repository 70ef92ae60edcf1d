"""OpenAI's model APIs as the emulator answers them: Responses and Chat Completions (JSON and
server-sent events; ``openai_responses.py``, ``openai_chat.py``)."""

from __future__ import annotations

from typing import Any

from rag_core.evals.emulator import openai_chat, openai_responses
from rag_core.evals.emulator.dialects import SSE, Answer, error_answer, json_answer, request_id
from rag_core.evals.emulator.script import DeterministicIds, ScriptedError, ScriptedTurn


def responses(turn: ScriptedTurn | ScriptedError, path: str, request: dict[str, Any], ids: DeterministicIds) -> Answer:
    headers = request_id(ids)
    if isinstance(turn, ScriptedError):
        return error_answer(turn, headers)
    if request.get("stream"):
        return 200, SSE, openai_responses.sse(openai_responses.response_events(turn, request, ids)).encode(), headers
    return json_answer(openai_responses.response_json(turn, request, ids), headers)


def chat(turn: ScriptedTurn | ScriptedError, path: str, request: dict[str, Any], ids: DeterministicIds) -> Answer:
    headers = request_id(ids)
    if isinstance(turn, ScriptedError):
        return error_answer(turn, headers)
    if request.get("stream"):
        return 200, SSE, openai_chat.chat_sse(openai_chat.completion_chunks(turn, request, ids)).encode(), headers
    return json_answer(openai_chat.completion_json(turn, request, ids), headers)


DIALECTS = {"openai-responses": responses, "openai-chat": chat}
