"""The one credential detector: every file the harness writes (cassettes, goldens, run records,
the live journal, reports and summaries, baselines, recorded rankings, embedding-cache metadata)
passes it before it reaches the disk.

Two jobs:

* **scrub** what has a known place and can simply be dropped: request headers whose name says
  credential (key, token, secret, auth, signature, credential, password, cookie), query parameters
  whose name says credential (the same words and passwd, passphrase, found anywhere in the name
  whatever its case and separators, and the words sig, pwd, pw and pass; see ``scrub_query_parameter``
  for the harmless names kept), and the ``user:password@`` part of URLs;
* **find** what is left anywhere else (request and response bodies, case inputs, tool arguments,
  prompts): credentials of a maintained ruleset (gitleaks' rules, read as data: ``secret_rules``),
  credentials of the well-known families by their shape (``FAMILIES``: provider keys, cloud and CI
  tokens, private key blocks, webhooks…, and the keys of RAG stacks the ruleset lacks),
  bearer/basic credentials, and values that look like a key, a token or a password after a
  key-like name (a JSON field, ``NAME=value``, ``NAME: value``, ``"name": "value"``, a URL's query
  parameter, "the key is …" in prose). A finding is never scrubbed silently, because a body is
  evidence the golden pins: the write is refused, naming the file, the place and the kind, and the
  previous file stays.

The detector reads data: nested dicts and lists, each string value and each key (``find``). A text
that holds an escaped text (a tool call's JSON arguments, an event stream's JSON data) is read
decoded too, where a key that opens a line no longer follows a "\\n".

Every pattern runs in time linear in the text: the ruleset's run on RE2; each of the detector's
own either starts at a literal prefix and reads a bounded or possessive run after it, or starts
only where a run of its characters starts; a rule whose prefix is not in the text is not run at
all (one pass of an RE2 set finds the prefixes a text holds). Within one scan, a text in which the
built-in rules found nothing is not read by them again: a recording sends its prompt and every
earlier turn again in each request.

Projects add header names (``rag_core_scrub_headers``) and patterns (``rag_core_secret_patterns``)
in their pytest ini; ``configure`` installs them for the session.
"""

from __future__ import annotations

import base64
import binascii
import functools
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, NamedTuple
from urllib.parse import parse_qsl, unquote_plus, urlencode, urlsplit, urlunsplit

PLACEHOLDER = "<scrubbed>"

# a request header is scrubbed when its (lower-cased) name contains one of these words
HEADER_WORDS = ("key", "token", "secret", "auth", "signature", "credential", "password", "cookie")
# headers that vary by machine or retry (not secret, but they would make cassettes churn)
VOLATILE_HEADERS = {
    "openai-organization", "openai-project", "x-stainless-retry-count", "x-stainless-read-timeout",
    "x-stainless-os", "x-stainless-arch", "x-stainless-runtime", "x-stainless-runtime-version",
    "x-stainless-async", "x-stainless-lang", "x-stainless-timeout", "x-server-timeout", "content-length", "host",
    # botocore's: the signing time (part of the SigV4 signature), an id per call, the attempt number
    "x-amz-date", "amz-sdk-invocation-id", "amz-sdk-request",
    # names this machine's kernel, Python and SDK build (botocore's also lists features in a
    # per-process order): nothing a replay matches on, and not worth a line in a cassette diff
    "user-agent",
}
# query parameters scrubbed by their exact (lower-cased) name, whatever the rule below says
QUERY_PARAMETERS = {
    "key", "apikey", "api_key", "api-key", "token", "access_token", "id_token", "refresh_token",
    "subscription-key", "code", "sig", "signature", "secret", "client_secret", "password",
    "x-amz-credential", "x-amz-signature", "x-amz-security-token",
}
# a query parameter is scrubbed when its name, lower-cased and without separators, contains one of
# these words (X-Goog-Signature, private_token, accessKey, secret_key, auth, …) …
QUERY_WORDS = ("key", "token", "secret", "auth", "signature", "credential", "password", "passwd", "passphrase", "cookie")
# … or has one of these as a whole word (sig, pwd: too short to look for inside other words)
QUERY_SHORT_WORDS = {"sig", "pwd", "pw", "pass"}
# … unless the word only names a property of keys or tokens (a count, an order, a type), which a
# provider's URL carries and which is no secret: max_tokens, maxOutputTokens, key_order, token_type,
# keyword, author (not authorization), tokenizer
_HARMLESS_QUERY = re.compile(
    r"tokens|tokeniz|keywords?|keyboard|author(?!iz)|(?:key|token)(?:type|order|ordering|count|limit|length|len|size|format)"
)

