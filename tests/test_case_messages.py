"""What a newcomer reads when a hand-written file is wrong: the field as the file spells it, what
it must be in YAML's terms, the key a typo was meant to be, the tab a parser stopped at; never a
class name of the schema nor pydantic's own phrases. The walk at the end feeds every field of
every model a case file can hold values of every kind, and reads every message it gets."""

from __future__ import annotations

import copy
import re
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from rag_core.evals.common import validation_messages
from rag_core.evals.golden.case import GoldenCase, load_expect
from rag_core.evals.golden.case_files import parse_case_file
from rag_core.evals.common.errors import CaseFileError

TAB_FILE = "id: a\ninput: hi\nexpect:\n  output:\n\tcontains: x\n"
TAB = "tab character at line 5, column 1: indent with spaces"


def case_error(tmp_path: Path, text: str) -> str:
    path = tmp_path / "case.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CaseFileError) as raised:
        parse_case_file(path)
    return str(raised.value)


def test_a_typo_key_is_named_with_the_key_it_was_meant_to_be(tmp_path):
    assert case_error(tmp_path, "id: a\ninptu: hi\n").endswith("case.yaml:2: unknown key 'inptu' (did you mean 'input'?)")


def test_a_typo_key_in_a_nested_mapping_is_named_with_its_mapping(tmp_path):
    error = case_error(tmp_path, "id: a\ninput: hi\nexpect:\n  output: {contians: tamarind}\n")
    assert error.endswith("case.yaml:4: unknown key 'contians' in `expect.output` (did you mean 'contains'?)"), error


def test_a_key_left_unindented_is_named_with_where_it_belongs(tmp_path):
    error = case_error(tmp_path, "id: a\ninput: hi\nexpect:\noutput: {contains: x}\n")
    assert "case.yaml:3: `expect` must be a mapping, but it is empty (null): indent what belongs to it under expect:" \
        in error, error
    assert "case.yaml:4: unknown key 'output' (it is a key of `expect`: indent it under expect:)" in error, error


def test_a_mis_indented_expect_says_it_must_be_a_mapping_without_a_class_name(tmp_path):
    error = case_error(tmp_path, "id: a\ninput: hi\nexpect: output contains x\n")
    assert error.endswith("case.yaml:3: `expect` must be a mapping, got 'output contains x'"), error
    assert "Expect" not in error and "dictionary" not in error


@pytest.mark.parametrize(("text", "says"), [
    ("id: a\ninput: hi\nstream: maybe\n", "`stream` must be true or false, or a list, got 'maybe'"),
    ("id: a\ninput: hi\nagent: 3\n", "`agent` must be a mapping or a string, got 3"),
    ("id: a\ninput: hi\nignore: [3]\n", "`ignore[0]` must be a string or a mapping, got 3"),
    ("id: a\ninput: hi\nignore: [{path: output}]\n", "missing key 'pattern' in `ignore[0]` (it is required)"),
    ("id: a\ninput: hi\nignore: ['requests[']\n", "ignore[0]: 'requests[' is not a path"),
    ("id: a\ninput: hi\nexpect: {retrieved: {names: [d], k: 0}}\n", "`expect.retrieved.k` must be at least 1, got 0"),
    ("id: a\ninput: hi\nmodel: {api: openai}\n", "`model.api` must be one of 'openai-responses', 'openai-chat', "
                                                  "'gemini' or 'anthropic-messages', got 'openai'"),
    ("id: a\ninput: hi\nemulate: [{status: x, message: m}]\n", "`emulate[0].status` must be a whole number, got 'x'"),
    ("id: a\ninput: hi\nmodel: {options: {temprature: 0.2}}\n", "has no option 'temprature' (did you mean 'temperature'?)"),
    ("id: a\nturns: hi\n", "`turns` must be a list, got 'hi'"),
    ("input: hi\n", "case.yaml: missing key 'id' (it is required)"),
])
def test_a_field_of_several_kinds_is_one_message_in_the_files_terms(tmp_path, text, says):
    error = case_error(tmp_path, text)
    assert says in error, error
    assert error.count("\n") == 0, error


def test_a_tab_in_a_case_file_is_named_as_a_tab(tmp_path):
    assert case_error(tmp_path, TAB_FILE).endswith(f"case.yaml: {TAB} (YAML allows no tabs in indentation)")


def test_a_tab_in_a_golden_is_named_as_a_tab(tmp_path):
    golden = tmp_path / "a.golden.yaml"
    golden.write_text("system_prompt: hi\ntool_calls:\n  calls: []\noutput:\n\tequals: x\n")
    with pytest.raises(CaseFileError, match=re.escape("a.golden.yaml: tab character at line 5, column 1: indent with spaces")):
        load_expect(golden)


