"""Bedrock's answers as the harness reads them (``wire/bedrock.py``), against botocore's own parsing.

Each answer (Converse JSON, ConverseStream event stream, an error) is read twice: by boto3, as a
program gets it through ``client.converse`` / ``client.converse_stream`` (botocore's parser
behind its HTTP stack), and by the harness, from the bytes a cassette holds (``cassette_traffic.exchange_of``
then ``traffic.answer``). The two agree on the text, the tool calls (a server tool's marked, with
its result), the usage, the stop reason and the error, with the response headers as sent and
with them stripped, as recordings made by other projects store them. The answers come from the
emulator, from event streams built in the shapes real Bedrock traffic has (padding fields, a
code interpreter's blocks, reasoning, exception events), and from the real recordings in
``../shared/provider-recordings/bedrock/`` where that folder holds some."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Any

import pytest
import yaml

boto3 = pytest.importorskip("boto3")

from botocore.awsrequest import AWSResponse  # noqa: E402
from botocore.config import Config  # noqa: E402
from botocore.exceptions import ClientError  # noqa: E402
from urllib3 import HTTPResponse  # noqa: E402
from vcr.request import Request  # noqa: E402

from rag_core.evals.emulator import bedrock  # noqa: E402
from rag_core.evals.emulator.provider import ScriptedProvider  # noqa: E402
from rag_core.evals.wire import bedrock as wire_bedrock, traffic  # noqa: E402
from rag_core.evals.wire.exchange import Answer, Exchange  # noqa: E402
from rag_core.evals.golden.case import ToolCallsExpect  # noqa: E402
from rag_core.evals.golden.checks.snapshot import check_tool_calls  # noqa: E402
from rag_core.evals.recording.recorder import CaseRecorder  # noqa: E402
from rag_core.evals.recording.cassette_traffic import exchange_of  # noqa: E402

from tests.recordings import RECORDINGS  # noqa: E402

MODEL_ID = "us.amazon.nova-2-lite-v1:0"
URI = "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.amazon.nova-2-lite-v1%3A0/converse"
QUESTION = {"role": "user", "content": [{"text": "What is 1234 * 5678?"}]}
SINGLE_ATTEMPT = Config(retries={"total_max_attempts": 1, "mode": "standard"})


# --- what boto3 makes of an answer --------------------------------------------------------------

@dataclass
class Read:
    """One answer as a program reads it: the assistant's content blocks, stop reason, usage, error."""

    content: list[dict[str, Any]]
    stop_reason: str | None
    usage: dict[str, int]
    error: tuple[str, str] | None


def _served(status: int, headers: dict[str, str], body: bytes) -> Any:
    """A bedrock-runtime client whose every request gets this answer (botocore's before-send hook
    takes a response in place of sending)."""
    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="k",
                          aws_secret_access_key="s", config=SINGLE_ATTEMPT)

    def send(request: Any, **_: Any) -> AWSResponse:
        raw = HTTPResponse(body=io.BytesIO(body), status=status, preload_content=False)
        return AWSResponse(request.url, status, headers, raw)

    client.meta.events.register("before-send.bedrock-runtime.*", send)
    return client


def _error(exc: ClientError) -> tuple[str, str]:
    return exc.response["Error"].get("Code", ""), exc.response["Error"].get("Message", "")


def boto3_converse(status: int, headers: dict[str, str], body: bytes) -> Read:
    try:
        response = _served(status, headers, body).converse(modelId=MODEL_ID, messages=[QUESTION])
    except ClientError as exc:
        return Read([], None, {}, _error(exc))
    return Read(response["output"]["message"]["content"], response["stopReason"], response.get("usage", {}), None)