# the shapes a bare key has (also checked, as before, under a key-like name whatever the rules below say)
_KEY_SHAPED = {
    "an Azure-style key (32 hex digits)": re.compile(r"[0-9a-fA-F]{32}"),
    "a Cohere-style key (40 letters and digits)": re.compile(r"[A-Za-z0-9]{40}"),
    "an AWS secret access key": re.compile(r"[A-Za-z0-9/+]{40}"),
}

# a unified diff's mark ("-" or "+" opening a line) glued to a token's front: no part of the token.
# Run records and reports hold diffs, and a removed line "-sk-…" must not hide its key behind the
# boundaries below (a "-" there reads as the inside of a run of token characters). A line may
# also open after an escaped newline: a diff inside JSON text (a run record) or a quoted YAML string
_DIFF_MARK = r"(?<=^[-+])|(?<=\n[-+])|(?<=\\n[-+])"
# where a token may not start or end: inside a run of the characters tokens are made of
_B = r"(?:(?<![A-Za-z0-9_\-])|" + _DIFF_MARK + ")"
_E = r"(?![A-Za-z0-9_\-])"


def _discord_user_id(match: re.Match[str]) -> bool:
    """A Discord bot token starts with its bot's user id (17 to 20 digits) in base64."""
    head = match.group(0).split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    return decoded.isdigit() and 17 <= len(decoded) <= 20


def _random_after_prefix(match: re.Match[str]) -> bool:
    """What follows a short prefix (llx-, pa-, fw_) looks random: letters and digits, entropy ≥ 3 bits."""
    rest = match.group(0)[3:].lstrip("-_")
    return (any(c.isdigit() for c in rest) and any(c.isalpha() for c in rest)
            and _entropy(rest) >= 3.0)


_MAILGUN_HEAD = re.compile(_B + r"[0-9a-f]{32}")


def _mailgun_head(match: re.Match[str]) -> bool:
    """32 hex digits, where a token starts, before the "-<8 hex>-<8 hex>" tail."""
    start = match.start() - 32
    return start >= 0 and _MAILGUN_HEAD.match(match.string, start, match.start()) is not None


@dataclass(frozen=True)
class Family:
    kind: str
    pattern: re.Pattern[str]
    # the rule runs only where one of these is in the text (lower-case ones: in the lower-cased text)
    hints: tuple[str, ...] = ()
    verify: Callable[[re.Match[str]], bool] | None = None
    # where a hint stands in a match: the pattern is tried only that far before each hint; None:
    # the hint stands nowhere fixed, and the pattern searches the whole text
    offset: int | None = 0

    def found_in(self, text: str, lowered: str) -> bool:
        if self.hints and not any(hint in (lowered if hint == hint.lower() else text) for hint in self.hints):
            return False
        if self.offset is None or len(lowered) != len(text):
            matches: Iterable[re.Match[str] | None] = self.pattern.finditer(text)
        else:
            matches = (self.pattern.match(text, start - self.offset) for start in self._starts(text, lowered)
                       if start >= self.offset)
        return any(match is not None and (self.verify is None or self.verify(match)) for match in matches)

    def _starts(self, text: str, lowered: str) -> Iterable[int]:
        for hint in self.hints:
            haystack = lowered if hint == hint.lower() else text
            start = haystack.find(hint)
            while start >= 0:
                yield start
                start = haystack.find(hint, start + 1)


def _family(kind: str, pattern: str, *hints: str, verify: Callable[[re.Match[str]], bool] | None = None,
            offset: int | None = 0) -> Family:
    return Family(kind, re.compile(pattern), hints, verify, offset)


