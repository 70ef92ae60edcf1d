"""The one credential detector: every file the harness writes (cassettes, goldens, baselines,
embedding-cache metadata, reports) passes it before it reaches the disk.

Two jobs:

* **scrub** what has a known place and can simply be dropped: request headers whose name says
  credential (key, token, secret, auth, signature, credential, password, cookie), key-like query
  parameters (matched case-insensitively), and the ``user:password@`` part of URLs;
* **find** what is left anywhere else (request and response bodies, case inputs, tool arguments,
  prompts): provider keys by their shape, bearer/basic credentials, JWTs, PEM private keys, and
  key-shaped values (Azure, Cohere, AWS secrets) under key-like field names. A finding is never
  scrubbed silently, because a body is evidence the golden pins: the write is refused, naming the
  file, the place and the kind, and the previous file stays.

Projects add header names (``rag_core_scrub_headers``) and patterns (``rag_core_secret_patterns``)
in their pytest ini; ``configure`` installs them for the session.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Any, Iterable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

PLACEHOLDER = "<scrubbed>"

# a request header is scrubbed when its (lower-cased) name contains one of these words
HEADER_WORDS = ("key", "token", "secret", "auth", "signature", "credential", "password", "cookie")
# headers that vary by machine or retry (not secret, but they would make cassettes churn)
VOLATILE_HEADERS = {
    "openai-organization", "openai-project", "x-stainless-retry-count", "x-stainless-read-timeout",
    "x-stainless-os", "x-stainless-arch", "x-stainless-runtime", "x-stainless-runtime-version",
    "x-stainless-async", "x-stainless-lang", "x-stainless-timeout", "x-server-timeout", "content-length", "host",
}
QUERY_PARAMETERS = {
    "key", "apikey", "api_key", "api-key", "token", "access_token", "id_token", "refresh_token",
    "subscription-key", "code", "sig", "signature", "secret", "client_secret", "password",
    "x-amz-credential", "x-amz-signature", "x-amz-security-token",
}

# a field whose name looks like this holds a key: key-shaped values under it are credentials
_KEY_FIELD = re.compile(
    r"(?i)(?:^|[_\-.])(?:api[_-]?key|key|secret|secret[_-]?access[_-]?key|password|passwd|token|access[_-]?token"
    r"|auth|authorization|credentials?|subscription[_-]?key)$"
)
_KEY_SHAPED = {
    "an Azure-style key (32 hex digits)": re.compile(r"[0-9a-fA-F]{32}"),
    "a Cohere-style key (40 letters and digits)": re.compile(r"[A-Za-z0-9]{40}"),
    "an AWS secret access key": re.compile(r"[A-Za-z0-9/+]{40}"),
}
# "name": "value" and name=value pairs inside text (SSE streams, form bodies, query strings)
_PAIR = re.compile(r"""["']?([A-Za-z0-9_.\-]+)["']?\s*[:=]\s*["']?([A-Za-z0-9/+_.\-]{20,})""")

PATTERNS: dict[str, re.Pattern[str]] = {
    "an OpenAI-style key (sk-…)": re.compile(r"\bsk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_-]{20,}"),
    "a Google API key (AIza…)": re.compile(r"AIza[0-9A-Za-z_-]{35}"),
    "a Stripe live key": re.compile(r"\b[rs]k_live_[0-9A-Za-z]{10,}"),
    "a GitHub token": re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    "a Hugging Face token (hf_…)": re.compile(r"\bhf_[A-Za-z0-9]{30,}"),
    "a Slack token (xox…)": re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    "an AWS access key id": re.compile(r"\b(?:AKIA|ASIA|AIDA|AROA|AGPA)[0-9A-Z]{16}\b"),
    "a JSON Web Token": re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    # a bearer credential has at least one character that is not a letter, so prose ("bearer bonds") passes
    "a bearer token (Bearer …)": re.compile(r"\b[Bb]earer\s+(?=[A-Za-z]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{12,}"),
    "a PEM private key": re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"),
    "a password in a URL (user:password@)": re.compile(r"\b[a-z][a-z0-9+.-]*://[^/\s:@\"']+:[^/\s@\"']+@"),
}
_BASIC = re.compile(r"\b[Bb]asic\s+([A-Za-z0-9+/]{8,}={0,2})")


@dataclass(frozen=True)
class Finding:
    where: str  # dotted path in the data, e.g. interactions[1].request.body.json.input[0].content
    kind: str

    def __str__(self) -> str:
        return f"{self.where}: {self.kind}"


@dataclass
class Detector:
    extra_headers: tuple[str, ...] = ()
    extra_patterns: dict[str, re.Pattern[str]] = field(default_factory=dict)

    # ------------------------------------------------------------------ scrubbing
    def scrub_header(self, name: str) -> bool:
        lowered = name.lower()
        return (any(word in lowered for word in HEADER_WORDS) or lowered in VOLATILE_HEADERS
                or lowered in self.extra_headers)

    def scrub_headers(self, headers: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in headers.items() if not self.scrub_header(k)}

    def scrub_url(self, url: str) -> str:
        """Drop user:password@ and key-like query parameters (names matched case-insensitively)."""
        parts = urlsplit(url)
        netloc = parts.netloc.rsplit("@", 1)[-1]
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            query = urlencode([(k, v) for k, v in pairs if k.lower() not in QUERY_PARAMETERS])
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))

    # ------------------------------------------------------------------ finding
    def find_in_text(self, text: str, where: str, field_name: str = "") -> list[Finding]:
        found = []
        for kind, pattern in (*PATTERNS.items(), *self.extra_patterns.items()):
            if pattern.search(text):
                found.append(Finding(where, kind))
        for match in _BASIC.finditer(text):
            if _decodes_to_user_and_password(match.group(1)):
                found.append(Finding(where, "a basic-auth credential (Basic …)"))
                break
        pairs = [(field_name, text)] if field_name else []
        pairs += [(m.group(1), m.group(2)) for m in _PAIR.finditer(text)]
        for name, value in pairs:
            if _KEY_FIELD.search(name):
                for kind, shape in _KEY_SHAPED.items():
                    if shape.fullmatch(value.strip()):
                        found.append(Finding(where, f"{kind} in the key-like field {name!r}"))
                        break
        return list(dict.fromkeys(found))

    def find(self, node: Any, where: str = "", field_name: str = "") -> list[Finding]:
        """Every place in ``node`` (nested dicts, lists, strings) that still looks like a credential."""
        found: list[Finding] = []
        if isinstance(node, dict):
            for key, value in node.items():
                found += self.find(value, f"{where}.{key}" if where else str(key), str(key))
        elif isinstance(node, (list, tuple)):
            for index, value in enumerate(node):
                found += self.find(value, f"{where}[{index}]", field_name)
        elif isinstance(node, str):
            found += self.find_in_text(node, where or "(text)", field_name)
        elif isinstance(node, bytes):
            found += self.find_in_text(node.decode("utf-8", "replace"), where or "(bytes)", field_name)
        return found


def _decodes_to_user_and_password(candidate: str) -> bool:
    try:
        decoded = base64.b64decode(candidate + "=" * (-len(candidate) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    return ":" in decoded and decoded.isprintable()


_active = Detector()


def detector() -> Detector:
    """The session's detector (the defaults, plus what the project's ini adds)."""
    return _active


def configure(extra_headers: Iterable[str] = (), extra_patterns: Iterable[str] = ()) -> Detector:
    """Install the project's additions; raises ValueError naming a pattern that does not compile."""
    global _active
    compiled = {}
    for text in extra_patterns:
        try:
            compiled[f"a match of the project's pattern {text!r}"] = re.compile(text)
        except re.error as exc:
            raise ValueError(f"rag_core_secret_patterns: {text!r} is not a regular expression ({exc})") from None
    _active = Detector(tuple(h.strip().lower() for h in extra_headers if h.strip()), compiled)
    return _active


class CredentialError(Exception):
    """A file about to be written still holds something that looks like a credential."""

    def __init__(self, path: str, findings: list[Finding]) -> None:
        self.path = path
        self.findings = findings
        shown = "\n  ".join(str(f) for f in findings[:20])
        more = f"\n  … and {len(findings) - 20} more" if len(findings) > 20 else ""
        super().__init__(
            f"{path}: refusing to write it: it still contains what looks like a credential:\n  {shown}{more}\n"
            "The previous file, if any, is unchanged. Remove the credential from the case input, tool output or "
            "body it came from (headers, query parameters and URL passwords are scrubbed automatically; add header "
            "names with the rag_core_scrub_headers ini option)."
        )


def check(path: str, data: Any) -> None:
    """Raise CredentialError naming ``path`` if ``data`` (parsed data or text) holds a credential."""
    findings = _active.find(data)
    if findings:
        raise CredentialError(path, findings)
