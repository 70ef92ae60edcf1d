"""gitleaks' rules, read as data: the credential families of a maintained ruleset, applied to each
text the detector reads (``rag_core.evals.credentials``).

The ruleset is gitleaks' default configuration (``gitleaks.toml`` beside this file, version
``VERSION``, MIT licensed: ``LICENSE-gitleaks``), unchanged: byte for byte the configuration built
into the gitleaks release binary of that version. No maintained secret scanner publishes its
rules as a data file on PyPI or npm (gitleaks, Betterleaks and Kingfisher compile theirs into
binaries that wrapper packages ship; detect-secrets keeps its rules in Python code), so the file
is kept here, pinned by ``SHA256`` (a test fails on any edit), and
``python -m evals.upstream.gitleaks_rules`` compares it with the binary of the pinned version, or
brings in a new version.

Rules are applied as gitleaks applies them: a rule runs on a text only when one of its keywords
is in it (lower-cased); each match's secret is the rule's ``secretGroup``, else its first
non-empty group, else the match; a secret whose Shannon entropy is at most the rule's
``entropy`` is passed over, as is one the global or the rule's allowlists allow (``regexes``
against the secret, the match or the line as ``regexTarget`` says; ``stopwords`` in the secret).
What needs a file's path is left out: rules that only apply to some paths (``PATH_RULES``) and
allowlist entries that need a path or a commit.

gitleaks' patterns are Go regular expressions (RE2): they run here on Google's RE2 (``google-re2``),
the engine they are written for, whose matching time is linear in the text whatever the pattern.
Python's ``re`` would backtrack on them (``[\\w.-]{0,50}?(?:key)…`` at every place) and does not
read all of their syntax.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
import tomllib
from collections import Counter
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

RULESET = "gitleaks"
VERSION = "8.30.1"
FILE = "gitleaks.toml"
SHA256 = "e163e53b9e7e8a8511e77271e2b323ed057759542a6d988258afe3a1fa329caf"

# rules not applied, and why
LEFT_OUT = {
    # any key-like name followed by a value (a 10-150 character run after "key", "token", "api",
    # "access"…): in provider traffic that is prompt_cache_key, idempotency_key, nextPageToken and
    # document keys, all hashes or ids. The detector's own key-like-name rules read the same
    # places with the names that carry no secret left out (credentials/names.py, _NOT_SECRET).
    "generic-api-key": "values after any key-like name: the detector's own labelled rules read those",
}


class RulesetError(RuntimeError):
    """The ruleset cannot be read or compiled; the message names the file, the rule and the cause."""


@dataclass(frozen=True)
class _Allowlist:
    target: str  # "secret", "match" or "line": what the regexes are tried on
    regexes: tuple[Any, ...]
    stopwords: tuple[str, ...]
    all_of: bool  # condition AND: the regexes and the stopwords must both say allowed

    def allows(self, secret: str, match: str, line: str) -> bool:
        target = {"secret": secret, "match": match, "line": line}[self.target]
        by_regex = any(pattern.search(target) for pattern in self.regexes)
        lowered = secret.lower()
        by_word = any(word in lowered for word in self.stopwords)
        if self.all_of:
            return (by_regex or not self.regexes) and (by_word or not self.stopwords)
        return by_regex or by_word


@dataclass(frozen=True)
class Rule:
    id: str
    pattern: Any  # an re2 pattern, compiled for UTF-8 bytes
    keywords: tuple[str, ...]
    entropy: float
    group: int
    allowlists: tuple[_Allowlist, ...]

    @property
    def kind(self) -> str:
        return f"a match of the {RULESET} rule '{self.id}'"

    def finds(self, data: bytes, text_allowlists: tuple[_Allowlist, ...]) -> bool:
        """Whether a match in ``data`` (a text as UTF-8) is a secret no allowlist lets pass."""
        for match in self.pattern.finditer(data):
            whole = match.group(0)
            secret = whole
            if self.group:
                secret = match.group(self.group) or b""
            else:
                secret = next((group for group in match.groups() if group), whole)
            secret_text = secret.decode("utf-8", "replace")
            if self.entropy and _entropy(secret_text) <= self.entropy:
                continue
            line = _line(data, match.start(), match.end())
            args = (secret_text, whole.decode("utf-8", "replace"), line)
            if any(allowlist.allows(*args) for allowlist in (*text_allowlists, *self.allowlists)):
                continue
            return True
        return False


def _line(data: bytes, start: int, end: int) -> str:
    first = data.rfind(b"\n", 0, start) + 1
    last = data.find(b"\n", end)
    return data[first:last if last >= 0 else len(data)].decode("utf-8", "replace")


def _entropy(value: str) -> float:
    if not value:
        return 0.0
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


@dataclass(frozen=True)
class Ruleset:
    rules: tuple[Rule, ...]
    allowlists: tuple[_Allowlist, ...]  # the global ones
    path_rules: tuple[str, ...]  # the ids of rules left out because they need a file's path
    _keywords: Any  # an re2 Set of every keyword, case-insensitive
    _by_keyword: tuple[tuple[int, ...], ...]  # the rules of each keyword of the set, by its index

    def kinds(self, text: str) -> tuple[str, ...]:
        """The kinds of the rules that find a secret in ``text``."""
        data = text.encode("utf-8", "surrogatepass")
        # one pass finds every keyword the text holds, overlapping ones included
        found = self._keywords.Match(data)
        if not found:
            return ()
        candidates = sorted({index for keyword in found for index in self._by_keyword[keyword]})
        return tuple(self.rules[index].kind for index in candidates
                     if self.rules[index].finds(data, self.allowlists))


def _compile(pattern: str, where: str) -> Any:
    import re2

    try:
        # RE2's default memory budget (8 MB a pattern): past it a pattern's DFA cache is reset, or
        # matching falls back to RE2's NFA, slower and still linear
        return re2.compile(pattern.encode("utf-8"))
    except re2.error as exc:
        raise RulesetError(f"{FILE}: {where}: the pattern does not compile ({exc})") from None


def _allowlists(entries: list[dict[str, Any]], where: str) -> tuple[_Allowlist, ...]:
    out = []
    for number, entry in enumerate(entries):
        all_of = str(entry.get("condition", "OR")).upper() == "AND"
        if entry.get("paths") or entry.get("commits"):
            # only a path or a commit says allowed: a text without one is never allowed by it (AND),
            # and by OR its regexes and stopwords still allow on their own
            if all_of:
                continue
        regexes = tuple(_compile(text, f"{where} allowlist {number + 1}") for text in entry.get("regexes", []))
        stopwords = tuple(word.lower() for word in entry.get("stopwords", []))
        if regexes or stopwords:
            out.append(_Allowlist(entry.get("regexTarget", "secret") or "secret", regexes, stopwords, all_of))
    return tuple(out)


def read_text() -> bytes:
    """The ruleset file, checked against its pinned digest."""
    data = files(__name__).joinpath(FILE).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        raise RulesetError(f"{FILE}: its SHA-256 is {digest}, not the pinned {SHA256}: the file was changed "
                           "by hand; python -m evals.upstream.gitleaks_rules brings in a released version")
    return data


_compiled: Ruleset | None = None
_compiling = threading.Lock()


def ruleset() -> Ruleset:
    """The ruleset, compiled once per process (on first use: the plugin's import stays cheap).
    Once, too, when several threads ask for it first at the same moment (runs at once each screen
    what they write): ``functools.cache`` would let each of them compile it."""
    global _compiled
    if _compiled is None:
        with _compiling:
            if _compiled is None:
                _compiled = _compile_ruleset()
    return _compiled


def _compile_ruleset() -> Ruleset:
    try:
        import re2  # noqa: F401
    except ImportError:
        raise RulesetError("the credential detector runs gitleaks' rules on Google's RE2: "
                           "pip install google-re2") from None
    config = tomllib.loads(read_text().decode("utf-8"))
    rules, path_rules = [], []
    for entry in config.get("rules", []):
        rule_id = entry["id"]
        if "regex" not in entry or entry.get("path"):
            path_rules.append(rule_id)
            continue
        if rule_id in LEFT_OUT:
            continue
        where = f"rule '{rule_id}'"
        rules.append(Rule(rule_id, _compile(entry["regex"], where),
                          tuple(keyword.lower() for keyword in entry.get("keywords", [])),
                          float(entry.get("entropy", 0.0)), int(entry.get("secretGroup", 0)),
                          _allowlists(entry.get("allowlists", []), where)))
    missing = [rule.id for rule in rules if not rule.keywords]
    if missing:  # every rule of the pinned version has keywords; one without would run on every text
        raise RulesetError(f"{FILE}: rules without keywords: {', '.join(missing)}")
    import re2

    by_keyword: dict[str, set[int]] = {}
    for index, rule in enumerate(rules):
        for keyword in rule.keywords:
            by_keyword.setdefault(keyword, set()).add(index)
    options = re2.Options()
    options.case_sensitive = False
    keywords = re2.Set.SearchSet(options)
    for keyword in by_keyword:
        keywords.Add(re.escape(keyword).encode("utf-8"))
    keywords.Compile()
    global_entries = [config["allowlist"]] if "allowlist" in config else []
    global_entries += config.get("allowlists", [])
    return Ruleset(tuple(rules), _allowlists(global_entries, "the global allowlist"), tuple(path_rules),
                   keywords, tuple(tuple(sorted(indices)) for indices in by_keyword.values()))