# Well-known credential families by their shape. The shapes follow gitleaks' published rule set
# (config/gitleaks.toml: the rules of the same names), written for Python's re with the boundaries
# and bounded runs that keep them linear and keep them off base64 blobs and provider ids.
FAMILIES: tuple[Family, ...] = (
    _family("an OpenAI-style key (sk-…)", _B + r"sk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_-]{20,}", "sk-"),
    _family("a Google API key (AIza…)", _B + r"AIza[0-9A-Za-z_-]{35}" + _E, "aiza"),
    _family("a Google OAuth access token (ya29.…)", _B + r"ya29\.[0-9A-Za-z_-]{20,}", "ya29."),
    _family("a Google OAuth client secret (GOCSPX-…)", r"GOCSPX-[0-9A-Za-z_-]{24,}", "GOCSPX-"),
    _family("a Stripe secret key (sk_live_/rk_live_/…_test_)", _B + r"[rs]k_(?:live|test|prod)_[0-9A-Za-z]{10,}",
            "sk_live_", "rk_live_", "sk_test_", "rk_test_", "sk_prod_", "rk_prod_"),
    _family("a Stripe webhook secret (whsec_…)", _B + r"whsec_[A-Za-z0-9+/=]{24,}", "whsec_"),
    _family("a GitHub token", _B + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
            "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    _family("a GitLab token (glpat-…)",
            _B + r"(?:gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas|ffct)-[0-9A-Za-z_-]{20,}|GR1348941[0-9A-Za-z_-]{20,})",
            "glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glimt-", "glptt-", "glagent-", "gloas-",
            "glffct-", "GR1348941"),
    _family("a Hugging Face token (hf_…)", _B + r"(?:hf|api_org)_[A-Za-z0-9]{30,}", "hf_", "api_org_"),
    _family("a Slack token (xox…)", _B + r"(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,}", "xox", "xapp-"),
    _family("a Slack webhook URL", r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{30,}",
            "hooks.slack.com/"),
    _family("an AWS access key id", r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AIDA|AROA|AGPA)[0-9A-Z]{16}\b",
            "A3T", "AKIA", "ASIA", "ABIA", "ACCA", "AIDA", "AROA", "AGPA"),
    _family("a JSON Web Token", _B + r"eyJ[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}", "eyJ"),
    # a bearer credential has at least one character that is not a letter, so prose ("bearer bonds") passes
    _family("a bearer token (Bearer …)", r"\b[Bb]earer\s++(?=[A-Za-z]*+[0-9._~+/=-])[A-Za-z0-9._~+/=-]{12,}", "bearer"),
    _family("a PEM private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----", "-----BEGIN"),
    _family("a PGP private key block", r"-----BEGIN PGP PRIVATE KEY BLOCK-----", "-----BEGIN PGP"),
    _family("a PuTTY private key", r"PuTTY-User-Key-File-\d+:", "PuTTY-User-Key-File-"),
    _family("a password in a URL (user:password@)",
            r"(?:(?<![A-Za-z0-9+.\-])|" + _DIFF_MARK + r")[A-Za-z][A-Za-z0-9+.\-]{0,31}+://[^/\s:@\"']*+:[^/\s@\"']++@",
            "://", offset=None),
    _family("an npm token (npm_…)", _B + r"npm_[A-Za-z0-9]{36}" + _E, "npm_"),
    _family("a PyPI token (pypi-…)", _B + r"pypi-AgE[A-Za-z0-9_-]{50,}", "pypi-AgE"),
    _family("a SendGrid API key (SG.…)", _B + r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _E, "SG."),
    _family("a Twilio API key (SK…)", _B + r"SK[0-9a-fA-F]{32}" + _E, "SK"),
    _family("a Discord bot token", _B + r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}" + _E,
            ".", verify=_discord_user_id, offset=None),
    _family("a Telegram bot token", r"(?:(?<=/bot)|(?<![\w:]))\d{8,10}:AA[A-Za-z0-9_-]{33}" + _E, ":AA", offset=None),
    _family("an Azure storage account key (AccountKey=…)", r"(?i:AccountKey)=[A-Za-z0-9+/]{80,}", "accountkey="),
    _family("an Azure shared access key (SharedAccessKey=…)", r"(?i:SharedAccessKey)=[A-Za-z0-9+/]{40,}",
            "sharedaccesskey="),
    _family("an Azure AD client secret (…Q~…)",
            r"(?:(?<![A-Za-z0-9_~.\-])|" + _DIFF_MARK + r")[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])",
            "Q~", offset=4),
    _family("a Databricks token (dapi…)", _B + r"dapi[0-9a-f]{32}(?:-\d)?" + _E, "dapi"),
    _family("a Shopify token (shpat_…)", _B + r"shp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}" + _E,
            "shpat_", "shpss_", "shpca_", "shppa_"),
    _family("a DigitalOcean token (dop_v1_…)", _B + r"do[opr]_v1_[0-9a-f]{64}" + _E, "dop_v1_", "doo_v1_", "dor_v1_"),
    _family("a Groq API key (gsk_…)", _B + r"gsk_[A-Za-z0-9]{40,}", "gsk_"),
    _family("an xAI API key (xai-…)", _B + r"xai-[A-Za-z0-9]{60,}", "xai-"),
    _family("a Perplexity API key (pplx-…)", _B + r"pplx-[A-Za-z0-9]{40,}", "pplx-"),
    _family("a Replicate token (r8_…)", _B + r"r8_[A-Za-z0-9]{30,}", "r8_"),
    _family("a LangSmith key (lsv2_…)", _B + r"lsv2_(?:pt|sk)_[0-9a-f]{32}_[0-9a-f]{10}", "lsv2_"),
    _family("a Pinecone API key (pcsk_…)", _B + r"pcsk_[A-Za-z0-9]{4,10}_[A-Za-z0-9]{40,}", "pcsk_"),
    _family("a Tavily API key (tvly-…)", _B + r"tvly-(?:dev-|prod-)?[A-Za-z0-9]{24,}", "tvly-"),
    _family("an ElevenLabs API key (sk_…)", _B + r"sk_[0-9a-f]{48}" + _E, "sk_"),
    _family("a Cerebras API key (csk-…)", _B + r"csk-[A-Za-z0-9]{40,}", "csk-"),
    _family("a Jina API key (jina_…)", _B + r"jina_[A-Za-z0-9_-]{40,}", "jina_"),
    _family("a Firecrawl API key (fc-…)", _B + r"fc-[0-9a-f]{32}" + _E, "fc-"),
    _family("a Linear API key (lin_api_…)", _B + r"lin_api_[A-Za-z0-9]{40}", "lin_api_"),
    _family("a Notion token (ntn_/secret_…)", _B + r"(?:ntn_\d{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})" + _E,
            "ntn_", "secret_"),
    _family("a Postman API key (PMAK-…)", r"PMAK-[0-9a-f]{24}-[0-9a-f]{34}", "PMAK-"),
    _family("a Doppler token (dp.pt.…)", _B + r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}", "dp."),
    _family("a HashiCorp Vault token (hvs.…)", _B + r"hv[sb]\.[A-Za-z0-9_-]{90,}", "hvs.", "hvb."),
    _family("a Terraform Cloud token (….atlasv1.…)", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}", "atlasv1", offset=15),
    _family("an Atlassian API token (ATATT3…)", _B + r"ATATT3[A-Za-z0-9_=-]{150,}", "ATATT3"),
    _family("a Mailchimp API key", _B + r"[0-9a-f]{32}-us\d{1,2}" + _E, "-us", offset=32),
    _family("a Sentry token (sntrys_/sntryu_…)", _B + r"sntry[su]_[A-Za-z0-9+/=_]{60,}", "sntry"),
    _family("a Square token (sq0atp-…)", _B + r"sq0(?:atp|csp)-[0-9A-Za-z_-]{22,}", "sq0atp-", "sq0csp-"),
    _family("an age secret key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", "AGE-SECRET-KEY-1"),
    _family("a Heroku API key (HRKU-…)", r"HRKU-AA[0-9A-Za-z_-]{58}", "HRKU-"),
    _family("a Grafana token (glc_/glsa_…)", _B + r"(?:glc_[A-Za-z0-9+/]{32,}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})",
            "glc_", "glsa_"),
    _family("an Alibaba Cloud access key id (LTAI…)", _B + r"LTAI[A-Za-z0-9]{20}" + _E, "LTAI"),
    _family("a Supabase key (sbp_/sb_secret_…)", _B + r"(?:sbp_[0-9a-f]{40}|sb_secret_[A-Za-z0-9_-]{20,})",
            "sbp_", "sb_secret_"),
    _family("a Mapbox secret token (sk.eyJ…)", _B + r"sk\.eyJ[A-Za-z0-9_-]{20,}+\.[A-Za-z0-9_-]{10,}", "sk.eyJ"),
    _family("a 1Password service-account token (ops_…)", _B + r"ops_eyJ[A-Za-z0-9+/]{100,}", "ops_eyJ"),
    # Keys of RAG stacks that gitleaks' rules (secret_rules, version 8.30.1) have no rule for:
    # LlamaCloud, Voyage AI and Fireworks AI. Their prefixes are short words, so the rest must look
    # random (letters and digits, 3+ bits of entropy): "pa-" opens slugs too.
    _family("a LlamaCloud API key (llx-…)", _B + r"llx-[A-Za-z0-9]{20,}+", "llx-", verify=_random_after_prefix),
    _family("a Voyage AI API key (pa-…)", _B + r"pa-[A-Za-z0-9_-]{32,}+", "pa-", verify=_random_after_prefix),
    _family("a Fireworks AI API key (fw_…)", _B + r"fw_[A-Za-z0-9]{20,}+", "fw_", verify=_random_after_prefix),
    # Mailgun's keys: gitleaks' rules find them only after a name holding "mailgun" (mailgun_key=…);
    # a bare key in a prompt or a tool's output is found by its shape: the private API key
    # (key-<32 hex>) and the newer form of private and webhook signing keys (<32 hex>-<8>-<8>).
    _family("a Mailgun API key (key-…)", _B + r"key-[0-9a-f]{32}" + _E, "key-"),
    # (searched from its "-<8>-<8>" tail, a literal "-" the search skips to, then its head checked:
    # starting at every hex digit of a text was a fifth of a 5 MB scan)
    _family("a Mailgun key (<32 hex>-<8 hex>-<8 hex>)", r"-[0-9a-f]{8}-[0-9a-f]{8}" + _E,
            verify=_mailgun_head, offset=None),
)
# kept for projects that read it: the kinds of the families
PATTERNS: dict[str, re.Pattern[str]] = {family.kind: family.pattern for family in FAMILIES}


