from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

# pytester's in-process runs (the harness meta-tests) drop modules first imported inside them; a
# later import then makes new exception classes that httpx2's error mapping no longer recognises
# (a raw httpcore2.ConnectError instead of httpx2.ConnectError). Import the HTTP stack first.
try:
    import httpcore2  # noqa: E402,F401
    import httpx2  # noqa: E402,F401
except ImportError:  # an environment on openai before 3.x (its HTTP stack is httpx) has neither
    pass

try:  # hypothesis's pytest plugin imports hypothesis as each session starts: in a pytester run that
    # import is dropped with the run, and the next run imported it again, every module of it
    # assertion-rewritten (pytest rewrites a plugin's whole package)
    import hypothesis  # noqa: E402,F401
except ImportError:  # the light install has no hypothesis
    pass

try:  # PgVector's driver and its adapters: a query or a value must be of the classes psycopg's own
    # conversion knows, whichever test imported them first
    import pgvector.psycopg  # noqa: E402,F401
    import psycopg.sql  # noqa: E402,F401
    import psycopg.types.json  # noqa: E402,F401
except ImportError:  # the light install has no psycopg
    pass

# the private PostgreSQL the PgVector checks share is the process's: started once, its address kept in
# this module, which must not be dropped and read again as a new one (with a second server)
import rag_core.evals.postgres  # noqa: E402,F401

try:  # lancedb's native module may be initialised only once per process (a second init panics)
    import lancedb  # noqa: E402,F401
except ImportError:  # the light install has no lancedb; its tests are not run there
    pass

from rag_core.evals.emulator.provider import ScriptedProvider
from rag_core import Agent, Knowledge
from rag_core.models import OpenAIChat, OpenAIResponses

SHARED = Path(__file__).resolve().parents[1].parent / "shared"

THAI = [
    ("Pad thai is a stir-fried rice noodle dish with tamarind, fish sauce and peanuts.", "pad_thai"),
    ("Tom kha gai is a coconut milk soup with galangal, lemongrass and chicken.", "tom_kha_gai"),
    ("Green curry paste is made from green chillies, garlic, shallots and lemongrass.", "green_curry"),
]


@pytest.fixture
def knowledge() -> Knowledge:
    kb = Knowledge()
    for text, name in THAI:
        kb.insert(text, name=name, metadata={"source": "ThaiRecipes.pdf"})
    return kb


@pytest.fixture(params=[OpenAIResponses, OpenAIChat], ids=["responses", "chat"])
def model_class(request: pytest.FixtureRequest) -> type:
    return request.param


def scripted_agent(model_class: type, turns: list[dict[str, Any]], asynchronous: bool = False, **options: Any) -> tuple[Agent, ScriptedProvider]:
    """An Agent whose model talks, through the real openai SDK, to an in-process scripted provider."""
    provider = ScriptedProvider(turns)
    client = provider.async_http_client() if asynchronous else provider.http_client()
    model = model_class(id="gpt-5.2", api_key="sk-test", http_client=client, max_retries=0)
    return Agent(model=model, **options), provider


# ---------------------------------------------------------------- PostgreSQL for PgVector tests
@pytest.fixture(scope="session")
def pg_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A PostgreSQL with pgvector (see rag_core/evals/postgres.py): skip without one, fail in CI."""
    from rag_core.evals.postgres import NoPostgres, postgres_url, required

    try:
        return postgres_url(tmp_path_factory.mktemp("pg"))
    except NoPostgres as exc:
        if required():
            pytest.fail(str(exc))
        pytest.skip(str(exc))


# ---------------------------------------------------------------- object storage for LanceDb tests
@pytest.fixture(scope="session")
def s3_bucket() -> dict[str, Any]:
    """An S3 bucket served on loopback by moto's server (the dev extra), for LanceDb on object
    storage: ``uri`` is ``s3://<bucket>/<prefix>`` with these ``storage_options``."""
    pytest.importorskip("moto.server", reason="moto's server (the dev extra) serves the S3 tests")
    import boto3
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    options = {"aws_endpoint": f"http://{host}:{port}", "allow_http": "true", "aws_access_key_id": "testing",
               "aws_secret_access_key": "testing", "aws_region": "us-east-1"}
    boto3.client("s3", endpoint_url=options["aws_endpoint"], aws_access_key_id="testing",
                 aws_secret_access_key="testing", region_name="us-east-1").create_bucket(Bucket="rag-core-tests")
    yield {"bucket": "rag-core-tests", "storage_options": options}
    server.stop()
