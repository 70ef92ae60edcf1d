"""Within one scan the detector reads a text once, however often a recording repeats it (each
request sends the prompt, the tools and every earlier turn again), and that changes nothing it
finds: a credential is found at every place it occurs, a text is only ever taken for one equal to
it, and what the text alone does not decide (the field's name, the project's patterns) is tested
at every place."""

from __future__ import annotations

import re

import pytest

from rag_core.evals.credentials import FAMILIES, Detector, Family
from rag_core.evals.credentials.family_index import FAMILY_INDEX

PROMPT = "You are a cooking assistant. Answer from the knowledge base; cite the recipe you used."
KEY = "sk-proj-" + "AbCdEfGh0123" * 4  # an OpenAI-style key (fake)
COHERE_SHAPED = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCd"  # a key only under a key-like name


def conversation(turns: int, planted: str) -> dict:
    """A recording's requests: each sends the system prompt and every earlier turn again."""
    said = [{"role": "system", "content": PROMPT}, {"role": "user", "content": planted}]
    requests = []
    for turn in range(turns):
        requests.append({"request": {"body": {"json": {"input": list(said)}}}})
        said.append({"role": "assistant", "content": f"turn {turn}: soak the noodles."})
    return {"interactions": requests}


def test_a_key_repeated_in_every_request_is_found_at_every_place_scan_after_scan():
    data = conversation(4, f"my key is {KEY} please keep it")
    detector = Detector()
    places = [f"interactions[{turn}].request.body.json.input[1].content" for turn in range(4)]
    for _ in range(2):  # the second scan meets texts the first one read
        findings = detector.find(data)
        assert [f.where for f in findings if "OpenAI-style" in f.kind] == places


def test_a_text_read_clean_never_hides_a_different_text():
    detector = Detector()
    clean = f"the recipe says: {'x' * len(KEY)} and nothing else"
    assert detector.find(clean) == []
    # the same length, the same start and end: only equality makes a text one already read
    dirty = clean.replace("x" * len(KEY), KEY)
    assert len(dirty) == len(clean)
    assert [f.kind for f in detector.find({"a": clean, "b": dirty, "c": clean})] == [
        "an OpenAI-style key (sk-…)"]


def test_a_str_subclass_equal_to_a_clean_text_is_read_itself():
    class LooksClean(str):  # claims to be the clean prompt
        def __eq__(self, other: object) -> bool:
            return True

        def __hash__(self) -> int:
            return hash(PROMPT)

    findings = Detector().find([PROMPT, LooksClean(f"{PROMPT} {KEY}")])
    assert [(f.where, f.kind) for f in findings] == [("[1]", "an OpenAI-style key (sk-…)")]


def test_a_clean_text_under_a_key_like_name_is_still_judged_by_that_name():
    findings = Detector().find({"content": COHERE_SHAPED, "api_key": COHERE_SHAPED})
    assert [(f.where, f.kind) for f in findings] == [
        ("api_key", "a Cohere-style key (40 letters and digits) in the key-like field 'api_key'")]


def test_the_projects_patterns_apply_at_every_place_of_a_text_the_built_in_rules_find_clean():
    text = "order ref TENANT-7731-ALPHA shipped"
    assert Detector().find(text) == []
    project = Detector(extra_patterns={"a tenant id": re.compile(r"TENANT-\d+")})
    assert [(f.where, f.kind) for f in project.find({"one": text, "two": [text]})] == [
        ("one", "a tenant id"), ("two[0]", "a tenant id")]


@pytest.mark.parametrize("text, kinds", [
    # a Mailchimp key's hex may end in "fc": the Firecrawl hint "fc-" overlaps Mailchimp's "-us"
    ("code 0123456789abcdef0123456789abcdfc-us12 x", ["a Mailchimp API key"]),
    # one hint the prefix of another at the same place (sk_ of sk_live_): both families run
    ("sk_" + "0123456789abcdef" * 3 + " and sk_live_AbCdEf0123456789",
     ["a Stripe secret key (sk_live_/rk_live_/…_test_)", "an ElevenLabs API key (sk_…)"]),
    ("-----BEGIN PGP PRIVATE KEY BLOCK-----", ["a PGP private key block"]),
    ("-----BEGIN OPENSSH PRIVATE KEY-----", ["a PEM private key"]),
])
def test_families_whose_hints_overlap_are_all_run(text, kinds):
    # the hand-written families only (the ruleset's rules have keywords of their own)
    families = {family.kind for family in FAMILIES}
    assert [f.kind for f in Detector().find(text) if f.kind in families] == kinds


def test_a_text_repeated_across_requests_is_read_by_the_families_once(monkeypatch):
    data = conversation(20, "a question about laksa. Asked once: 7f3c9a1e")
    texts = {message["content"] for interaction in data["interactions"]
             for message in interaction["request"]["body"]["json"]["input"]}
    reads: list[str] = []
    found_in = Family.found_in

    def counted(self: Family, text: str, lowered: str) -> bool:
        reads.append(text)
        return found_in(self, text, lowered)

    monkeypatch.setattr(Family, "found_in", counted)
    assert Detector().find(data) == []
    # each family its hints select (here those always run: the Discord token's ".", the Mailgun
    # key's tail), at the text's first place only
    assert {text: reads.count(text) for text in texts} == {
        text: len(FAMILY_INDEX.candidates(text, text.lower())) for text in texts}
    assert len(reads) <= len(texts) * len(FAMILIES)
