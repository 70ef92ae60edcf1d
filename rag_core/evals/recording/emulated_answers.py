"""Recording against the emulator in-process: a request the cassette cannot play is answered by
the emulator, as vcrpy would play a recorded one, and the answer is recorded."""

from __future__ import annotations

import http
from typing import Any

from rag_core.evals.emulator.conditions import Conditions
from rag_core.evals.emulator.provider import Reply, ScriptedProvider
from rag_core.evals.recording.network import is_loopback


def _vcr_response(reply: Reply) -> dict[str, Any]:
    """An emulator reply as vcrpy hands a response to the client stubs it patches."""
    headers = {"content-type": [reply.content_type], "content-length": [str(len(reply.body))]}
    headers.update({name: [value] for name, value in reply.headers.items()})
    return {"status": {"code": reply.status, "message": http.HTTPStatus(reply.status).phrase},
            "headers": headers, "body": {"string": reply.body}}


def answer_in_process(cassette: Any, emulator: ScriptedProvider, conditions: Conditions | None) -> None:
    """Let the emulator answer every request the cassette cannot play, as vcrpy would play a
    recorded one, and record the answer (through the cassette's own filters and scrubbing);
    ``conditions`` (latency, capacity) apply to each answer as a provider's load would."""
    can_play, play = cassette.can_play_response_for, cassette.play_response
    if cassette.record_mode == "all":  # vcrpy's RecordMode is a str enum
        # vcrpy's "all" never plays a recorded interaction: its answer to "can it be played?" is no,
        # after filtering a copy of the request and matching it against every interaction loaded
        def can_play(request: Any) -> bool:
            return False

    def answers(request: Any) -> bool:
        return bool(can_play(request)) or not is_loopback(request.host)

    def answer(request: Any) -> Any:
        if can_play(request):  # new_episodes: an interaction the cassette already holds
            emulator.played(request.method, request.path, request.body)  # the turn it was recorded with
            return play(request)
        if conditions is None:
            reply = emulator.reply(request.method, request.path, request.body, request.headers)
        else:
            with conditions.admitted() as refusal:
                reply = refusal or emulator.reply(request.method, request.path, request.body, request.headers)
        response = _vcr_response(reply)
        cassette.append(request, response)
        return response

    cassette.can_play_response_for = answers
    cassette.play_response = answer