class _HintIndex:
    """The families worth running on a text: those with a hint in it. Texts are mostly short (a
    model name, a role, a tool's description), and testing each of the ~100 hints one by one
    was most of a scan; an RE2 set of all hints finds every one a text holds, overlapping ones
    included, in one pass of its DFA (a regex of all hints, searched again after each place one
    started, took most of a base64 blob's scan). A family with a one-character hint (the Discord
    token's ".") or none is always run, and tests its hint itself: those would be found at every
    other place."""

    def __init__(self, families: tuple[Family, ...]) -> None:
        self._always = frozenset(index for index, family in enumerate(families)
                                 if not family.hints or min(map(len, family.hints)) < 2)
        by_hint: dict[str, set[int]] = {}
        for index, family in enumerate(families):
            if index not in self._always:
                for hint in family.hints:
                    by_hint.setdefault(hint, set()).add(index)
        # lower-case hints are looked for in the lower-cased text, the others in the text (as found_in)
        self._groups = tuple([(hint, frozenset(by_hint[hint])) for hint in by_hint if (hint == hint.lower()) == lower]
                             for lower in (True, False))

    @functools.cached_property
    def _sets(self) -> tuple[Any, Any]:
        """The RE2 sets of the lower-case hints and of the others, made on first use (the import stays cheap)."""
        import re2

        sets = []
        for group in self._groups:
            hints = re2.Set.SearchSet()
            for hint, _ in group:
                hints.Add(re.escape(hint).encode("utf-8"))
            hints.Compile()
            sets.append(hints)
        return sets[0], sets[1]

    def candidates(self, text: str, lowered: str) -> list[int]:
        """The indices, in order, of the families whose hints ``text`` holds, and those always run."""
        found = set(self._always)
        for hints, group, haystack in zip(self._sets, self._groups, (lowered, text)):
            for number in hints.Match(haystack.encode("utf-8", "surrogatepass")) or ():
                found |= group[number][1]
        return sorted(found)


