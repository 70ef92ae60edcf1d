"""What a cassette saw during a run: every request replayed (paired with the recording it was
played from), every exchange recorded or replayed, and the provider's pushbacks; noted as vcrpy
plays and records, with the pushbacks the client retried away left out."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, NamedTuple

from rag_core.evals.emulator.conditions import REFUSED_HEADER
from rag_core.evals.emulator.provider import ScriptedProvider
from rag_core.evals.recording import cassette_format
from rag_core.evals.recording.throttling import RETRYABLE, Pushback, retried_away, retry_after
from rag_core.evals.wire.exchange import Exchange
from rag_core.evals.wire.traffic import binary_stream_apis
from rag_core.providers import api_of


def json_body(body: Any) -> Any:
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    try:
        return json.loads(body) if body else None
    except ValueError:
        return body


def exchange_of(request: Any, response: dict[str, Any]) -> Exchange:
    body, status = response.get("body", {}).get("string"), int(response["status"]["code"])
    if status < 400 and api_of(request.method, request.path) in binary_stream_apis():
        # by its API, as the SDK reads it: recordings made elsewhere keep no content type
        raw = body if isinstance(body, bytes) else (body or "").encode("utf-8")
        return Exchange(request.method, request.path, json_body(request.body), status, raw)
    stream = "event-stream" in cassette_format.content_type(response.get("headers", {}))
    if stream and isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    return Exchange(request.method, request.path, json_body(request.body), status, body if stream else json_body(body))


class Pair(NamedTuple):
    """A replayed request: the body sent now and the body of the recording it was paired with."""

    path: str
    sent: Any
    recorded: Any


@dataclass
class Replay:
    """What the cassette saw during a case."""

    pairs: list[Pair] = field(default_factory=list)  # every replayed request, in order
    unused: int = 0
    # (method, path, status) of every interaction recorded in this run
    recorded: list[tuple[str, str, int]] = field(default_factory=list)
    # what the cassette says it was recorded with (target, sdk, date, script digest)
    recorded_with: dict[str, Any] = field(default_factory=dict)
    # every request and answer of the run, recorded or replayed, in the order sent
    exchanges: list[Exchange] = field(default_factory=list)
    # every retryable answer recorded in this run (a 429 the client retried with success included)
    pushbacks: list[Pushback] = field(default_factory=list)


def observe_traffic(cassette: Any, replay: Replay, emulator: ScriptedProvider | None) -> list[tuple[int, int]]:
    """Note in ``replay`` each request the cassette plays (and what it was paired with) and each
    interaction it records; the recorded answers the client may have retried away, as (cassette
    index, exchange index), for ``drop_retried_away``."""
    original, original_append = cassette.play_response, cassette.append

    def play_response(request: Any) -> Any:
        before = dict(cassette.play_counts)
        response = original(request)
        index = next(i for i, n in cassette.play_counts.items() if n != before.get(i, 0))
        replay.pairs.append(Pair(request.path, json_body(request.body), json_body(cassette.requests[index].body)))
        replay.exchanges.append(exchange_of(request, response))
        return response

    transient: list[tuple[int, int]] = []

    def append(request: Any, response: Any) -> None:
        count = len(cassette.data)
        status, headers = int(response["status"]["code"]), dict(response.get("headers") or {})
        original_append(request, response)
        if len(cassette.data) > count:
            replay.exchanges.append(exchange_of(*cassette.data[-1]))
            if status in RETRYABLE:
                replay.pushbacks.append(Pushback(request.method, request.path, status,
                                                 retry_after(headers, datetime.now(timezone.utc))))
                # the provider's weather, not a scripted answer (a case may script a 429)
                if emulator is None or REFUSED_HEADER in headers:
                    transient.append((len(cassette.data) - 1, len(replay.exchanges) - 1))

    cassette.play_response = play_response
    cassette.append = append
    return transient


def drop_retried_away(cassette: Any, replay: Replay, transient: list[tuple[int, int]]) -> None:
    """Keep out of the cassette and the run's exchanges each provider pushback (a 429 or 5xx from
    the provider, or the emulator's conditions) that the client sent again with success: a
    replay would make the client wait and retry for nothing, and the golden would pin weather."""
    if not transient:
        return
    first = transient[0][0]
    new = cassette.data[first:]
    flags = retried_away([((r.method, r.path, r.body), int(resp["status"]["code"])) for r, resp in new])
    dropped = [(at, exchange) for at, exchange in transient if flags[at - first]]
    for at, exchange in sorted(dropped, reverse=True):
        del cassette.data[at]
        del replay.exchanges[exchange]
