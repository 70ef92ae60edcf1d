"""AWS Bedrock's Converse API end to end with no AWS account: the emulator answers boto3 as the
service would (JSON, event streams, errors), the harness gives boto3 dummy credentials and a region
only where the user has none, recordings hold no key, signature or session token and replay
whatever the signing time, and request bodies validate against botocore's own service model."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

boto3 = pytest.importorskip("boto3")

from botocore.awsrequest import AWSResponse  # noqa: E402
from botocore.config import Config  # noqa: E402
from botocore.eventstream import ChecksumMismatch, EventStreamBuffer  # noqa: E402
from urllib3 import HTTPResponse  # noqa: E402

from rag_core.evals.credentials import detector  # noqa: E402
from rag_core.evals.emulator import bedrock  # noqa: E402
from rag_core.evals.emulator.provider import ScriptedProvider  # noqa: E402
from rag_core.evals.emulator.script import DeterministicIds, ScriptedTurn  # noqa: E402
from rag_core.evals.recording.network import network_blocked  # noqa: E402
from rag_core.evals.recording.provider_env import DUMMY_KEY, DUMMY_REGION, planned, provider_environment  # noqa: E402
from rag_core.evals.recording.recorder import CaseRecorder  # noqa: E402
from rag_core.evals.wire.bedrock import validate_bedrock_body
from rag_core.evals.wire.traffic import validate_request  # noqa: E402
from rag_core.evals.wire import traffic  # noqa: E402

MODEL_ID = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
TOOL_CONFIG = {"tools": [{"toolSpec": {"name": "lookup_recipe", "description": "Look up how a Thai dish is made.",
                                       "inputSchema": {"json": {"type": "object",
                                                                "properties": {"dish": {"type": "string"}},
                                                                "required": ["dish"]}}}}]}
QUESTION = {"role": "user", "content": [{"text": "How do I make pad thai?"}]}
TOOL_TURN = {"tool_calls": [{"name": "lookup_recipe", "arguments": {"dish": "pad thai"}}]}
ANSWER = "Soak rice noodles, then fry them with tamarind."
# planted in the client: none of it may reach a file (AWS's documented example shapes, not live keys)
ACCESS_KEY = "AKIAIOSFODNN7EXAMPLE"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
SESSION_TOKEN = "IQoJb3JpZ2luX2VjEXAMPLEsessionTOKEN0123456789abcdefABCDEF"
SINGLE_ATTEMPT = Config(retries={"total_max_attempts": 1, "mode": "standard"})


def _client(**keys: str) -> Any:
    keys = keys or {"aws_access_key_id": "k", "aws_secret_access_key": "s"}
    return boto3.client("bedrock-runtime", region_name="us-east-1", config=SINGLE_ATTEMPT, **keys)


def _served_by(provider: ScriptedProvider, client: Any) -> Any:
    """``client`` with every request answered by ``provider`` in-process (botocore's before-send
    hook takes a response in place of sending), for tests that need no cassette."""
    def send(request: Any, **_: Any) -> AWSResponse:
        reply = provider.reply(request.method, urlsplit(request.url).path, request.body)
        raw = HTTPResponse(body=io.BytesIO(reply.body), status=reply.status, preload_content=False)
        return AWSResponse(request.url, reply.status, {"content-type": reply.content_type, **reply.headers}, raw)

    client.meta.events.register("before-send.bedrock-runtime.*", send)
    return client


def _tool_round_trip(client: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    messages: list[dict[str, Any]] = [QUESTION]
    first = client.converse(modelId=MODEL_ID, messages=messages, toolConfig=TOOL_CONFIG)
    use = first["output"]["message"]["content"][0]["toolUse"]
    messages += [first["output"]["message"], {"role": "user", "content": [
        {"toolResult": {"toolUseId": use["toolUseId"], "content": [{"text": "Soak."}]}}]}]
    return first, client.converse(modelId=MODEL_ID, messages=messages, toolConfig=TOOL_CONFIG)


# --- the emulator speaks Converse ---------------------------------------------------------------

def test_boto3_reads_a_tool_round_trip_from_the_emulator():
    provider = ScriptedProvider([TOOL_TURN, {"text": ANSWER}], seed="bedrock")
    first, second = _tool_round_trip(_served_by(provider, _client()))
    use = first["output"]["message"]["content"][0]["toolUse"]
    assert first["stopReason"] == "tool_use" and use["name"] == "lookup_recipe" and use["input"] == {"dish": "pad thai"}
    assert use["toolUseId"].startswith("tooluse_")
    assert second["stopReason"] == "end_turn" and second["output"]["message"]["content"] == [{"text": ANSWER}]
    usage = second["usage"]
    assert usage["inputTokens"] > 0 and usage["outputTokens"] > 0
    assert usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"]
    assert second["metrics"]["latencyMs"] == bedrock.LATENCY_MS
    assert len(second["ResponseMetadata"]["RequestId"].split("-")) == 5  # botocore read x-amzn-RequestId
    # the model id arrives percent-encoded in the path, the tool result in the second request
    assert provider.paths[0].endswith("/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse")
    assert bedrock.model_id(provider.paths[0]) == MODEL_ID
    assert provider.requests[1]["messages"][-1]["content"][0]["toolResult"]["toolUseId"] == use["toolUseId"]


def test_converse_stream_is_read_by_boto3_as_the_same_answer():
    provider = ScriptedProvider([{"text": "Looking it up.", **TOOL_TURN}], seed="bedrock")
    response = _served_by(provider, _client()).converse_stream(modelId=MODEL_ID, messages=[QUESTION],
                                                               toolConfig=TOOL_CONFIG)
    events = list(response["stream"])
    kinds = [next(iter(event)) for event in events]
    assert kinds[0] == "messageStart" and kinds[-2:] == ["messageStop", "metadata"]
    text = "".join(e["contentBlockDelta"]["delta"].get("text", "") for e in events if "contentBlockDelta" in e)
    arguments = "".join(e["contentBlockDelta"]["delta"].get("toolUse", {}).get("input", "")
                        for e in events if "contentBlockDelta" in e)
    start = next(e["contentBlockStart"] for e in events if "contentBlockStart" in e)
    assert text == "Looking it up." and arguments == '{"dish":"pad thai"}'
    assert start["contentBlockIndex"] == 1 and start["start"]["toolUse"]["name"] == "lookup_recipe"
    assert events[-2]["messageStop"]["stopReason"] == "tool_use"
    assert events[-1]["metadata"]["usage"]["totalTokens"] > 0


def test_event_stream_frames_carry_valid_checksums():
    status, content_type, body, _ = bedrock.answer(ScriptedTurn(text="Soak the noodles."), "/model/m/converse-stream",
                                                   {"messages": [QUESTION]}, DeterministicIds("frames"))
    assert (status, content_type) == (200, "application/vnd.amazon.eventstream")
    buffer = EventStreamBuffer()
    buffer.add_data(body)
    messages = list(buffer)
    assert [m.headers[":event-type"] for m in messages] == [
        "messageStart", "contentBlockDelta", "contentBlockDelta", "contentBlockDelta", "contentBlockStop",
        "messageStop", "metadata"]
    assert all(m.headers[":message-type"] == "event" and m.headers[":content-type"] == "application/json"
               for m in messages)
    corrupt = bytearray(body)
    corrupt[20] ^= 0xFF  # inside the first message's headers: its message checksum no longer holds
    buffer = EventStreamBuffer()
    buffer.add_data(bytes(corrupt))
    with pytest.raises(ChecksumMismatch):
        list(buffer)


@pytest.mark.parametrize(("scripted", "exception", "status"), [
    ({"status": 429, "message": "Too many requests, please wait before trying again."}, "ThrottlingException", 429),
    ({"status": 400, "message": "The model returned the following errors: bad input"}, "ValidationException", 400),
    ({"status": 424, "message": "The model failed.", "type": "ModelErrorException"}, "ModelErrorException", 424),
])
def test_a_scripted_error_is_bedrocks_own_error(scripted, exception, status):
    client = _served_by(ScriptedProvider([scripted], seed="bedrock"), _client())
    with pytest.raises(getattr(client.exceptions, exception)) as raised:
        client.converse(modelId=MODEL_ID, messages=[QUESTION])
    error = raised.value.response
    assert error["Error"] == {"Code": exception, "Message": scripted["message"]}
    assert error["ResponseMetadata"]["HTTPStatusCode"] == status


def test_a_scripted_error_has_bedrocks_wire_shape():
    provider = ScriptedProvider([{"status": 429, "message": "Slow down."}], seed="bedrock")
    reply = provider.reply("POST", "/model/m/converse", b'{"messages": []}')
    assert reply.status == 429 and reply.body == b'{"message": "Slow down."}'
    assert reply.headers["x-amzn-ErrorType"].split(":", 1)[0] == "ThrottlingException"


def test_only_converse_paths_use_up_the_script():
    provider = ScriptedProvider([{"text": ANSWER}], seed="bedrock")
    assert provider.reply("POST", "/model/m/invoke", b"{}").status == 404  # InvokeModel: not emulated
    assert provider.unused == 1
    assert provider.reply("POST", "/model/m/converse", b'{"messages": []}').status == 200
    assert provider.unused == 0


# --- the environment: dummies only where the user has nothing -----------------------------------

def test_boto3_gets_a_dummy_key_pair_and_region_when_the_environment_has_none():
    changes = planned({}, "/s")
    assert changes["AWS_ACCESS_KEY_ID"] == DUMMY_KEY and changes["AWS_SECRET_ACCESS_KEY"] == DUMMY_KEY
    assert changes["AWS_DEFAULT_REGION"] == DUMMY_REGION and changes["AWS_REGION"] == DUMMY_REGION
    assert changes["AWS_EC2_METADATA_DISABLED"] == "true"


@pytest.mark.parametrize("user", [
    {"AWS_ACCESS_KEY_ID": "AKIAUSER", "AWS_SECRET_ACCESS_KEY": "user-secret"},
    {"AWS_PROFILE": "work"},
    {"AWS_BEARER_TOKEN_BEDROCK": "bedrock-api-key"},
    {"AWS_SECRET_ACCESS_KEY": "user-secret"},  # half a pair: still the user's, never replaced
])
def test_the_users_own_aws_credentials_are_never_replaced(user):
    changes = planned(user, "/s")
    assert not set(changes) & set(user)
    if set(user) & {"AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK"}:
        assert "AWS_ACCESS_KEY_ID" not in changes and "AWS_SECRET_ACCESS_KEY" not in changes


@pytest.mark.parametrize("user", [{"AWS_REGION": "eu-west-1"}, {"AWS_DEFAULT_REGION": "eu-west-1"},
                                  {"AWS_PROFILE": "work"}])  # a named profile's config has its region
def test_the_users_region_is_never_replaced(user):
    changes = planned(user, "/s")
    assert "AWS_REGION" not in changes and "AWS_DEFAULT_REGION" not in changes


@pytest.fixture
def aws_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder whose ~/.aws holds a default profile with a planted key, and a profile
    without credentials; no AWS variable set."""
    for variable in [v for v in os.environ if v.startswith("AWS_") and v != "AWS_CA_BUNDLE"]:
        monkeypatch.delenv(variable)
    (tmp_path / ".aws").mkdir()
    (tmp_path / ".aws" / "credentials").write_text(f"[default]\naws_access_key_id = {ACCESS_KEY}\n"
                                                   f"aws_secret_access_key = {SECRET_KEY}\n")
    (tmp_path / ".aws" / "config").write_text("[profile no-credentials]\nregion = eu-west-1\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def test_in_a_case_boto3_signs_with_the_dummy_pair_and_never_consults_aws_files(aws_home):
    with provider_environment(), network_blocked("bedrock") as attempts:
        session = boto3.Session()
        credentials = session.get_credentials()
        region = session.region_name
    # the environment provider answered first: ~/.aws/credentials, SSO and the metadata endpoint were not asked
    assert credentials.method == "env" and credentials.access_key == DUMMY_KEY
    assert region == DUMMY_REGION and attempts == []


def test_a_profile_without_credentials_never_reaches_the_metadata_endpoint(aws_home, monkeypatch):
    monkeypatch.setenv("AWS_PROFILE", "no-credentials")
    with network_blocked("bedrock") as unguarded:
        assert boto3.Session().get_credentials() is None
    # without the switch botocore asks 169.254.169.254 (the guard refuses it), with it nothing leaves
    assert any("169.254.169.254" in str(attempt) for attempt in unguarded)
    with provider_environment(), network_blocked("bedrock") as attempts:
        assert boto3.Session().get_credentials() is None
    assert attempts == []


# --- recording: no AWS secret on disk, replay independent of the signing time -------------------

def _record(path: Path, script: list[dict[str, Any]], mode: str = "once", **keys: str) -> Any:
    """Run the tool round trip under a recorder (answered by the emulator when recording)."""
    recorder = CaseRecorder(path, mode)
    client = _client(**(keys or {"aws_access_key_id": ACCESS_KEY, "aws_secret_access_key": SECRET_KEY,
                                 "aws_session_token": SESSION_TOKEN}))
    with recorder.use("test", emulator=ScriptedProvider(script, seed="bedrock")) as replay:
        _tool_round_trip(client)
    recorder.commit()
    return replay


def test_a_recorded_converse_call_holds_no_aws_secret_signature_or_session_token(tmp_path, monkeypatch):
    cassette = tmp_path / "bedrock.yaml"
    replay = _record(cassette, [TOOL_TURN, {"text": ANSWER}])
    assert [status for _, _, status in replay.recorded] == [200, 200]
    text = cassette.read_text()
    for secret in (ACCESS_KEY, SECRET_KEY, SESSION_TOKEN, "AWS4-HMAC-SHA256", "Signature=", "Credential="):
        assert secret not in text
    headers = {name.lower() for i in yaml.safe_load(text)["interactions"] for name in i["request"]["headers"]}
    assert not headers & {"authorization", "x-amz-security-token", "x-amz-date", "amz-sdk-invocation-id",
                          "amz-sdk-request"}
    assert "bedrock-runtime.us-east-1.amazonaws.com/model/" in text


def test_replay_matches_whatever_the_keys_signing_time_and_invocation_id(tmp_path, monkeypatch):
    cassette = tmp_path / "bedrock.yaml"
    _record(cassette, [TOOL_TURN, {"text": ANSWER}])
    recorded = cassette.read_bytes()
    # other keys sign other headers at another time, with new invocation ids: the cassette still answers
    replay = _record(cassette, [], mode="none", aws_access_key_id="AKIAOTHER", aws_secret_access_key="other")
    assert len(replay.pairs) == 2 and all(sent == held for _, sent, held in replay.pairs) and replay.unused == 0
    assert cassette.read_bytes() == recorded


def test_recording_again_gives_the_same_cassette(tmp_path, monkeypatch):
    """Other keys, another signing time, new invocation ids: the same bytes (botocore's User-Agent,
    which names the kernel and lists features in a per-process order, is not kept)."""
    first, second = tmp_path / "first.yaml", tmp_path / "second.yaml"
    _record(first, [TOOL_TURN, {"text": ANSWER}])
    _record(second, [TOOL_TURN, {"text": ANSWER}], aws_access_key_id="AKIAOTHER", aws_secret_access_key="other")
    assert first.read_text() == second.read_text() and "User-Agent" not in first.read_text()


def test_a_recorded_converse_stream_replays_the_same_events(tmp_path, monkeypatch):
    """The binary event stream is kept byte for byte (base64 in the cassette) and read again on replay."""
    cassette = tmp_path / "stream.yaml"
    seen = []
    for mode, script in (("once", [{"text": "Looking it up.", **TOOL_TURN}]), ("none", [])):
        recorder = CaseRecorder(cassette, mode)
        with recorder.use("test", emulator=ScriptedProvider(script, seed="bedrock")):
            response = _client().converse_stream(modelId=MODEL_ID, messages=[QUESTION], toolConfig=TOOL_CONFIG)
            seen.append(list(response["stream"]))
        recorder.commit()
    assert seen[0] == seen[1] and seen[0][-2] == {"messageStop": {"stopReason": "tool_use"}}
    assert "base64:" in cassette.read_text()


@pytest.mark.parametrize("headers", ["kept", "stripped"])
def test_a_recorded_converse_stream_is_read_for_its_tool_calls_and_usage(tmp_path, headers):
    """The harness reads the event stream by its API (the path), as botocore does: a cassette
    whose response headers were stripped, as other projects store recordings, reads the same."""
    cassette = tmp_path / "stream.yaml"
    recorder = CaseRecorder(cassette, "once")
    with recorder.use("test", emulator=ScriptedProvider([{"text": "Looking it up.", **TOOL_TURN}], seed="bedrock")):
        _client().converse_stream(modelId=MODEL_ID, messages=[QUESTION], toolConfig=TOOL_CONFIG)
    recorder.commit()
    if headers == "stripped":
        data = yaml.safe_load(cassette.read_text())
        data["interactions"][0]["response"]["headers"] = {}
        cassette.write_text(yaml.safe_dump(data, sort_keys=False))
    recorder = CaseRecorder(cassette, "none")
    with recorder.use("test") as replay:
        events = list(_client().converse_stream(modelId=MODEL_ID, messages=[QUESTION],
                                                toolConfig=TOOL_CONFIG)["stream"])
    seen = traffic.fields_of(replay.exchanges, [0])
    assert seen["tool_calls"] == {"calls": [{"name": "lookup_recipe", "arguments": {"dish": "pad thai"}}]}
    assert seen["final_text"] == "Looking it up."
    metadata = events[-1]["metadata"]["usage"]
    assert seen["usage"] == {"input_tokens": metadata["inputTokens"], "output_tokens": metadata["outputTokens"],
                             "total_tokens": metadata["totalTokens"]}


def test_presigned_url_credentials_are_scrubbed():
    s3 = boto3.client("s3", region_name="us-east-1", aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY,
                      aws_session_token=SESSION_TOKEN, config=Config(signature_version="s3v4"))
    url = s3.generate_presigned_url("get_object", Params={"Bucket": "recipes", "Key": "pad-thai.txt"})
    assert "X-Amz-Signature=" in url and "X-Amz-Credential=" in url  # what botocore put there
    scrubbed = detector().scrub_url(url)
    for secret in (ACCESS_KEY, SESSION_TOKEN, "X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token"):
        assert secret not in scrubbed
    assert "X-Amz-Expires=" in scrubbed


def test_the_recorder_writes_botocores_bytes_header_values(tmp_path):
    """botocore hands vcrpy its header values as bytes; the cassette keeps text."""
    _record(tmp_path / "bedrock.yaml", [TOOL_TURN, {"text": ANSWER}])
    assert "Content-Type:\n      - application/json" in (tmp_path / "bedrock.yaml").read_text()


def test_a_recorded_bedrock_error_replays_as_the_same_exception(tmp_path, monkeypatch):
    cassette = tmp_path / "throttled.yaml"
    throttled = {"status": 429, "message": "Too many requests, please wait before trying again."}
    for mode, script in (("once", [throttled]), ("none", [])):
        recorder = CaseRecorder(cassette, mode)
        client = _client()
        with recorder.use("test", emulator=ScriptedProvider(script, seed="bedrock")):
            with pytest.raises(client.exceptions.ClientError) as raised:
                client.converse(modelId=MODEL_ID, messages=[QUESTION])
        recorder.commit()
        assert raised.value.response["Error"]["Code"] == "ThrottlingException", mode


# --- request bodies against botocore's service model -------------------------------------------

def test_the_golden_cases_bodies_validate_against_botocores_model():
    golden = Path(__file__).resolve().parents[1] / "fixtures" / "goldens" / "bedrock_converse.golden.yaml"
    requests = yaml.safe_load(golden.read_text())["requests"]
    assert len(requests) == 2
    for body in requests:
        validate_request(f"/model/{MODEL_ID.replace(':', '%3A')}/converse", body)
    validate_request("/model/m/converse-stream", requests[1])


@pytest.mark.parametrize(("body", "named"), [
    ({"messages": [QUESTION], "maxTokens": 10}, 'Unknown parameter in input: "maxTokens"'),
    ({"messages": [{"role": "user", "content": [{"text": "a", "cachePoint": {"type": "default"}}]}]},
     "tagged union"),
    ({"messages": [QUESTION], "inferenceConfig": {"maxTokens": "10"}}, "inferenceConfig.maxTokens"),
    ({"messages": [{"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": "not base64!"}}}]}]},
     "messages[0].content[0].image.source.bytes"),
    ({"modelId": MODEL_ID, "messages": [QUESTION]}, "travels in the path"),
    ({"messages": [{"role": "user", "content": [{"toolResult": {"content": [{"text": "x"}]}}]}]}, "toolUseId"),
])
def test_an_invalid_converse_body_is_named(body, named):
    with pytest.raises(ValueError) as raised:
        validate_bedrock_body(body)
    assert named in str(raised.value)


def test_blobs_are_checked_as_the_bytes_they_encode():
    image = {"image": {"format": "png", "source": {"bytes": "iVBORw0KGgo="}}}
    validate_bedrock_body({"messages": [{"role": "user", "content": [{"text": "What is this dish?"}, image]}]})