_HINTS = _HintIndex(FAMILIES)
_BASIC = re.compile(r"\b[Bb]asic\s++([A-Za-z0-9+/]{8,}+={0,2})")

# ------------------------------------------------------------------ key-like names and their values
# a label: a name (up to 64 characters, starting where a run of name characters starts) and a
# separator (=, :, :=, =>); the name may be quoted (JSON, also JSON inside a string) or start with --
_LABEL = re.compile(r"(?<![\w.\-])-{0,2}([A-Za-z_][\w.\-]{0,63}+)(?:\\?[\"'])?[ \t]*+(?:=>|:=|[:=])(?!=|//)")
# its value: up to the next space, quote, separator or bracket
_VALUE = re.compile(r"[ \t]*+(?:\\?[\"'`])?([^\s\"'`,;&<>\\(){}\[\]]{1,4096}+)")
# a name is looked at only when it holds one of these (cheap test before the full one)
_LABEL_HINT = re.compile(r"(?i)key|token|secret|pass|pwd|pw|auth|cred|sig|cookie")
# "the key is …", "API key for the billing account: …"
_PROSE = re.compile(
    r"(?i)(?:(?<![\w\-])|" + _DIFF_MARK + r")"
    r"(?<!cache )(?<!page )(?<!sort )(?<!public )(?<!primary )(?<!foreign )(?<!idempotency )"
    r"(key|token|secret|password)\s++(?:is|was|for\b[^:\n]{1,80}+:)\s*+:?\s*+[\"'`]?([A-Za-z0-9_\-./+=~]{16,512}+)"
)
_PROSE_HINTS = ("key ", "token ", "secret ", "password ")

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# name words that say what kind of value follows
_PASSWORD_WORDS = {"password", "passwd", "pwd", "passphrase", "pass"}
_STRONG_SUFFIXES = (
    "secret", "token", "apikey", "secretkey", "accesskey", "privatekey", "accountkey", "subscriptionkey", "masterkey",
    "signingkey", "encryptionkey", "licensekey", "sessionkey", "clientkey", "authkey", "credential", "credentials",
    "auth", "authorization",
)
# keys and tokens that are no secret: cursors, cache and sort keys, public keys, content hashes
_NOT_SECRET = re.compile(
    r"(?:page|next|continuation|sync|csrf|xsrf|resume|cursor|max|min)token$"
    r"|(?:cache|idempotency|dedup|dedupe|sort|partition|primary|foreign|public|object|row|lookup|group|shard|routing"
    r"|map|hash|content|chunk|doc|document|index|vector|embedding|range|sequence)key$"
)
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_\-./+=~:%]+")
_PASSWORD_CHARS = re.compile(r"\S+")
_LETTER_RUN = re.compile(r"[A-Za-z]{16}")


