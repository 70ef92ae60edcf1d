"""The ruleset the detector reads as data (rag_core/evals/secret_rules): gitleaks' released rules,
unchanged, compiled on RE2, applied as gitleaks applies them; and what it lacks, which the
detector's own families add."""

from __future__ import annotations

import hashlib
import random
import string
import tomllib
from importlib.resources import files

import pytest

from rag_core.evals import secret_rules
from rag_core.evals.credentials import Detector
from rag_core.evals.secret_rules import LEFT_OUT, RULESET, SHA256, VERSION, RulesetError, ruleset

HEX = "0123456789abcdef"
_rng = random.Random(31)


def r(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def _config() -> dict:
    return tomllib.loads(secret_rules.read_text().decode("utf-8"))


def test_the_ruleset_is_the_pinned_release_of_gitleaks_unchanged_with_its_licence():
    data = files(secret_rules.__name__).joinpath("gitleaks.toml").read_bytes()
    assert (RULESET, VERSION) == ("gitleaks", "8.30.1")
    assert hashlib.sha256(data).hexdigest() == SHA256  # any edit by hand fails here; the script brings in releases
    assert data.startswith(b"# This file has been auto-generated") and _config()["title"] == "gitleaks config"
    licence = files(secret_rules.__name__).joinpath("LICENSE-gitleaks").read_text()
    assert "MIT License" in licence and "Copyright (c) 2019 Zachary Rice" in licence and VERSION in licence


def test_a_ruleset_file_changed_by_hand_is_refused(monkeypatch):
    monkeypatch.setattr(secret_rules, "SHA256", "0" * 64)
    with pytest.raises(RulesetError, match=r"gitleaks.toml: its SHA-256 is [0-9a-f]{64}, not the pinned 0{64}"):
        secret_rules.read_text()


def test_every_rule_is_compiled_on_re2_except_those_left_out_with_a_reason():
    config = _config()
    compiled = ruleset()
    with_path = {rule["id"] for rule in config["rules"] if "regex" not in rule or rule.get("path")}
    assert set(compiled.path_rules) == with_path
    assert {rule.id for rule in compiled.rules} == {rule["id"] for rule in config["rules"]} - with_path - set(LEFT_OUT)
    assert len(compiled.rules) > 200 and all(rule.keywords for rule in compiled.rules)
    assert all(type(rule.pattern).__module__ == "re2" for rule in compiled.rules)  # linear whatever the pattern


@pytest.mark.parametrize("text", [
    "llx-" + r(string.ascii_letters + string.digits, 48),
    "pa-" + r(string.ascii_letters + string.digits, 43),
    "fw_" + r(string.ascii_letters + string.digits, 24),
    "key-" + r(HEX, 32),
    f"{r(HEX, 32)}-{r(HEX, 8)}-{r(HEX, 8)}",
], ids=["llamacloud", "voyage", "fireworks", "mailgun", "mailgun-hex"])
def test_the_families_the_detector_adds_are_the_ones_the_ruleset_lacks(text):
    """If a later release finds these by itself, the detector's own families for them can go."""
    assert ruleset().kinds(f"the answer: {text}") == ()
    assert Detector().find(f"the answer: {text}")


def test_the_ruleset_finds_mailguns_keys_only_after_a_name_that_says_mailgun():
    key = "key-" + r(HEX, 32)
    assert ruleset().kinds(f"MAILGUN_API_KEY={key}") == ("a match of the gitleaks rule 'mailgun-private-api-token'",)
    assert ruleset().kinds(f"api key: {key}") == ()


def test_entropy_and_allowlists_are_applied_as_gitleaks_applies_them():
    found = ("a match of the gitleaks rule 'pulumi-api-token'",)
    assert ruleset().kinds("pul-" + r(HEX, 40)) == found
    assert ruleset().kinds("pul-" + "0" * 40) == ()  # entropy at most the rule's 2 bits
    # a global allowlist's stopword in the secret
    assert ruleset().kinds("pscale_pw_abcdefghijklmnopqrstuvwxyz" + r(HEX, 10)) == ()
    assert ruleset().kinds("pscale_pw_" + r(HEX, 40)) == ("a match of the gitleaks rule 'planetscale-password'",)


def test_keywords_are_found_wherever_they_overlap():
    """A rule runs only where one of its keywords is; one keyword inside another ("sk" in "ask",
    "ey" in "key") hides neither."""
    token = "xkeysib-" + r(HEX, 64) + "-" + r(string.ascii_lowercase + string.digits, 16)
    assert ruleset().kinds(f"ask the key {token}") == ("a match of the gitleaks rule 'sendinblue-api-token'",)


def test_the_upstream_script_finds_the_configuration_in_a_binary():
    from evals.upstream.gitleaks_rules import embedded_config

    config = secret_rules.read_text()
    assert embedded_config(b"\x7fELF\x00" + b"\x00" * 16 + config + b"\x00\x00\xff") == config
    # Go lays strings end to end: text of the binary right after the file is not the file's
    assert embedded_config(b"\x00" + config + b"unexpected EOF\x00") == config


def test_threads_asking_for_the_ruleset_first_at_once_compile_it_once(monkeypatch):
    # runs at once (--concurrency) each screen what they write: the first screenings meet
    import threading
    import time

    monkeypatch.setattr(secret_rules, "_compiled", None)
    read, reads = secret_rules.read_text, []

    def slow_read() -> bytes:
        reads.append(threading.get_ident())
        time.sleep(0.05)  # long enough for every thread to arrive while the first one compiles
        return read()

    monkeypatch.setattr(secret_rules, "read_text", slow_read)
    start, got = threading.Barrier(4), []

    def ask() -> None:
        start.wait()
        got.append(ruleset())

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(reads) == 1
    assert len(got) == 4 and all(each is got[0] for each in got)