def boto3_converse_stream(status: int, headers: dict[str, str], body: bytes) -> Read:
    """The stream's events gathered as the service model describes them: a block opened by
    ``contentBlockStart`` (a tool use, a tool result) or by its first delta (text, reasoning), grown
    by its deltas; the stop reason from ``messageStop``, usage from ``metadata``."""
    blocks: dict[int, dict[str, Any]] = {}
    inputs: dict[int, str] = {}
    stop, usage, error = None, {}, None
    try:
        for event in _served(status, headers, body).converse_stream(modelId=MODEL_ID, messages=[QUESTION])["stream"]:
            [(kind, data)] = event.items()
            index = data.get("contentBlockIndex")
            if kind == "contentBlockStart":
                [(block_kind, start)] = data["start"].items()
                blocks[index] = {block_kind: {**start, **({"content": []} if block_kind == "toolResult" else {})}}
            elif kind == "contentBlockDelta":
                [(delta_kind, delta)] = data["delta"].items()
                if delta_kind == "text":
                    blocks[index] = {"text": blocks.get(index, {}).get("text", "") + delta}
                elif delta_kind == "toolUse":
                    inputs[index] = inputs.get(index, "") + delta["input"]
                elif delta_kind == "toolResult":
                    blocks[index]["toolResult"]["content"] += delta
                else:  # reasoning, citations: not the answer
                    blocks.setdefault(index, {delta_kind: {}})
            elif kind == "messageStop":
                stop = data["stopReason"]
            elif kind == "metadata":
                usage = data["usage"]
    except ClientError as exc:  # an HTTP error, or an exception event (EventStreamError)
        error = _error(exc)
    for index, raw in inputs.items():
        blocks[index]["toolUse"]["input"] = json.loads(raw) if raw else {}
    return Read([blocks[i] for i in sorted(blocks)], stop, usage, error)


def expected_answer(read: Read) -> Answer | None:
    """The golden's reading of what boto3 returned: text blocks joined; each ``toolUse`` a call,
    a server tool's marked ``server_tool_use`` and given the ``toolResult`` that answered it;
    input tokens with cache reads and writes. None for an error."""
    if read.error is not None:
        return None
    texts = [block["text"] for block in read.content if "text" in block]
    results = {b["toolResult"]["toolUseId"]: b["toolResult"] for b in read.content if "toolResult" in b}
    calls = []
    for block in read.content:
        if "toolUse" in block:
            use = block["toolUse"]
            call = {"name": use["name"], "arguments": use.get("input", {})}
            if use.get("type") == "server_tool_use":
                result = {k: v for k, v in results[use["toolUseId"]].items() if k != "toolUseId"}
                call.update(type="server_tool_use", result=result)
            calls.append(call)
    usage = {}
    if read.usage:
        inputs = read.usage["inputTokens"] + read.usage.get("cacheReadInputTokens", 0) + read.usage.get(
            "cacheWriteInputTokens", 0)
        usage = {"input_tokens": inputs, "output_tokens": read.usage["outputTokens"],
                 "total_tokens": read.usage["totalTokens"]}
    return Answer("".join(texts) if texts else None, calls, usage)


# --- what the harness makes of it ---------------------------------------------------------------

def harness_exchange(path: str, status: int, headers: dict[str, str], body: bytes) -> Exchange:
    """The exchange the recorder hands the wire reader for one recorded interaction."""
    request = Request("POST", URI.rsplit("/model/", 1)[0] + path, json.dumps({"messages": [QUESTION]}), {})
    response = {"status": {"code": status, "message": ""}, "headers": {k: [v] for k, v in headers.items()},
                "body": {"string": body}}
    return exchange_of(request, response)


STREAM_PATH = "/model/us.amazon.nova-2-lite-v1%3A0/converse-stream"
JSON_PATH = "/model/us.amazon.nova-2-lite-v1%3A0/converse"


def assert_agree_on_stream(status: int, headers: dict[str, str], body: bytes) -> Read:
    """The harness and boto3 read one ConverseStream answer alike, headers kept and stripped."""
    for sent in (headers, {}):
        seen = boto3_converse_stream(status, sent, body)
        exchange = harness_exchange(STREAM_PATH, status, sent, body)
        assert traffic.answer(exchange) == expected_answer(seen), sent
        if status < 400:
            read = wire_bedrock.converse_stream(body)
            assert read.error == seen.error, sent
            assert read.response.get("stopReason") == seen.stop_reason, sent
    return seen