def _words(name: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(name)]


# a recording names the same fields (role, content, type, …) in every request
@functools.lru_cache(maxsize=4096)
def _label_class(name: str) -> str | None:
    """How strongly a field or label name says that its value is a credential:
    "password", "strong" (api_key, *_secret, *_token, access_token, credentials, auth), "weak"
    (key, *_key: a key or an id; only key-shaped values count) or None."""
    words = _words(name)
    if not words:
        return None
    joined = "".join(words)
    if words[-1] in _PASSWORD_WORDS or joined.endswith(("password", "passwd")):
        return "password"
    if _NOT_SECRET.search(joined):
        return None
    if joined.endswith(_STRONG_SUFFIXES):
        return "strong"
    if joined.endswith("key"):
        return "weak"
    return None


def _query_class(name: str) -> str | None:
    """How a query parameter's name classes its value (the scrubbing rule, see scrub_query_parameter)."""
    if not _key_like_query_name(name):
        return None
    return "password" if set(_words(name)) & _PASSWORD_WORDS or "passw" in name.lower() else "strong"


def _key_like_query_name(name: str) -> bool:
    lowered = name.lower()
    if lowered in QUERY_PARAMETERS:
        return True
    rest = _HARMLESS_QUERY.sub(" ", re.sub(r"[^a-z0-9]", "", lowered))
    return any(word in rest for word in QUERY_WORDS) or bool(set(_words(name)) & QUERY_SHORT_WORDS)


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(c / len(value) * math.log2(c / len(value)) for c in counts.values())


