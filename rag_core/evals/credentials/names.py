"""Names that say credential: the request headers and query parameters scrubbed by their name,
and how strongly a field's or a label's name says that its value is a credential."""

from __future__ import annotations

import functools
import re

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

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# name words that say what kind of value follows
PASSWORD_WORDS = {"password", "passwd", "pwd", "passphrase", "pass"}
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


def name_words(name: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(name)]


# a recording names the same fields (role, content, type, …) in every request
@functools.lru_cache(maxsize=4096)
def label_class(name: str) -> str | None:
    """How strongly a field or label name says that its value is a credential:
    "password", "strong" (api_key, *_secret, *_token, access_token, credentials, auth), "weak"
    (key, *_key: a key or an id; only key-shaped values count) or None."""
    words = name_words(name)
    if not words:
        return None
    joined = "".join(words)
    if words[-1] in PASSWORD_WORDS or joined.endswith(("password", "passwd")):
        return "password"
    if _NOT_SECRET.search(joined):
        return None
    if joined.endswith(_STRONG_SUFFIXES):
        return "strong"
    if joined.endswith("key"):
        return "weak"
    return None


def query_class(name: str) -> str | None:
    """How a query parameter's name classes its value (the scrubbing rule, see ``Detector.scrub_query_parameter``)."""
    if not key_like_query_name(name):
        return None
    return "password" if set(name_words(name)) & PASSWORD_WORDS or "passw" in name.lower() else "strong"


def key_like_query_name(name: str) -> bool:
    lowered = name.lower()
    if lowered in QUERY_PARAMETERS:
        return True
    rest = _HARMLESS_QUERY.sub(" ", re.sub(r"[^a-z0-9]", "", lowered))
    return any(word in rest for word in QUERY_WORDS) or bool(set(name_words(name)) & QUERY_SHORT_WORDS)
