"""No credential reaches disk: planted credentials, recorded for real against the emulator, are
all scrubbed or refused, and afterwards no planted value is in any file under the project."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["pytester"]

import bm25s  # noqa: E402,F401  (imported before pytester's in-process runs; see test_harness.py)
import numpy  # noqa: E402,F401
import openai  # noqa: E402,F401
import vcr  # noqa: E402,F401

from rag_core.evals.credentials import Detector, configure  # noqa: E402
from tests.golden_project import project, record  # noqa: E402,F401  (project: a fixture)

# fake credentials of each family, built so that no real key is written in this file
AZURE = "0123456789abcdef" * 2
COHERE = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCd"
AWS_ID = "AKIA" + "IOSFODNN7EXAMPL1"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----"
BASIC = base64.b64encode(b"admin:hunter2-pass").decode()

# (label, where, planted value, expected: "scrub" | "refuse")
PLANTED: list[tuple[str, str, Any, str]] = [
    # request headers: scrubbed by name
    ("authorization bearer", "header:Authorization", "Bearer sk-proj-AAAAbbbbCCCCddddEEEEffff0001", "scrub"),
    ("azure api-key", "header:api-key", AZURE, "scrub"),
    ("apim subscription key", "header:Ocp-Apim-Subscription-Key", AZURE[::-1], "scrub"),
    ("portkey", "header:X-Portkey-Api-Key", "pk-portkey-value-0002", "scrub"),
    ("proxy basic", "header:Proxy-Authorization", f"Basic {BASIC}", "scrub"),
    ("aws session token", "header:X-Amz-Security-Token", "FQoGZXIvYXdzEJr-session-token-0003", "scrub"),
    ("aws signature header", "header:X-Amz-Signature", "f" * 64, "scrub"),
    ("gemini key header", "header:x-goog-api-key", "AIza" + "S" * 35, "scrub"),
    ("cookie", "header:Cookie", "session=opaque-cookie-value-0004", "scrub"),
    ("custom secret", "header:X-Custom-Secret", "custom-secret-value-0005", "scrub"),
    ("auth token", "header:X-Auth-Token", "auth-token-value-0006", "scrub"),
    ("credential header", "header:X-Credential", "credential-value-0007", "scrub"),
    ("password header", "header:X-Password", "password-value-0008", "scrub"),
    ("project's own header", "header:X-Tenant-Pass", "tenant-pass-value-0009", "scrub"),
    # query parameters: scrubbed by name, any case
    ("query key", "query:key", "AIza" + "Q" * 35, "scrub"),
    ("query apiKey", "query:apiKey", "query-apikey-value-0010", "scrub"),
    ("query api_key", "query:api_key", "query-api-key-value-0011", "scrub"),
    ("query token", "query:token", "query-token-value-0012", "scrub"),
    ("query subscription-key", "query:subscription-key", "query-subscription-0013", "scrub"),
    ("query code", "query:code", "query-code-value-0014", "scrub"),
    ("query sig", "query:sig", "query-sig-value-0015", "scrub"),
    ("query amz credential", "query:X-Amz-Credential", AWS_ID + "/20260101/us-east-1/s3/aws4_request", "scrub"),
    ("query amz signature", "query:X-Amz-Signature", "e" * 64, "scrub"),
    ("query KEY upper case", "query:KEY", "query-upper-key-0016", "scrub"),
    # userinfo in the URL
    ("url userinfo", "userinfo", "url-password-0017", "scrub"),
    # request bodies: refused, naming the field
    ("openai key in body", "body:input", "use sk-" + "a" * 40, "refuse"),
    ("openai project key", "body:input", "sk-proj-" + "B" * 40, "refuse"),
    ("azure key field", "body:api_key", AZURE, "refuse"),
    ("cohere key field", "body:cohere_api_key", COHERE, "refuse"),
    ("aws access key id", "body:input", f"id {AWS_ID}", "refuse"),
    ("aws secret field", "body:aws_secret_access_key", AWS_SECRET, "refuse"),
    ("stripe live", "body:input", "sk_live_" + "c" * 24, "refuse"),
    ("github classic", "body:input", "ghp_" + "D" * 36, "refuse"),
    ("github fine-grained", "body:input", "github_pat_" + "E" * 30, "refuse"),
    ("hugging face", "body:input", "hf_" + "F" * 34, "refuse"),
    ("slack bot", "body:input", "xoxb-1234567890-abcdefghij", "refuse"),
    ("slack user", "body:input", "xoxp-1234567890-abcdefghij", "refuse"),
    ("jwt", "body:input", JWT, "refuse"),
    ("bearer in text", "body:input", "header was Bearer abc.DEF-123_456~789", "refuse"),
    ("lower-case bearer", "body:input", "bearer zyx987.WVU654-tsr321", "refuse"),
    ("basic in text", "body:input", f"Basic {BASIC}", "refuse"),
    ("pem private key", "body:input", PEM, "refuse"),
    ("google key in body", "body:input", "AIza" + "B" * 35, "refuse"),
    ("project's own pattern", "body:input", "tenant-secret-ZZZ-4242", "refuse"),
    ("password in a URL in the body", "body:input", "postgresql://app:pw-0018@db.internal/app", "refuse"),
    # responses: refused, naming the field
    ("openai key in response", "response", "here: sk-" + "r" * 40, "refuse"),
    ("github token in response", "response", "token ghp_" + "R" * 36, "refuse"),
    ("jwt in response", "response", JWT.replace("dozj", "resp"), "refuse"),
    ("aws id in response", "response", "AKIA" + "RESPONSEKEY00001", "refuse"),
    ("pem in response", "response", PEM.replace("MIIE", "RESP"), "refuse"),
    ("slack in response", "response", "xoxb-9999999999-responsetok", "refuse"),
]


def _secret(value: Any) -> str:
    """The part of a planted value that must never be on disk."""
    text = str(value)
    return text.split(" ", 1)[1] if text.startswith(("Bearer ", "Basic ", "use ", "id ", "here: ", "token ")) else text


@pytest.fixture(scope="module")
def emulator():
    from rag_core.evals.emulator.server import EmulatorServer

    server = EmulatorServer()
    yield server
    server.close()


@pytest.fixture
def project_patterns():
    configure(["X-Tenant-Pass"], [r"tenant-secret-[A-Z]{3}-\d{4}"])
    yield
    configure()


def _record(folder: Path, name: str, where: str, value: Any, emulator: Any) -> str | None:
    """Record one request with ``value`` planted at ``where``; the harness error, or None if written."""
    import httpx2

    from rag_core.evals.emulator.script import ScriptedTurn
    from rag_core.evals.common.errors import HarnessError
    from rag_core.evals.recording.recorder import CaseRecorder

    kind, _, field = where.partition(":")
    emulator.load([ScriptedTurn(text=value)] if kind == "response" else [], seed=name)
    recorder = CaseRecorder(folder / f"{name}.yaml", "once", emulator.url)
    url, headers, params = f"{emulator.url}/v1/embeddings", {}, {}
    body: dict[str, Any] = {"model": "text-embedding-3-small", "input": ["pad thai"]}
    if kind == "header":
        headers[field] = value
    elif kind == "query":
        params[field] = value
    elif kind == "userinfo":
        url = url.replace("http://", f"http://recorder:{value}@")
    elif kind == "body":
        body[field] = [value] if field == "input" else value
    elif kind == "response":
        url, body = f"{emulator.url}/v1/responses", {"model": "gpt-5.2", "input": "hi"}
    try:
        with recorder.use("test"):
            with httpx2.Client() as client:
                client.post(url, json=body, headers=headers, params=params).raise_for_status()
        recorder.commit()
    except HarnessError as exc:
        return str(exc)
    return None


def test_every_planted_credential_is_scrubbed_or_refused_and_none_reaches_disk(tmp_path, emulator, project_patterns):
    assert len(PLANTED) >= 50
    outcomes = []
    for number, (label, where, value, expected) in enumerate(PLANTED):
        name = f"c{number:02d}"
        refusal = _record(tmp_path / "cassettes", name, where, value, emulator)
        written = (tmp_path / "cassettes" / f"{name}.yaml").exists()
        if expected == "scrub":
            ok = refusal is None and written
        else:
            field = where.partition(":")[2] or "response.body"
            ok = refusal is not None and not written and field in refusal and "credential" in refusal
        outcomes.append((label, ok, refusal))
    failed = [(label, refusal) for label, ok, refusal in outcomes if not ok]
    assert not failed, failed
    on_disk = "".join(p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file())
    leaked = [label for label, _, value, _ in PLANTED if _secret(value) in on_disk]
    assert not leaked, leaked


def test_the_refusal_names_the_file_the_interaction_and_the_field(tmp_path, emulator):
    refusal = _record(tmp_path, "named", "body:api_key", AZURE, emulator)
    assert refusal is not None
    assert "named.yaml: refusing to write the recording" in refusal
    assert "interactions[0].request.body.json.api_key: an Azure-style key (32 hex digits) in the key-like field 'api_key'" in refusal


@pytest.mark.parametrize("text", [
    "Pad thai is a bearer of tradition, and basic understanding of tamarind helps.",
    "thoughtSignature: MoX8hdrUJirC-f4SYcskMI1ECcF11Q9tYKFqB8XvS2A=",
    "the cache_key is 0123456789abcdef0123456789abcdef",  # a hash outside a key-like field
    "max_output_tokens: 1024",
])
def test_ordinary_text_is_not_taken_for_a_credential(text):
    assert Detector().find({"prompt": text, "thoughtSignature": "MoX8hdrUJirC-f4SYcskMI1ECcF11Q9tYKFqB8XvS2A="}) == []


# ------------------------------------------------------------------ through the harness: inputs, tool arguments, goldens, reports
@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("input: What is in the pantry?", "input: 'mine is ghp_" + "G" * 36 + "'", "content: a GitHub token"),
        ("input: What is in the pantry?", "input: 'token " + JWT + "'", "content: a JSON Web Token"),
        ("input: What is in the pantry?", "input: 'key sk-proj-" + "H" * 40 + "'", "content: an OpenAI-style key"),
        ("arguments: {term: pantry}", "arguments: {term: 'hf_" + "I" * 34 + "'}", "a Hugging Face token"),
        ("arguments: {term: pantry}", "arguments: {term: 'AKIAJJJJJJJJJJJJJJJJ'}", "an AWS access key id"),
        ("arguments: {term: pantry}", "arguments: {term: 'xoxb-1111111111-toolargs'}", "a Slack token"),
        # keys of RAG stacks, and Mailgun's, that the detector did not know: they were written
        ("input: What is in the pantry?", "input: 'parse with llx-Q7wE3rT9yU1iO5pA2sD8fG4hJ6kL0zXcVbNm4QwEr'", "a LlamaCloud API key"),
        ("input: What is in the pantry?", "input: 'embed with pa-R8e_T1y-U5i3O7p_A9s2D4f-G6h8J0kL3zX5cV7bN9mQ2w'", "a Voyage AI API key"),
        ("input: What is in the pantry?", "input: 'rerank with fw_S9rT2yU4iO6pA8sD1fG3hJ5k'", "a Fireworks AI API key"),
        ("input: What is in the pantry?", "input: 'mail with key-" + "0a1b2c3d" * 4 + "'", "a Mailgun API key"),
        ("input: What is in the pantry?", "input: 'sign with " + "4e5f6a7b" * 4 + "-0c1d2e3f-4a5b6c7d'",
         "a Mailgun key"),
    ],
    ids=["input-github", "input-jwt", "input-openai", "tool-hf", "tool-aws", "tool-slack",
         "input-llamacloud", "input-voyage", "input-fireworks", "input-mailgun", "input-mailgun-hex"],
)
def test_credentials_in_case_inputs_and_tool_arguments_are_refused(project, old, new, field):
    case = project.path / "fixtures" / "goldens" / "with_tool.yaml"
    case.write_text(case.read_text().replace(old, new))
    result = project.runpytest("evals", "-k", "with_tool", "--record-mode=once", "--emulator")
    result.assert_outcomes(failed=1, deselected=1)
    assert "refusing to write the recording" in result.stdout.str() and field in result.stdout.str()
    secret = new.split("'")[1].split(" ")[-1]
    written = [p for p in project.path.rglob("*") if p.is_file() and p != case and p.suffix in (".yaml", ".md", ".json")]
    assert not [p for p in written if secret in p.read_text(errors="replace")]


def test_a_golden_update_is_refused_when_the_observed_run_holds_a_credential(project):
    """Replay does not write the cassette, but --update-goldens writes the golden: it passes the detector too."""
    record(project)
    golden = project.path / "fixtures" / "goldens" / "with_tool.golden.yaml"
    before = golden.read_bytes()
    case = project.path / "fixtures" / "goldens" / "with_tool.yaml"
    planted = "sk-proj-" + "K" * 40
    case.write_text(case.read_text().replace("input: What is in the pantry?", f"input: 'use {planted}'"))
    result = project.runpytest("evals", "-k", "with_tool", "--update-goldens", "--no-strict-cassettes")
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines(["*fixtures/goldens/with_tool.golden.yaml: refusing to write it*",
                                 "*user_messages?0?: an OpenAI-style key*"])
    assert golden.read_bytes() == before


def test_a_credential_in_a_failing_case_is_withheld_from_the_report(project):
    """The markdown report shows a case's failures as the run record keeps them: a value, message
    or diff holding a credential is withheld, the rest of the report is written."""
    record(project)
    case = project.path / "fixtures" / "goldens" / "with_markdown.yaml"
    planted = "ghp_" + "L" * 36
    case.write_text(case.read_text() + f"expect:\n  output: {{equals: '{planted}'}}\n")
    result = project.runpytest("evals", "--golden-report=report.md")
    assert result.ret != 0  # the case failed
    result.stdout.fnmatch_lines(["markdown report: report.md"])
    report = (project.path / "report.md").read_text()
    assert planted not in report and "(withheld: it looks like a credential: a GitHub token)" in report
    assert "#### `with_markdown`" in report


def test_project_patterns_come_from_the_ini(project):
    project.makeini("[pytest]\naddopts = -p no:cacheprovider\npythonpath = .\n"
                    "rag_core_secret_patterns =\n    acme-[0-9]{6}\n")
    case = project.path / "fixtures" / "goldens" / "with_tool.yaml"
    case.write_text(case.read_text().replace("input: What is in the pantry?", "input: 'badge acme-123456'"))
    result = project.runpytest("evals", "-k", "with_tool", "--record-mode=once", "--emulator")
    result.assert_outcomes(failed=1, deselected=1)
    assert "a match of the project's pattern 'acme-[0-9]{6}'" in result.stdout.str()
    bad = project.runpytest("evals", "-o", "rag_core_secret_patterns=acme-[0-9")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR and "is not a regular expression" in bad.stderr.str()


def test_the_planted_table_counts_what_the_readme_says():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert f"{len(PLANTED)} planted credentials" in readme


# ------------------------------------------------------------------ values after key-like names in text
@pytest.mark.parametrize("text", [
    f"env: AWS_SECRET_ACCESS_KEY={AWS_SECRET}",
    f"environment: AWS_SECRET_ACCESS_KEY={AWS_SECRET}",
    f"args: --aws-secret-access-key={AWS_SECRET}",
    f'{{"env": "AWS_SECRET_ACCESS_KEY={AWS_SECRET}"}}',
    f"AWS_SECRET_ACCESS_KEY: {AWS_SECRET}",
    f"export AWS_SECRET_ACCESS_KEY='{AWS_SECRET}'",
    f"[default]\naws_secret_access_key = {AWS_SECRET}",
    f'config: {{"api_key": "{AZURE}"}}',
    f'data: {{"cohere_api_key":"{COHERE}"}}',
    '{\\"client_secret\\": \\"Zm9vYmFyLTEyMzQ1Njc4OTAtc2VjcmV0LXZhbHVl\\"}',
    "settings: client_secret=q8Lr2VbX0nT5yWm3Kd7Hs1Pf",
], ids=["env-colon", "environment", "flag", "json-env", "yaml", "export", "ini", "json", "sse", "escaped-json", "nested"])
def test_a_value_after_a_key_like_name_in_text_is_checked(text):
    """NAME=value, NAME: value and "name": "value": the value after a key-like name is checked, even
    when the name itself stands where another label's value would be (env: NAME=value)."""
    findings = Detector().find({"prompt": text})
    assert findings and all("in the key-like field" in f.kind for f in findings), findings


