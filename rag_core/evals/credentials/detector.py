"""The detector: it scrubs what has a known place (headers, query parameters, URL passwords) and
finds what looks like a credential anywhere else in the data a file is about to hold; the
session's detector, and the refusal a write gets when it finds one."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from rag_core.evals.credentials.labelled import named_kinds
from rag_core.evals.credentials.names import HEADER_WORDS, VOLATILE_HEADERS, key_like_query_name
from rag_core.evals.credentials.reading import text_kinds


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

    def scrub_query_parameter(self, name: str) -> bool:
        """A query parameter is dropped when its name says credential: one of QUERY_PARAMETERS, or,
        lower-cased and without separators, it contains key, token, secret, auth, signature,
        credential, password, passwd, passphrase or cookie, or it has sig, pwd, pw or pass as a
        whole word (X-Goog-Signature, private_token, accessKey, userPwd). Kept: names whose only such
        word is a count or a property (max_tokens, maxOutputTokens, key_order, token_type), keyword
        and author; api-version, alt, limit… hold none of the words."""
        return key_like_query_name(name)

    def scrub_url(self, url: str) -> str:
        """Drop user:password@ and key-like query parameters (see ``scrub_query_parameter``)."""
        parts = urlsplit(url)
        netloc = parts.netloc.rsplit("@", 1)[-1]
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            query = urlencode([(k, v) for k, v in pairs if not self.scrub_query_parameter(k)])
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))

    # ------------------------------------------------------------------ finding
    def _find_in_text(self, text: str, where: str, field_name: str, clean: set[str]) -> list[Finding]:
        read = text_kinds(text, clean)
        # the project's patterns and the field's name are tested at every place: not remembered
        project = [kind for kind, pattern in self.extra_patterns.items() if pattern.search(text)]
        # in the order findings have always been reported in
        kinds = [*read.families, *read.ruleset, *project, *read.basic, *named_kinds(text, field_name),
                 *read.labelled, *read.prose]
        return [Finding(where, kind) for kind in dict.fromkeys(kinds)]

    def find(self, node: Any, where: str = "", field_name: str = "") -> list[Finding]:
        """Every place in ``node`` (nested dicts, lists, strings) that still looks like a credential.
        A text met again in ``node`` is not read again by the built-in rules if they found nothing
        in it the first time."""
        found: list[Finding] = []
        self._find(node, where, field_name, set(), found)
        return found

    def _find(self, node: Any, where: str, field_name: str, clean: set[str], found: list[Finding]) -> None:
        if isinstance(node, dict):
            for number, (key, value) in enumerate(node.items()):
                name = str(key)
                held = self._find_in_text(key, "", "", clean) if isinstance(key, str) else []
                if held:
                    # the key itself holds the credential: its place is named by its position, never its text
                    name = f"<key {number}>"
                    found += [Finding(f"{where}.{name} (the key)" if where else f"{name} (the key)", f.kind)
                              for f in held]
                self._find(value, f"{where}.{name}" if where else name, "" if held else name, clean, found)
        elif isinstance(node, (list, tuple)):
            for index, value in enumerate(node):
                self._find(value, f"{where}[{index}]", field_name, clean, found)
        elif isinstance(node, str):
            found += self._find_in_text(node, where or "(text)", field_name, clean)
        elif isinstance(node, bytes):
            found += self._find_in_text(node.decode("utf-8", "replace"), where or "(bytes)", field_name, clean)



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