def assert_agree_on_json(status: int, headers: dict[str, str], body: bytes) -> Read:
    for sent in (headers, {}):
        seen = boto3_converse(status, sent, body)
        assert traffic.answer(harness_exchange(JSON_PATH, status, sent, body)) == expected_answer(seen), sent
    return seen


# --- event streams in the shapes of real traffic ------------------------------------------------

EVENT_STREAM = {"content-type": "application/vnd.amazon.eventstream"}
JSON = {"content-type": "application/json"}


def event(kind: str, payload: dict[str, Any]) -> bytes:
    # real events carry a "p" field of random length, padding that hides the payload's size
    return bedrock.event_stream_message({":event-type": kind, ":content-type": "application/json",
                                         ":message-type": "event"},
                                        json.dumps({**payload, "p": "abcdefghijk"}).encode())


def exception(kind: str, payload: dict[str, Any]) -> bytes:
    return bedrock.event_stream_message({":exception-type": kind, ":content-type": "application/json",
                                         ":message-type": "exception"}, json.dumps(payload).encode())


def start(index: int, **block: Any) -> bytes:
    return event("contentBlockStart", {"contentBlockIndex": index, "start": block})


def delta(index: int, **part: Any) -> bytes:
    return event("contentBlockDelta", {"contentBlockIndex": index, "delta": part})


def stop(index: int) -> bytes:
    return event("contentBlockStop", {"contentBlockIndex": index})


INTERPRETER_USE = {"toolUseId": "tooluse_interp", "name": "nova_code_interpreter", "type": "server_tool_use"}
INTERPRETER_RESULT = {"toolUseId": "tooluse_interp", "type": "nova_code_interpreter_result", "status": "success"}
INTERPRETER_OUTPUT = [{"json": {"stdOut": "7006652", "stdErr": "", "exitCode": 0, "isError": False}}]
FINAL_RESULT = {"toolUseId": "tooluse_final", "name": "final_result", "type": "tool_use"}

# a code interpreter's call and result, then a client tool's call (Nova with systemTool)
CODE_INTERPRETER_STREAM = b"".join([
    event("messageStart", {"role": "assistant"}),
    start(0, toolUse=INTERPRETER_USE),
    delta(0, toolUse={"input": '{"snippet":'}), delta(0, toolUse={"input": '"1234 * 5678"}'}), stop(0),
    start(1, toolResult=INTERPRETER_RESULT), delta(1, toolResult=INTERPRETER_OUTPUT), stop(1),
    start(2, toolUse=FINAL_RESULT), delta(2, toolUse={"input": '{"result":7006652.0}'}), stop(2),
    event("messageStop", {"stopReason": "tool_use"}),
    event("metadata", {"usage": {"inputTokens": 1002, "outputTokens": 59, "serverToolUsage": {}, "totalTokens": 1061},
                       "metrics": {"latencyMs": 1732}}),
])
# Claude thinking first (its reasoning is not the answer), then text; a prompt cache read and written
REASONING_STREAM = b"".join([
    event("messageStart", {"role": "assistant"}),
    delta(0, reasoningContent={"text": "The user wants a product."}), delta(0, reasoningContent={"signature": "c2ln"}),
    stop(0),
    delta(1, text="1234 * 5678"), delta(1, text=" = 7006652."), stop(1),
    event("messageStop", {"stopReason": "end_turn"}),
    event("metadata", {"usage": {"inputTokens": 12, "outputTokens": 40, "totalTokens": 4052,
                                 "cacheReadInputTokens": 2000, "cacheWriteInputTokens": 2000},
                       "metrics": {"latencyMs": 900}}),
])
# the model failed part way: botocore raises ModelStreamErrorException where the event comes
MODEL_STREAM_ERROR = b"".join([
    event("messageStart", {"role": "assistant"}), delta(0, text="1234 * 5678 is"),
    exception("modelStreamErrorException", {"message": "The model stopped.", "originalStatusCode": 424,
                                            "originalMessage": "overloaded"}),
])
THROTTLED_IN_STREAM = event("messageStart", {"role": "assistant"}) + exception(
    "throttlingException", {"message": "Too many tokens, please wait before trying again."})
