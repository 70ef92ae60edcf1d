"""ScriptedProvider: answers provider requests from a script, in the provider's wire format.

The same object answers in-process while the harness records against the emulator (the
cassette hands it every request the program sends), backs the loopback HTTP emulator
(``rag-core emulator serve``), and an in-process transport
(``ScriptedProvider.transport()``), which unit tests hand to the SDK as ``http_client``.

The script follows the conversation, not the count of requests: a request identical to one
already answered successfully (an SDK's retry) gets the same answer again and uses up no turn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from rag_core._optional import http_library
from rag_core.evals.emulator import endpoints
from rag_core.evals.emulator.dialects import dialects
from rag_core.evals.emulator.script import DeterministicIds, ScriptedEndpoint, ScriptedError, ScriptedTurn
from rag_core.providers import CHAT_APIS, api_of


@dataclass
class Reply:
    status: int
    content_type: str
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


class ScriptedProvider:
    def __init__(self, turns: Sequence[ScriptedTurn | ScriptedError | ScriptedEndpoint | dict[str, Any]],
                 seed: str = "emulator", *, then: ScriptedTurn | None = None) -> None:
        entries = [_coerce(t) for t in turns]
        # a script's endpoint answers stand apart: they answer every request to their endpoint
        self.endpoints = [e for e in entries if isinstance(e, ScriptedEndpoint)]
        self.turns = [e for e in entries if not isinstance(e, ScriptedEndpoint)]
        # what every call past the script's end gets; None makes that an error (cases must script every call)
        self.then = then
        # set when a call came after the script's end: the harness then refuses the recording
        self.overrun: str | None = None
        self.overrun_at = 0  # how many scripted requests came before the first one past the end
        self.ids = DeterministicIds(seed)
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        # successful answers by (path, request): a retried request gets its answer again
        self.answered: dict[tuple[str, str], Reply] = {}
        self.repeated = 0  # requests answered again that way
        # "METHOD path" of each request the emulator does not serve (answered 404, using up no turn)
        self.unserved: list[str] = []

    @property
    def unused(self) -> int:
        """Scripted turns no request used up."""
        return max(0, len(self.turns) - len(self.requests))

    def _endpoint(self, method: str, path: str) -> ScriptedEndpoint | None:
        """The script's answer to every request to this endpoint, if it scripts one."""
        return next((e for e in self.endpoints if e.answers(method, path)), None)

    def uses_a_turn(self, method: str, path: str) -> bool:
        """Whether a request to ``path`` is a model call the script answers, one turn each (not an
        endpoint the script or the emulator answers whatever the turn): what ``reply`` gives a turn."""
        return (self._endpoint(method, path) is None and _model_call(method, path)
                and not endpoints.serves(method, path))

    def played(self, method: str, path: str, body: bytes | str | None) -> None:
        """A model call the cassette answered (``new_episodes`` plays what it holds): its turn was
        used up when it was recorded, so the next call the emulator answers gets the turn after it."""
        if not self.uses_a_turn(method, path):
            return
        try:
            request = json.loads(body or b"{}")
        except (ValueError, UnicodeDecodeError):
            request = {}
        self.requests.append(request if isinstance(request, dict) else {})
        self.paths.append(path)

    def reply(self, method: str, path: str, body: bytes | str | None,
              headers: Mapping[str, str] | None = None) -> Reply:
        """The answer to one request; ``headers`` tell apart APIs that share a path (``GET /v1/models``)."""
        scripted = self._endpoint(method, path)
        if scripted is not None:  # whatever its body: an upload is not JSON
            return Reply(scripted.status, "application/json", json.dumps(scripted.body, ensure_ascii=False).encode(),
                         {"x-request-id": self.ids.next("req", 32)})
        if not _model_call(method, path) and not endpoints.serves(method, path):
            return self._unserved(method, path)
        try:
            request = json.loads(body or b"{}")
        except (ValueError, UnicodeDecodeError):
            return _error(400, f"{method} {path}: the body is not JSON", "invalid_request_error")
        if not isinstance(request, dict):
            return _error(400, f"{method} {path}: the body is {type(request).__name__} JSON, not an object",
                          "invalid_request_error")
        problem = _too_large(request)
        if problem:
            return _error(400, f"{method} {path}: {problem}", "invalid_request_error")
        # embeddings, reranking, token counts, model lists: answered deterministically, no turn used up
        served = endpoints.answer(method, path, request, headers or {}, self.ids)
        if served is not None:
            return Reply(*served)
        key = (path, json.dumps(request, sort_keys=True, ensure_ascii=False))
        if key in self.answered:
            self.repeated += 1
            return self.answered[key]
        reply = self._scripted(method, path, request)
        if reply.status < 400:
            self.answered[key] = reply
        return reply

    def _scripted(self, method: str, path: str, request: dict[str, Any]) -> Reply:
        """The next scripted turn, in the wire format of the API ``path`` names (``dialects.py``)."""
        self.requests.append(request)
        self.paths.append(path)
        index = len(self.requests) - 1
        if index < len(self.turns):
            turn = self.turns[index]
        elif self.then is not None:
            turn = self.then
        else:
            # answered like a provider's server error, visibly; the harness then refuses the recording
            if self.overrun is None:
                self.overrun, self.overrun_at = f"request #{index + 1}, to {path}", index

            return _error(500, f"emulator: request #{index + 1} to {path} but the script has only {len(self.turns)} "
                               "turn(s)", "emulator_error")
        dialect = dialects().get(api_of("POST", path) or "")
        if dialect is None:
            return self._unserved(method, path)
        return Reply(*dialect(turn, path, request, self.ids))

    @property
    def unserved_problem(self) -> str | None:
        """Why a recording that sent requests the emulator does not serve must not be kept."""
        if not self.unserved:
            return None
        named = ", ".join(dict.fromkeys(self.unserved))
        return (f"the emulator does not serve {named}: record this case against the live API instead (with the "
                "provider's key set, without --emulator), or script the answer in the case's emulate: list, e.g. "
                f"- {{endpoint: {self.unserved[0]}, body: {{...}}}}")

    def _unserved(self, method: str, path: str) -> Reply:
        """A 404 naming the request and what to do, as the SDK's error message; the harness refuses
        the recording, naming it (``unserved``)."""
        method = method.upper()
        self.unserved.append(f"{method} {path}")
        error = {"error": {"message": unserved_message(method, path), "type": "not_found"}}
        return Reply(404, "application/json", json.dumps(error).encode(), {"x-request-id": self.ids.next("req", 32)})

    def transport(self) -> Any:
        """An in-process transport serving this script (for SDK ``http_client``), of the HTTP library
        the core fetches with (``http_library``: httpx2, else httpx)."""
        httpx = http_library("the emulator's in-process transport")

        def handle(request: Any) -> Any:
            reply = self.reply(request.method, request.url.path, request.read(), request.headers)
            return httpx.Response(
                reply.status, content=reply.body, headers={"content-type": reply.content_type, **reply.headers}
            )

        return httpx.MockTransport(handle)

    def http_client(self) -> Any:
        httpx = http_library("the emulator's in-process client")

        return httpx.Client(transport=self.transport())

    def async_http_client(self) -> Any:
        httpx = http_library("the emulator's in-process client")

        transport = self.transport()

        class _Async(httpx.AsyncBaseTransport):
            async def handle_async_request(self, request: Any) -> Any:
                await request.aread()
                return transport.handle_request(request)

        return httpx.AsyncClient(transport=_Async())