def test_a_tab_in_a_suite_file_is_named_as_a_tab(tmp_path):
    from rag_core.evals.retrieval.suite import SuiteFileError, load_suite

    suite = tmp_path / "suite.yaml"
    suite.write_text("id: s\ncorpus:\n\tpath: corpus.yaml\n")
    with pytest.raises(SuiteFileError, match=re.escape("suite.yaml: tab character at line 3, column 1: indent with spaces")):
        load_suite(suite)


def test_a_tab_in_a_cassette_is_named_as_a_tab(tmp_path):
    from rag_core.evals.recording.cassette_format import read_cassette
    from rag_core.evals.common.errors import CassetteFileError

    cassette = tmp_path / "c.yaml"
    cassette.write_text("version: 1\ninteractions:\n\t- request: {}\n")
    with pytest.raises(CassetteFileError, match=re.escape("tab character at line 3, column 1: indent with spaces")):
        read_cassette(cassette)


def test_a_tab_after_a_value_is_named_as_a_tab_too():
    import yaml

    from rag_core.evals.common.yaml_read import tab_problem

    text = "id: a\nexpect:\n  output:\n    contains: x\t# note\n"  # the pure-Python parser stops at it
    with pytest.raises(yaml.YAMLError) as raised:
        yaml.load(text, Loader=yaml.SafeLoader)
    assert tab_problem(raised.value, text) == ("tab character at line 4, column 16: write spaces instead (YAML allows "
                                               "no tab there)")


# ------------------------------------------------------------------ every field of every model

# where each model of a case file sits, the least it needs there to be valid, and what else the
# case needs for it (an emulate_judge verdict needs its judge)
PLACES: dict[str, tuple[tuple, dict, dict]] = {
    "GoldenCase": ((), {"id": "a", "input": "hi"}, {}),
    "ModelSpec": (("model",), {}, {}),
    "KnowledgeSpec": (("knowledge",), {"corpus": "c"}, {}),
    "Expect": (("expect",), {}, {}),
    "ToolCallsExpect": (("expect", "tool_calls"), {}, {}),
    "ExpectedCall": (("expect", "tool_calls", "calls", 0), {"name": "t"}, {}),
    "OutputExpect": (("expect", "output"), {"contains": "x"}, {}),
    "ErrorExpect": (("expect", "error"), {}, {}),
    "RetrievedExpect": (("expect", "retrieved"), {"names": ["d"]}, {}),
    "JudgeSpec": (("expect", "judge", 0), {"metric": "answer_relevance"}, {}),
    "EmulatedVerdict": (("emulate_judge", 0), {"score": 1, "reason": "r"},
                        {"expect": {"judge": [{"metric": "answer_relevance"}]}}),
    "RepeatScript": (("emulate_repeats", 0), {}, {}),
    "NormalizeRule": (("normalize", 0), {"path": "output", "placeholder": "x"}, {}),
    "IgnoreRule": (("ignore", 0), {"path": "output", "pattern": "x"}, {}),
    "ScriptedTurn": (("emulate", 0), {"text": "a"}, {}),
    "ScriptedError": (("emulate", 0), {"status": 500, "message": "m"}, {}),
    "ScriptedToolCall": (("emulate", 0, "tool_calls", 0), {"name": "t"}, {}),
    "ScriptedEndpoint": (("emulate", 0), {"endpoint": "GET /v1/files"}, {}),
}
# the keys that make a script entry what it is: without one, the entry is read as a model turn,
# whose message is about the keys a turn does not have
KIND_KEYS = (("ScriptedError", "status"), ("ScriptedEndpoint", "endpoint"))
WRONG_VALUES = [None, True, 3, 2.5, -1, float("nan"), "text", "", [1], [], {"k": 1}, {1: "x"}, "2026-13-45"]
# what no message may say: pydantic's phrases and markers, the schema's class names
PYDANTIC = ("Input should", "Value error", "Field required", "Extra inputs", "function-", "nullable[", "tagged-union",
            "list[", "dict[", "[key]", "instance of")