# an ``error`` message (not a modelled exception): botocore names its :error-code
STREAM_ERROR_MESSAGE = event("messageStart", {"role": "assistant"}) + bedrock.event_stream_message(
    {":message-type": "error", ":error-code": "InternalFailure", ":error-message": "Something broke."}, b"")


@pytest.mark.parametrize(("body", "calls", "error"), [
    (CODE_INTERPRETER_STREAM, 2, None),
    (REASONING_STREAM, 0, None),
    (MODEL_STREAM_ERROR, 0, ("modelStreamErrorException", "The model stopped.")),
    (THROTTLED_IN_STREAM, 0, ("throttlingException", "Too many tokens, please wait before trying again.")),
    (STREAM_ERROR_MESSAGE, 0, ("InternalFailure", "Something broke.")),
], ids=["code_interpreter", "reasoning_and_cache", "model_stream_error", "throttled_in_stream", "error_message"])
def test_converse_stream_is_read_as_botocore_reads_it(body, calls, error):
    seen = assert_agree_on_stream(200, EVENT_STREAM, body)
    assert seen.error == error and len([b for b in seen.content if "toolUse" in b]) == calls


def test_a_server_tools_call_and_result_are_kept_marked_in_the_tool_calls():
    read = traffic.answer(harness_exchange(STREAM_PATH, 200, {}, CODE_INTERPRETER_STREAM))
    assert read is not None and read.tool_calls == [
        {"name": "nova_code_interpreter", "arguments": {"snippet": "1234 * 5678"}, "type": "server_tool_use",
         "result": {"type": "nova_code_interpreter_result", "status": "success", "content": INTERPRETER_OUTPUT}},
        {"name": "final_result", "arguments": {"result": 7006652.0}}]
    assert read.usage == {"input_tokens": 1002, "output_tokens": 59, "total_tokens": 1061}
    assert wire_bedrock.converse_stream(CODE_INTERPRETER_STREAM).response["stopReason"] == "tool_use"


def test_reasoning_is_not_the_answer_and_cache_tokens_are_input():
    read = traffic.answer(harness_exchange(STREAM_PATH, 200, EVENT_STREAM, REASONING_STREAM))
    assert read == Answer("1234 * 5678 = 7006652.", [],
                               {"input_tokens": 4012, "output_tokens": 40, "total_tokens": 4052})


def test_a_stream_ended_by_an_exception_is_an_error_answer():
    """What the program got before the exception is not an answer: botocore raised in its loop."""
    assert wire_bedrock.converse_stream(MODEL_STREAM_ERROR).response["output"]["message"]["content"] == [
        {"text": "1234 * 5678 is"}]
    assert traffic.answer(harness_exchange(STREAM_PATH, 200, EVENT_STREAM, MODEL_STREAM_ERROR)) is None


def test_a_body_that_is_not_an_event_stream_is_no_answer():
    body = json.dumps({"output": {"message": {"role": "assistant", "content": [{"text": "x" * 40}]}}}).encode()
    assert wire_bedrock.converse_stream(body).error[0] == "unreadable"
    assert traffic.answer(harness_exchange(STREAM_PATH, 200, {}, body)) is None