# far above what any provider accepts (OpenAI: 3072 dimensions and 2048 inputs a request), so a
# mistaken request is refused as the provider would refuse it instead of taking the machine's memory
MAX_DIMENSIONS = 16_384
MAX_INPUTS = 4_096


def unserved_message(method: str, path: str) -> str:
    """What the SDK is told about a request the emulator does not serve."""
    return (f"the emulator does not serve {method} {path}: record against the live API instead, or script the "
            f"answer in the case's emulate: list (- {{endpoint: {method} {path}, body: {{...}}}})")


def _model_call(method: str, path: str) -> bool:
    """Whether ``method`` and ``path`` are a model call the script answers (every dialect below)."""
    return method.upper() == "POST" and api_of("POST", path) in CHAT_APIS


def _too_large(request: dict[str, Any]) -> str | None:
    for field in ("dimensions", "output_dimension", "outputDimensionality"):
        value = request.get(field)
        if value is not None and (not isinstance(value, int) or not 0 < value <= MAX_DIMENSIONS):
            return f"{field} must be a whole number from 1 to {MAX_DIMENSIONS}, not {value!r}"
    for field in ("input", "texts", "documents", "requests"):
        value = request.get(field)
        if isinstance(value, list) and len(value) > MAX_INPUTS:
            return f"{field} holds {len(value)} items, more than {MAX_INPUTS}"
    return None


def _error(status: int, message: str, kind: str) -> Reply:
    return Reply(status, "application/json", json.dumps({"error": {"message": message, "type": kind}}).encode())


def _coerce(turn: ScriptedTurn | ScriptedError | ScriptedEndpoint | dict[str, Any]
            ) -> ScriptedTurn | ScriptedError | ScriptedEndpoint:
    if isinstance(turn, (ScriptedTurn, ScriptedError, ScriptedEndpoint)):
        return turn
    if "endpoint" in turn:
        return ScriptedEndpoint(**turn)
    return ScriptedError(**turn) if "status" in turn else ScriptedTurn(**turn)