def reachable_models() -> dict[str, type[BaseModel]]:
    found: dict[str, type[BaseModel]] = {}
    pending: list = [GoldenCase]
    while pending:
        annotation = pending.pop()
        origin = typing.get_origin(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if annotation.__name__ not in found:
                found[annotation.__name__] = annotation
                pending += [info.annotation for info in annotation.model_fields.values()]
        elif origin is not None:
            pending += [arg for arg in typing.get_args(annotation) if not isinstance(arg, (str, int, float))]
    return found


def with_value(model: str, changes: dict | None = None, drop: str | None = None) -> dict:
    path, least, needs = PLACES[model]
    case = copy.deepcopy({**PLACES["GoldenCase"][1], **needs})
    inner = {**copy.deepcopy(least), **(changes or {})}
    if drop is not None:
        inner.pop(drop, None)
    if not path:
        return inner
    node = case
    for part, following in zip(path, path[1:] + (None,)):
        if following is None:
            if isinstance(node, list):
                node[part:part + 1] = [inner]
            else:
                node[part] = inner
        else:
            empty = [] if isinstance(following, int) else {}
            if isinstance(node, list):
                while len(node) <= part:
                    node.append(empty)
                node = node[part]
            else:
                node = node.setdefault(part, empty)
    return case


def messages_of(data: dict) -> tuple[list[str], set[tuple[str, str]]]:
    """The messages a case file's reader gets, and pydantic's (type, message) of each error behind them."""
    try:
        GoldenCase.model_validate(data)
    except ValidationError as exc:
        return ([p.text for p in validation_messages.problems(exc, data, GoldenCase)],
                {(e["type"], e["msg"]) for e in exc.errors()})
    return [], set()


@pytest.fixture(scope="module")
def walked() -> list[tuple[str, str, set[str]]]:
    """(what was tried, the message, pydantic's errors) for every wrong value of every field."""
    models = reachable_models()
    assert set(models) == set(PLACES), "a model of the case schema has no place in PLACES: add it"
    tried = []
    for name, model in models.items():
        assert not messages_of(with_value(name))[0], f"PLACES[{name!r}] is not valid as it stands"
        fields = [f for f, info in model.model_fields.items() if not info.exclude]
        for field in fields:
            for value in WRONG_VALUES:
                messages, kinds = messages_of(with_value(name, {field: value}))
                tried += [(f"{name}.{field} = {value!r}", m, kinds) for m in messages]
            if model.model_fields[field].is_required() and (name, field) not in KIND_KEYS:
                messages, kinds = messages_of(with_value(name, drop=field))
                tried += [(f"{name} without {field}", m, kinds) for m in messages]
                assert any(f"missing key {field!r}" in m for m in messages), (name, field, messages)
            if len(field) >= 4:
                typo = field[1] + field[0] + field[2:]
                messages, kinds = messages_of(with_value(name, {typo: 1}))
                tried += [(f"{name}: the key {typo}", m, kinds) for m in messages]
                assert any(f"unknown key {typo!r}" in m and "did you mean" in m for m in messages), (name, typo, messages)
    return tried


def test_no_message_names_a_class_of_the_schema_or_speaks_pydantic(walked):
    classes = re.compile(r"\b(" + "|".join(reachable_models()) + r")\b")
    bad = [(tried, message) for tried, message, _ in walked
           if classes.search(message) or any(phrase in message for phrase in PYDANTIC)]
    assert not bad, "\n".join(f"{tried}: {message}" for tried, message in bad[:20])


def test_every_error_type_the_schema_raises_has_a_message_written_for_it(walked):
    """No error reaches the reader in pydantic's words (what the messages fall back to for a type
    no message is written for), but a validator's of the schema, which says what to do itself."""
    fallen_back = sorted({(kind, tried) for tried, message, errors in walked for kind, said in errors
                          if kind not in ("value_error", "assertion_error")
                          and said.replace("Input should be", "it must be") in message})
    assert not fallen_back, f"no message is written for these error types: {fallen_back[:10]}"
    seen = {kind for _, _, errors in walked for kind, _ in errors}
    # the walk reaches every kind of problem it is meant to
    assert {"missing", "extra_forbidden", "model_type", "dict_type", "list_type", "string_type", "int_type",
            "float_type", "bool_type", "literal_error", "value_error", "greater_than_equal", "less_than_equal",
            "finite_number", "string_pattern_mismatch", "datetime_parsing"} <= seen, sorted(seen)


def test_every_message_names_the_field_it_is_about(walked):
    unnamed = [(tried, m) for tried, m, _ in walked if not re.match(r"(`[^`]+`|unknown key |missing key |the key |[\w.\[\]]+: |give |stream: |turns is|expect\.|a target|agent\.|emulate_judge)", m)]
    assert not unnamed, "\n".join(f"{tried}: {m}" for tried, m in unnamed[:20])