# the same code interpreter round as a Converse JSON answer
CODE_INTERPRETER_JSON = json.dumps({
    "output": {"message": {"role": "assistant", "content": [
        {"toolUse": {**INTERPRETER_USE, "input": {"snippet": "1234 * 5678"}}},
        {"toolResult": {**INTERPRETER_RESULT, "content": INTERPRETER_OUTPUT}},
        {"toolUse": {**FINAL_RESULT, "input": {"result": 7006652.0}}}]}},
    "stopReason": "tool_use", "metrics": {"latencyMs": 1725},
    "usage": {"inputTokens": 1002, "outputTokens": 59, "serverToolUsage": {}, "totalTokens": 1061}}).encode()


def test_converse_json_is_read_as_botocore_reads_it():
    seen = assert_agree_on_json(200, JSON, CODE_INTERPRETER_JSON)
    assert seen.stop_reason == "tool_use" and len(seen.content) == 3


def test_the_stream_gathers_into_the_message_botocore_parses_from_the_json_answer():
    gathered = wire_bedrock.converse_stream(CODE_INTERPRETER_STREAM).response
    assert gathered["output"]["message"]["content"] == boto3_converse(200, JSON, CODE_INTERPRETER_JSON).content
    assert traffic.answer(harness_exchange(STREAM_PATH, 200, {}, CODE_INTERPRETER_STREAM)) == \
        traffic.answer(harness_exchange(JSON_PATH, 200, {}, CODE_INTERPRETER_JSON))


@pytest.mark.parametrize("path", [STREAM_PATH, JSON_PATH])
def test_an_error_status_is_no_answer_as_botocore_raises(path):
    body = json.dumps({"message": "Too many requests, please wait before trying again."}).encode()
    headers = {**JSON, "x-amzn-ErrorType": "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"}
    seen = (assert_agree_on_stream if path == STREAM_PATH else assert_agree_on_json)(429, headers, body)
    assert seen.error is not None


# --- the emulator's answers ---------------------------------------------------------------------

SCRIPTS = {
    "text": {"text": "1234 * 5678 = 7006652."},
    "tool_call": {"tool_calls": [{"name": "multiply", "arguments": {"a": 1234, "b": 5678}}]},
    "text_and_tool_calls": {"text": "Let me work it out.", "tool_calls": [
        {"name": "multiply", "arguments": {"a": 1234, "b": 5678}}, {"name": "check", "arguments": {}}]},
    "throttled": {"status": 429, "message": "Too many requests, please wait before trying again."},
    "model_error": {"status": 424, "message": "The model failed.", "type": "ModelErrorException"},
}


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_the_emulators_answers_are_read_as_botocore_reads_them(script):
    """Each scripted turn, as a stream and as JSON, headers kept and stripped; the stream gathers
    into the very message botocore parses from the JSON answer of the same turn."""
    answers = {}
    for path, agree in ((STREAM_PATH, assert_agree_on_stream), (JSON_PATH, assert_agree_on_json)):
        reply = ScriptedProvider([SCRIPTS[script]], seed="reading").reply("POST", path, json.dumps(
            {"messages": [QUESTION]}).encode())
        seen = agree(reply.status, {"content-type": reply.content_type, **reply.headers}, reply.body)
        answers[path] = seen
    stream, converse = answers[STREAM_PATH], answers[JSON_PATH]
    assert (stream.content, stream.stop_reason, stream.usage, stream.error) == (
        converse.content, converse.stop_reason, converse.usage, converse.error)


# --- a recording made elsewhere: the event stream with its headers stripped ---------------------