def _pathish(value: str) -> bool:
    """A URL, or a path of lower-case words (projects/p/secrets/name), names a secret: it is none."""
    if "://" in value:
        return True
    return sum(1 for part in value.split("/") if len(part) >= 3 and part.isalpha() and part.islower()) >= 2


def _random_token(value: str) -> bool:
    """One token of key characters that looks random: 16+ characters, letters and digits, entropy ≥ 3 bits."""
    if not 16 <= len(value) <= 8192 or not _TOKEN_CHARS.fullmatch(value) or _pathish(value):
        return False
    letters = any(c.isalpha() for c in value)
    digits = any(c.isdigit() for c in value)
    mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
    # without digits, only a long run of mixed-case letters (not words joined by separators:
    # os.environ/OPENAI_API_KEY) looks random
    if not letters or not (digits or (mixed and len(value) >= 24 and _LETTER_RUN.search(value))):
        return False
    return _entropy(value) >= (3.0 if digits else 3.5)


def _password_like(value: str) -> bool:
    """A password after a password-like name: 6+ characters, letters with digits (or with symbols
    beyond - _ . /), not a path and not a mask (****, <…>, ${…}, {{…}})."""
    if not 6 <= len(value) <= 128 or not _PASSWORD_CHARS.fullmatch(value) or _pathish(value):
        return False
    if value.startswith(("/", "~/", "./")):  # PWD=/home/chef: a directory
        return False
    if value[0] in "<$%{*" or set(value) <= set("*x.X#•"):
        return False
    letters = any(c.isalpha() for c in value)
    digits = any(c.isdigit() for c in value)
    symbols = any(not c.isalnum() and c not in "-_./" for c in value)
    return letters and (digits or (symbols and len(value) >= 8))


def _value_kind(cls: str, value: str) -> str | None:
    """The kind of credential ``value`` is after a name of class ``cls``, or None."""
    if cls == "password":
        return "a password" if _password_like(value) else None
    for kind, shape in _KEY_SHAPED.items():
        if shape.fullmatch(value):
            return kind
    if cls == "strong":
        if 8 <= len(value) <= 512 and _decodes_to_user_and_password(value):
            return "a basic-auth credential (base64 user:password)"
        if _random_token(value):
            return "a high-entropy value"
    elif cls == "weak" and len(value) >= 20 and "." not in value and _random_token(value):
        if any(c.isupper() for c in value) and any(c.islower() for c in value):
            return "a high-entropy value"
    return None


def _basic_kinds(text: str, lowered: str) -> list[str]:
    if "basic" in lowered:
        for match in _BASIC.finditer(text):
            if _decodes_to_user_and_password(match.group(1)):
                return ["a basic-auth credential (Basic …)"]
    return []


def _labelled_kinds(text: str) -> list[str]:
    """Values after key-like names in NAME=value, NAME: value, "name": "value" and ?name=value
    forms. A key-like name's value is read once: the search goes on after it, so the work stays
    linear whatever the text repeats."""
    found = []
    position = 0
    while True:
        match = _LABEL.search(text, position)
        if match is None:
            return found
        position = match.end()
        name = match.group(1)
        if not _LABEL_HINT.search(name):
            continue
        start = match.start()
        if name.startswith("u0026") and text.endswith("\\", 0, start):  # & escaped in JSON text
            name, start = name[5:], start + 5
        query = (start > 0 and text[start - 1] in "?&") or text.endswith(("&amp;", "\\u0026"), 0, start)
        cls = _query_class(name) if query else _label_class(name)
        if cls is None:
            continue
        value_match = _VALUE.match(text, position)
        if value_match is None:
            continue
        value = value_match.group(1)
        position = value_match.end()
        kind = _value_kind(cls, unquote_plus(value) if query else value)
        if kind:
            found.append(f"{kind} in the key-like field {name!r}")