def test_a_name_value_credential_in_a_body_is_refused_through_a_recording(tmp_path, emulator):
    refusal = _record(tmp_path, "env_pair", "body:input", f"env: AWS_SECRET_ACCESS_KEY={AWS_SECRET}", emulator)
    assert refusal is not None and "key-like field 'AWS_SECRET_ACCESS_KEY'" in refusal
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and AWS_SECRET in p.read_text(errors="replace")]


# ------------------------------------------------------------------ query parameters by what their name says
KEY_LIKE_QUERY_NAMES = ["private_token", "api_token", "auth", "access-token", "secret_key", "accessKey", "pwd",
                        "X-Goog-Signature", "X-Goog-Credential", "AWSAccessKeyId", "userPassword", "session_token"]
HARMLESS_QUERY_NAMES = ["api-version", "max_tokens", "maxOutputTokens", "key_order", "token_type", "alt", "limit",
                        "after", "order", "keyword", "author", "include[]", "design", "passage"]


@pytest.mark.parametrize("name", KEY_LIKE_QUERY_NAMES)
def test_key_like_query_parameters_are_scrubbed_whatever_their_spelling(name):
    url = f"https://api.example.com/v1/files?alt=sse&{name}=v4lue-0019&limit=2"
    assert Detector().scrub_url(url) == "https://api.example.com/v1/files?alt=sse&limit=2"