def test_a_headerless_converse_stream_recording_replays_and_is_read(tmp_path):
    """A cassette whose response is kept as other projects keep it (the body as vcrpy's
    ``!!binary`` string, no response headers): boto3 replays it, and the harness reads its tool
    calls and usage."""
    body = CODE_INTERPRETER_STREAM
    cassette = tmp_path / "headerless.yaml"
    cassette.write_text(yaml.safe_dump({"recorded_with": {"target": "live provider API"}, "interactions": [{
        "request": {"method": "POST", "uri": URI + "-stream", "headers": {},
                    "body": {"string": json.dumps({"messages": [QUESTION]})}},
        "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": body}}}],
        "version": 1}))
    recorder = CaseRecorder(cassette, "none")
    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="k",
                          aws_secret_access_key="s", config=SINGLE_ATTEMPT)
    with recorder.use("test") as replay:
        events = list(client.converse_stream(modelId=MODEL_ID, messages=[QUESTION])["stream"])
    assert events[-2] == {"messageStop": {"stopReason": "tool_use"}}
    seen = traffic.fields_of(replay.exchanges, [0])
    assert seen["apis"] == ["bedrock-converse-stream"]
    assert [call["name"] for call in seen["tool_calls"]["calls"]] == ["nova_code_interpreter", "final_result"]
    assert seen["usage"] == {"input_tokens": 1002, "output_tokens": 59, "total_tokens": 1061}


# --- the real recordings ------------------------------------------------------------------------

def _real_interactions() -> list[Any]:
    folder = RECORDINGS / "bedrock"
    found = []
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        for index, interaction in enumerate(yaml.safe_load(path.read_text())["interactions"]):
            if "/converse" in interaction["request"]["uri"]:
                found.append(pytest.param(interaction, id=f"{path.stem}[{index}]"))
    return found or [pytest.param(None, id="none")]


@pytest.mark.parametrize("interaction", _real_interactions())
def test_real_recordings_are_read_as_botocore_reads_them(interaction):
    if interaction is None:
        pytest.skip(f"no real Bedrock recordings in {RECORDINGS / 'bedrock'}")
    response = interaction["response"]
    body = response["body"]["string"]
    body = body if isinstance(body, bytes) else body.encode()
    headers = {k: v[0] if isinstance(v, list) else v for k, v in (response.get("headers") or {}).items()}
    headers = {k: v.decode() if isinstance(v, bytes) else str(v) for k, v in headers.items()}
    agree = assert_agree_on_stream if interaction["request"]["uri"].endswith("-stream") else assert_agree_on_json
    agree(response["status"]["code"], headers, body)


# --- the golden's tool calls ----------------------------------------------------------------------

def test_a_golden_holds_a_server_tools_call_with_its_type_and_result():
    calls = traffic.answer(harness_exchange(STREAM_PATH, 200, {}, CODE_INTERPRETER_STREAM)).tool_calls
    golden = ToolCallsExpect.model_validate(yaml.safe_load(yaml.safe_dump({"calls": calls})))
    assert check_tool_calls(golden, calls)
    dropped = [call for call in calls if call.get("type") != "server_tool_use"]
    assert not check_tool_calls(golden, dropped)
    # a hand-written check names what it cares about: the tool, and that the provider ran it
    by_hand = ToolCallsExpect.model_validate({"calls": [{"name": "nova_code_interpreter", "type": "server_tool_use"},
                                                        {"name": "final_result"}]})
    assert check_tool_calls(by_hand, calls, subset=True)
    client_side = ToolCallsExpect.model_validate({"calls": [{"name": "nova_code_interpreter", "type": "tool_use"},
                                                            {"name": "final_result"}]})
    assert not check_tool_calls(client_side, calls, subset=True)


def test_without_botocore_a_converse_stream_answer_names_what_to_install(monkeypatch):
    """The harness reads ConverseStream with botocore's parser; a program whose Bedrock client is
    not botocore's gets the package named, not a golden without its tool calls and usage."""
    import sys

    from rag_core.errors import MissingExtraError

    monkeypatch.setitem(sys.modules, "botocore.session", None)  # what a missing package looks like to import
    wire_bedrock._botocore_reader.cache_clear()
    try:
        with pytest.raises(MissingExtraError, match=r"Reading Bedrock ConverseStream answers .* needs the 'botocore' "
                                                    r"package.*pip install 'rag-core\[frameworks\]'"):
            traffic.answer(harness_exchange(STREAM_PATH, 200, {}, CODE_INTERPRETER_STREAM))
    finally:
        wire_bedrock._botocore_reader.cache_clear()