def _prose_kinds(text: str, lowered: str) -> list[str]:
    if any(hint in lowered for hint in _PROSE_HINTS):
        for match in _PROSE.finditer(text):
            label, value = match.group(1).lower(), match.group(2).rstrip(".")
            kind = _value_kind("password" if label == "password" else "strong", value)
            if kind or re.fullmatch(r"[0-9a-fA-F]{32,}", value):
                return [f"{kind or 'a hex key'} after '{label} is/for …:' in text"]
    return []


class _TextKinds(NamedTuple):
    """What the built-in rules find in a text alone, whatever its place: the kinds, by rule."""

    families: tuple[str, ...]
    ruleset: tuple[str, ...]
    basic: tuple[str, ...]
    labelled: tuple[str, ...]
    prose: tuple[str, ...]

    def __or__(self, other: tuple[Any, ...]) -> _TextKinds:  # type: ignore[override]
        return _TextKinds(*(tuple(dict.fromkeys(mine + theirs)) for mine, theirs in zip(self, other)))


_NOTHING = _TextKinds((), (), (), (), ())

# a text that holds another text encoded (a tool call's JSON arguments, a server-sent event's JSON
# data, a JSON body kept as a string) is read decoded too: there a key that opens a line follows
# "\n", and no rule would see a token start after the "n"
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|([nrtbf\"\\/']))")
_ESCAPED = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}
_NESTING = 3  # encodings read through (a JSON text inside a JSON string inside a JSON string)


def _decoded(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        code, char = match.groups()
        if code is not None:
            value = int(code, 16)
            return "\ufffd" if 0xD800 <= value <= 0xDFFF else chr(value)  # a lone surrogate half: not text
        return _ESCAPED.get(char, char)

    return _ESCAPE.sub(one, text)


def _read(text: str, clean: set[str]) -> _TextKinds:
    """What the built-in rules find in ``text`` and in what it encodes; nothing if it is in
    ``clean``, the texts of this scan they found nothing in (an equal str: a str subclass could
    claim to equal one of them)."""
    exact = type(text) is str
    if exact and text in clean:
        return _NOTHING
    read = _read_one(text)
    view = text
    for _ in range(_NESTING):
        if "\\" not in view:
            break
        decoded = _decoded(view)
        if decoded == view:
            break
        view = decoded
        read = read | _read_one(view)
    if exact and not any(read):
        # only a clean text is passed over: one holding a credential is read, and reported, at every place
        clean.add(text)
    return read


def _read_one(text: str) -> _TextKinds:
    from rag_core.evals.secret_rules import ruleset

    lowered = text.lower()
    families = (FAMILIES[index] for index in _HINTS.candidates(text, lowered))
    return _TextKinds(
        tuple(family.kind for family in families if family.found_in(text, lowered)),
        ruleset().kinds(text),
        tuple(_basic_kinds(text, lowered)),
        tuple(_labelled_kinds(text)) if _LABEL_HINT.search(text) else (),
        tuple(_prose_kinds(text, lowered)),
    )


def _named_kinds(text: str, field_name: str) -> list[str]:
    """The text as the value of a key-like field: decided by the field's name, so at every place."""
    cls = _label_class(field_name) if field_name else None
    kind = _value_kind(cls, text.strip()) if cls else None
    return [f"{kind} in the key-like field {field_name!r}"] if kind else []


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
        return _key_like_query_name(name)

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
    def find_in_text(self, text: str, where: str, field_name: str = "") -> list[Finding]:
        return self._find_in_text(text, where, field_name, set())

    def _find_in_text(self, text: str, where: str, field_name: str, clean: set[str]) -> list[Finding]:
        read = _read(text, clean)
        # the project's patterns and the field's name are tested at every place: not remembered
        project = [kind for kind, pattern in self.extra_patterns.items() if pattern.search(text)]
        # in the order findings have always been reported in
        kinds = [*read.families, *read.ruleset, *project, *read.basic, *_named_kinds(text, field_name),
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
