"""The OpenAI adapters on every openai SDK release from the oldest tested (1.x, 2.x, 3.x): the seam
where releases differ, checked here on the installed SDK and with stand-ins of the older clients.
CI replays the agent core's golden cases on the oldest 1.x and on a 2.x (``.ci/run``)."""

from __future__ import annotations

import json
import re
import tomllib
import warnings
from pathlib import Path

import pytest

from rag_core.errors import MissingExtraError
from rag_core.providers._http import json_bytes, post_json
from rag_core.providers.openai import OLDEST_OPENAI, openai_sdk

ROOT = Path(__file__).resolve().parents[1]
OLDEST = ".".join(map(str, OLDEST_OPENAI))
BODY = {"model": "gpt-5.2", "input": [{"role": "user", "content": "Pâd thai — with tamarind"}], "temperature": 0.5}


@pytest.mark.parametrize("version", [OLDEST, "1.109.1", "2.0.0", "2.54.0", "3.57.0"])
def test_every_release_from_the_oldest_tested_is_taken(version, monkeypatch):
    """Before, anything below 3.x was refused: a project whose frameworks cap openai below 3 got
    an ImportError from the example case of ``rag-core init``."""
    import openai

    monkeypatch.setattr(openai, "__version__", version)
    assert openai_sdk() is openai


@pytest.mark.parametrize("version", ["1.50.0", "1.108.0", "0.28.1"])
def test_an_older_release_is_named_with_the_extra_that_upgrades_it(version, monkeypatch):
    import openai

    monkeypatch.setattr(openai, "__version__", version)
    with pytest.raises(MissingExtraError, match=rf"needs openai {re.escape(OLDEST)} or later, and openai "
                                                rf"{re.escape(version)} is installed\. Upgrade it with: "
                                                r"pip install -U 'rag-core\[agent\]'"):
        openai_sdk()


def test_the_oldest_tested_release_is_the_agent_extras_floor_and_ci_replays_on_it():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert f"openai>={OLDEST}" in extras["agent"]
    ci = (ROOT / ".ci" / "run").read_text()
    assert "from rag_core.providers.openai import OLDEST_OPENAI" in ci and '"openai==$openai_oldest" "openai>=2,<3"' in ci
    assert 'evals/test_goldens.py -m "not target"' in ci


# ------------------------------------------------------------------ the same bytes on every release


class _Client:
    """A Stainless client's ``post`` as a release has it, recording what it is given."""

    def __init__(self) -> None:
        self.given: dict = {}

    def _record(self, **kwargs):
        self.given = kwargs
        return {"ok": True}


class _Release1(_Client):  # openai 1.x: raw bytes go in ``body``
    def post(self, path, *, cast_to, body=None, options={}, files=None, stream=False, stream_cls=None):
        return self._record(path=path, body=body, options=options, stream=stream)


class _Release3(_Client):  # openai 2.x and 3.x, anthropic: raw bytes go in ``content`` (``body`` warns or refuses)
    def post(self, path, *, cast_to, body=None, content=None, options={}, files=None, stream=False, stream_cls=None):
        return self._record(path=path, body=body, content=content, options=options, stream=stream)


def test_a_body_goes_to_each_release_as_its_json_bytes():
    old, new = _Release1(), _Release3()
    post_json(old, "/responses", BODY, options={"x": 1})
    post_json(new, "/responses", BODY, options={"x": 1})
    assert old.given["body"] == new.given["content"] == json_bytes(BODY) and new.given["body"] is None
    # what current SDKs and httpx 0.28 write (compact, UTF-8); httpx 0.27 wrote ", " and \\u escapes
    assert json_bytes(BODY) == json.dumps(BODY, ensure_ascii=False, separators=(",", ":")).encode()
    assert "Pâd".encode() in json_bytes(BODY)


def _wire(client_kwargs: dict, send) -> list:
    """The requests an OpenAI client of the installed SDK sends, answered in-process."""
    import openai

    library = __import__("httpx2" if int(openai.__version__.split(".")[0]) >= 3 else "httpx")
    seen = []

    def handle(request):
        seen.append(request)
        if request.url.path.endswith("/embeddings"):
            return library.Response(200, json={"object": "list", "model": "m", "data": [
                {"object": "embedding", "index": 0, "embedding": "AACAPwAAAEAAAEBA"}]})
        return library.Response(200, json={"id": "r", "object": "response", "output": []})

    send(http_client=library.Client(transport=library.MockTransport(handle)), **client_kwargs)
    return seen


def test_the_installed_sdk_sends_the_models_bytes_without_a_warning():
    from rag_core.models import OpenAIResponses

    def send(**kwargs):
        model = OpenAIResponses(api_key="sk-test", max_retries=0, **kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # openai 2.x and 3.x warn about bytes in ``body``
            model.invoke(BODY)

    [request] = _wire({}, send)
    assert request.content == json_bytes(BODY)
    assert request.headers["content-type"] == "application/json"


def test_the_embedder_sends_what_the_sdks_own_resource_sends_and_reads_its_vectors():
    import openai

    from rag_core.embedder import OpenAIEmbedder

    def ours(**kwargs):
        assert OpenAIEmbedder(api_key="sk-test", dimensions=3, max_retries=0, **kwargs).embed(["pâd thai"]) == \
            [[1.0, 2.0, 3.0]]

    def theirs(**kwargs):
        client = openai.OpenAI(api_key="sk-test", max_retries=0, **kwargs)
        created = client.embeddings.create(model="text-embedding-3-small", input=["pâd thai"], dimensions=3)
        assert [list(d.embedding) for d in created.data] == [[1.0, 2.0, 3.0]]

    [mine], [sdk] = _wire({}, ours), _wire({}, theirs)
    assert mine.url == sdk.url
    if int(openai.__version__.split(".")[0]) >= 3:  # 1.x and 2.x write input before model
        assert mine.content == sdk.content
    assert json.loads(mine.content) == json.loads(sdk.content)


@pytest.mark.parametrize("deployment", [None, "gpt5-prod"])
def test_azure_posts_where_the_sdks_own_resources_post(deployment):
    """The SDK's Azure client routes chat and embeddings to the model's deployment by reading a body
    handed to it as a dict; ours goes as bytes, so the adapters route it themselves."""
    import openai

    from rag_core.embedder import OpenAIEmbedder
    from rag_core.models import OpenAIChat, OpenAIResponses

    azure = {"azure_endpoint": "https://recipes.openai.azure.com", "api_version": "2025-04-01-preview",
             "api_key": "k" * 32, "max_retries": 0}
    if deployment:
        azure["azure_deployment"] = deployment
    chat = {"model": "gpt5", "messages": [{"role": "user", "content": "hi"}]}

    def ours(**kwargs):
        OpenAIChat(id="gpt5", **azure, **kwargs)._post(chat)
        OpenAIEmbedder(id="embed-deployment", **azure, **kwargs).embed(["pad thai"])
        OpenAIResponses(id="gpt5", **azure, **kwargs)._post({"model": "gpt5", "input": "hi"})

    def theirs(**kwargs):
        client = openai.AzureOpenAI(**{k: v for k, v in azure.items()}, **kwargs)
        client.chat.completions.create(**chat)
        client.embeddings.create(model="embed-deployment", input=["pad thai"])
        client.responses.create(model="gpt5", input="hi")

    assert [r.url for r in _wire({}, ours)] == [r.url for r in _wire({}, theirs)]
