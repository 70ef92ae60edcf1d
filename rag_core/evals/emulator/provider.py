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
from typing import Any, Sequence

from rag_core._optional import http_library
from rag_core.evals.emulator import (anthropic, bedrock, cohere_api, gemini, openai_chat, openai_embeddings,
                                     openai_responses)
from rag_core.evals.emulator.script import DeterministicIds, ScriptedError, ScriptedTurn
from rag_core.providers import CHAT_APIS, api_of


@dataclass
class Reply:
    status: int
    content_type: str
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


class ScriptedProvider:
    def __init__(self, turns: Sequence[ScriptedTurn | ScriptedError | dict[str, Any]], seed: str = "emulator",
                 *, then: ScriptedTurn | None = None) -> None:
        self.turns = [_coerce(t) for t in turns]
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

    @property
    def unused(self) -> int:
        """Scripted turns no request used up."""
        return max(0, len(self.turns) - len(self.requests))

    def reply(self, method: str, path: str, body: bytes | str | None) -> Reply:
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
        # embeddings and reranking are answered deterministically and do not use up the script
        if path.endswith("/embeddings"):
            return self._json(openai_embeddings.embeddings_json(request))
        for version in ("1", "2"):
            if path.endswith(f"/v{version}/embed"):
                return self._json(cohere_api.embed_json(request, self.ids, version))
            if path.endswith(f"/v{version}/rerank"):
                return self._json(cohere_api.rerank_json(request, self.ids, version))
        if path.endswith(":batchEmbedContents"):
            return self._json(gemini.batch_embed_json(request))
        if not _chat_api(path):  # not a model call: answered as the provider would, no turn used up
            error = {"error": {"message": f"the emulator does not serve {method} {path}", "type": "not_found"}}
            return Reply(404, "application/json", json.dumps(error).encode(), {"x-request-id": self.ids.next("req", 32)})
        key = (path, json.dumps(request, sort_keys=True, ensure_ascii=False))
        if key in self.answered:
            self.repeated += 1
            return self.answered[key]
        reply = self._scripted(method, path, request)
        if reply.status < 400:
            self.answered[key] = reply
        return reply

    def _scripted(self, method: str, path: str, request: dict[str, Any]) -> Reply:
        """The next scripted turn, in the wire format of the API ``path`` names."""
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
        if bedrock.is_converse(path):  # errors and headers of its own: the whole reply is the dialect's
            return Reply(*bedrock.answer(turn, path, request, self.ids))
        request_id = self.ids.next("req", 32)
        messages_api = path.endswith("/v1/messages")
        headers = {"request-id": request_id} if messages_api else {"x-request-id": request_id}
        if isinstance(turn, ScriptedError):
            error = anthropic.error_json(turn) if messages_api else {
                "error": {"message": turn.message, "type": turn.type, "param": None, "code": turn.code}}
            return Reply(turn.status, "application/json", json.dumps(error).encode(), headers)
        stream = bool(request.get("stream"))
        if messages_api:
            if stream:
                events = anthropic.message_events(turn, request, self.ids)
                return Reply(200, "text/event-stream; charset=utf-8", anthropic.sse(events).encode(), headers)
            payload = anthropic.message_json(turn, request, self.ids)
        elif ":generateContent" in path or ":streamGenerateContent" in path:
            model = path.rsplit("/", 1)[-1].split(":")[0]
            if ":streamGenerateContent" in path:
                chunks = gemini.stream_chunks(turn, request, model, self.ids)
                return Reply(200, "text/event-stream", gemini.sse(chunks).encode(), headers)
            payload = gemini.generate_json(turn, request, model, self.ids)
        elif path.endswith("/responses"):
            if stream:
                events = openai_responses.response_events(turn, request, self.ids)
                return Reply(200, "text/event-stream; charset=utf-8", openai_responses.sse(events).encode(), headers)
            payload = openai_responses.response_json(turn, request, self.ids)
        elif path.endswith("/v2/chat"):
            payload = cohere_api.chat_json(turn, request, self.ids)
        elif path.endswith("/chat/completions"):
            if stream:
                chunks = openai_chat.completion_chunks(turn, request, self.ids)
                return Reply(200, "text/event-stream; charset=utf-8", openai_chat.chat_sse(chunks).encode(), headers)
            payload = openai_chat.completion_json(turn, request, self.ids)
        else:
            error = {"error": {"message": f"the emulator does not serve {method} {path}", "type": "not_found"}}
            return Reply(404, "application/json", json.dumps(error).encode(), headers)
        return Reply(200, "application/json", json.dumps(payload, ensure_ascii=False).encode(), headers)

    def _json(self, payload: dict[str, Any]) -> Reply:
        headers = {"x-request-id": self.ids.next("req", 32)}
        return Reply(200, "application/json", json.dumps(payload, ensure_ascii=False).encode(), headers)

    def transport(self) -> Any:
        """An in-process transport serving this script (for SDK ``http_client``), of the HTTP library
        the core fetches with (``http_library``: httpx2, else httpx)."""
        httpx = http_library("the emulator's in-process transport")

        def handle(request: Any) -> Any:
            reply = self.reply(request.method, request.url.path, request.read())
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


def _chat_api(path: str) -> bool:
    """Whether ``path`` is a model call the script answers (every dialect below)."""
    return api_of("POST", path) in CHAT_APIS


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


def _coerce(turn: ScriptedTurn | ScriptedError | dict[str, Any]) -> ScriptedTurn | ScriptedError:
    if isinstance(turn, (ScriptedTurn, ScriptedError)):
        return turn
    return ScriptedError(**turn) if "status" in turn else ScriptedTurn(**turn)