@pytest.mark.parametrize("name", HARMLESS_QUERY_NAMES)
def test_harmless_query_parameters_are_kept(name):
    assert not Detector().scrub_query_parameter(name)
    assert "kept-0020" in Detector().scrub_url(f"https://api.example.com/v1/x?{name}=kept-0020")


def test_key_like_query_parameters_never_reach_the_cassette(tmp_path, emulator):
    for number, name in enumerate(KEY_LIKE_QUERY_NAMES):
        value = f"planted-query-value-{number:04d}"
        assert _record(tmp_path, f"q{number:02d}", f"query:{name}", value, emulator) is None, name
        cassette = (tmp_path / f"q{number:02d}.yaml").read_text()
        assert value not in cassette and f"{name}=" not in cassette, name


# ------------------------------------------------------------------ linear time
def _linear_inputs() -> dict[str, Any]:
    import random
    import string

    rng = random.Random(9)
    alnum = string.ascii_letters + string.digits

    def repeat(unit: str):
        return lambda n: (unit * (n // len(unit) + 1))[:n]

    return {
        # Responses' encrypted_content: one run of [A-Za-z0-9_-] (the reported case)
        "base64url": lambda n: base64.urlsafe_b64encode(rng.randbytes(n)).decode()[:n],
        "base64": lambda n: base64.b64encode(rng.randbytes(n)).decode()[:n],
        "name-run": lambda n: "".join(rng.choice(alnum + "_.-") for _ in range(n)),
        "hex": lambda n: "".join(rng.choice("0123456789abcdef") for _ in range(n)),
        "key=": repeat("key="), "a=": repeat("a="), "-sk-": repeat("-sk-"), "eyJ-": repeat("eyJ-"),
        "eyJ.": repeat("eyJ."), "url": repeat("http://a:"), "a+": repeat("a+"), "bearer": repeat("Bearer "),
        "basic": repeat("Basic "), "json": repeat('"api_key": "' + "A" * 30 + '", '), "prose": repeat("the key is "),
        "pem": repeat("-----BEGIN A "), "env": repeat("env: AWS_SECRET_ACCESS_KEY="), "query": repeat("?token=x&"),
        # the ruleset's: a rule's name run ([\w.-]{0,50}?zendesk…), keywords of many rules at once,
        # Mailgun's hex groups, escapes that are decoded and read again
        "named rule": repeat("zendesk_key = "), "keywords": repeat("sk ey api s. pul- hvs. "),
        "hex groups": repeat("0123456789abcdef-01234567-"), "escapes": repeat("\\n\\t\\u0041\\\\"),
    }


@pytest.mark.parametrize("shape", list(_linear_inputs()))
def test_the_detector_is_linear_in_the_length_of_its_input(shape):
    """8× the input may take at most 20× the time (linear: about 8×; quadratic: 64×), and at least
    a quarter second is allowed (a quadratic detector takes minutes at 128 KB). Time is this
    thread's CPU time, so neither a busy machine nor another thread of the test process counts;
    the larger input runs under a wall-clock deadline, so a quadratic detector fails here in
    seconds, not hours."""
    import math
    import signal
    import time

    make = _linear_inputs()[shape]
    small, large = make(16_384), make(131_072)
    detector = Detector()

    def seconds(text: str) -> float:
        start = time.thread_time()
        detector.find({"encrypted_content": text})
        return time.thread_time() - start

    one = min(seconds(small) for _ in range(3))
    limit = max(20 * one, 0.25)

    class TooSlow(Exception):
        pass

    def interrupt(*_: Any) -> None:
        raise TooSlow

    timed = hasattr(signal, "setitimer")
    previous = signal.signal(signal.SIGALRM, interrupt) if timed else None
    eight = math.inf
    try:
        for _ in range(3):
            if timed:
                signal.setitimer(signal.ITIMER_REAL, max(20 * limit, 10.0))
            try:
                eight = min(eight, seconds(large))
            except TooSlow:
                pass
            finally:
                if timed:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            if eight < limit:
                break
    finally:
        if timed:
            signal.signal(signal.SIGALRM, previous)
    assert eight < limit, f"{shape}: 16 KB took {one * 1e3:.1f} ms, 128 KB over {limit * 1e3:.0f} ms of CPU time"
