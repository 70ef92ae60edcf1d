"""Agent(output_schema=Model): the format each API is asked for, the answer parsed into the model,
and an answer that does not fit failing with one clear error that keeps the raw text."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field

from rag_core import Agent
from rag_core.evals.emulator.server import EmulatorServer
from rag_core.evals.wire.traffic import validate_request
from rag_core.models import Gemini, OpenAIChat, OpenAIResponses
from rag_core.errors import StructuredOutputError


class Source(BaseModel):
    name: str
    page: int | None = None


class Dish(BaseModel):
    """A dish and where the answer came from."""

    dish: str = Field(description="the dish's name")
    spicy: bool = False
    sources: list[Source]


ANSWER = {"dish": "Tom kha gai", "spicy": True, "sources": [{"name": "thai_recipes", "page": 12}]}
ADAPTERS = {
    "responses": lambda url: OpenAIResponses(id="gpt-5.2", api_key="k", base_url=f"{url}/v1", max_retries=0),
    "chat": lambda url: OpenAIChat(id="gpt-5.2", api_key="k", base_url=f"{url}/v1", max_retries=0),
    "gemini": lambda url: Gemini(api_key="k", base_url=url),
}


@pytest.fixture
def emulator():
    server = EmulatorServer()
    yield server
    server.close()


def format_in(api: str, body: dict) -> dict:
    if api == "responses":
        return body["text"]["format"]
    if api == "chat":
        return body["response_format"]
    return {k: body["generationConfig"][k] for k in ("responseMimeType", "responseJsonSchema")}


@pytest.mark.parametrize("stream", [False, True], ids=["sync", "stream"])
@pytest.mark.parametrize("api", list(ADAPTERS))
def test_the_answer_comes_back_as_the_model_and_the_body_asks_for_it(emulator, api, stream):
    if api == "gemini":
        pytest.importorskip("google.genai")
    provider = emulator.load([{"text": json.dumps(ANSWER)}], seed="structured")
    agent = Agent(model=ADAPTERS[api](emulator.url), instructions="Name one dish.", markdown=True, output_schema=Dish)
    result = agent.run("Which soup uses galangal?", stream=stream)
    out = list(result)[-1].output if stream else result
    assert isinstance(out.content, Dish) and out.content.model_dump() == ANSWER
    assert out.to_dict()["content"] == ANSWER
    # sent unchanged, and a body the SDK's own request types accept
    assert provider.requests == out.requests
    validate_request(provider.paths[0], out.requests[0])
    asked = format_in(api, out.requests[0])
    if api == "gemini":
        assert asked == {"responseMimeType": "application/json", "responseJsonSchema": Dish.model_json_schema()}
    else:
        spec = asked if api == "responses" else asked["json_schema"]
        assert asked["type"] == "json_schema" and spec["name"] == "Dish" and spec["strict"] is True
        # strict: every property required and no others allowed, nested models too
        schema = spec["schema"]
        assert schema["required"] == ["dish", "spicy", "sources"] and schema["additionalProperties"] is False
        assert schema["$defs"]["Source"]["required"] == ["name", "page"]
    # no markdown advice for a JSON answer (as Agno does)
    assert "markdown" not in json.dumps(out.requests[0])


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_the_format_is_the_one_the_sdk_parse_helpers_send(emulator, api):
    """``client.responses.parse(text_format=…)`` / ``chat.completions.parse(response_format=…)``
    put the same format on the wire as our pure build_request."""
    provider = emulator.load([{"text": json.dumps(ANSWER)}] * 2, seed="parity")
    model = ADAPTERS[api](emulator.url)
    if api == "responses":
        model.client().responses.parse(model="gpt-5.2", input="q", text_format=Dish)
    else:
        model.client().chat.completions.parse(model="gpt-5.2", messages=[{"role": "user", "content": "q"}],
                                              response_format=Dish)
    ours = Agent(model=model, output_schema=Dish).build_request("q")
    assert format_in(api, provider.requests[0]) == format_in(api, ours)


@pytest.mark.parametrize("reply, problem", [
    ('{"dish": "Tom kha gai"}', "sources: Field required"),
    ("Tom kha gai, from page 12.", "Invalid JSON"),
    ("", "the answer is empty"),
])
def test_an_answer_that_does_not_fit_is_one_error_keeping_the_raw_text(emulator, reply, problem):
    emulator.load([{"text": reply}], seed="bad")
    agent = Agent(model=ADAPTERS["responses"](emulator.url), output_schema=Dish)
    with pytest.raises(StructuredOutputError) as info:
        agent.run("Which soup?")
    error = info.value
    assert problem in str(error) and "output_schema Dish" in str(error)
    assert error.raw == reply and error.output.content == reply and error.output.status == "error"


def test_a_schema_is_a_pydantic_model_class():
    with pytest.raises(ValueError, match="output_schema"):
        Agent(output_schema={"type": "object"})
