"""What a replayed golden case costs beyond its own run (docs/scale.md, "Replay at scale"): the
garbage collector's pace while it runs, vcrpy's filtering of each replayed request, and building
the cassette's and the golden's YAML. Each keeps the behaviour it had."""

from __future__ import annotations

import datetime
import gc
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_core.evals.plugins import garbage_collection
from rag_core.evals.recording import routing
from rag_core.evals.golden import runner
from rag_core.evals.common import yaml_read
from rag_core.evals.recording.recorder import CaseRecorder
from tests.golden_project import CASES, project, record  # noqa: E402,F401  (project: a fixture)
import httpx  # noqa: E402

# HTTPX's transport as the library defines it, taken before any cassette patches it (vcrpy's
# stand-in copies its name and module: only identity tells them apart)
UNPATCHED = httpx.HTTPTransport.handle_request

pytest_plugins = ["pytester"]


def test_cases_replay_with_the_collected_heap_frozen_and_fewer_young_collections(project, monkeypatch):
    record(project)
    seen: list[tuple[int, int]] = []
    real = runner.run_case

    def spy(*args, **kwargs):
        seen.append((gc.get_threshold()[0], gc.get_freeze_count()))
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "run_case", spy)
    before = gc.get_threshold()
    gc.unfreeze()  # what this process froze before (its conftest freezes after each test file)
    project.runpytest("evals").assert_outcomes(passed=len(CASES))
    assert len(seen) == len(CASES)
    assert all(threshold == garbage_collection.YOUNG_THRESHOLD and frozen > 10_000 for threshold, frozen in seen), seen
    assert gc.get_threshold() == before  # the pace is the interpreter's again between cases


def test_what_the_first_replayed_case_imports_is_frozen_too(project, monkeypatch):
    """The program's libraries (its SDK, the agent) are imported by the first case a process
    replays, after collection froze the heap: they are frozen once that case has run, and no
    collection after it walks them again."""
    record(project)
    frozen: list[int] = []
    real = runner.run_case
    monkeypatch.setattr(runner, "run_case", lambda *args, **kwargs: frozen.append(gc.get_freeze_count()) or real(
        *args, **kwargs))
    freezes = []
    freeze = garbage_collection.freeze_collected
    monkeypatch.setattr(garbage_collection, "freeze_collected", lambda: freezes.append(1) or freeze())
    gc.unfreeze()
    project.runpytest("evals").assert_outcomes(passed=len(CASES))
    assert len(frozen) == len(CASES) == 2
    assert frozen[1] > frozen[0], frozen
    assert len(freezes) == 2  # once collected, once after the first case (not after every case)


def test_cases_replayed_one_after_another_share_one_set_of_patches_undone_before_any_other_test(project, monkeypatch):
    """vcrpy's patches for a dozen HTTP libraries were built and entered for every replayed case;
    they are built once for a run of replayed cases, and a test that is not a golden case (here
    one before, one between and one after two runs of them) sees the HTTP libraries as they are."""
    import httpx

    record(project)
    plain = ("import httpx\n\n\ndef test_httpx_is_itself():\n"
             "    assert httpx.HTTPTransport.handle_request.__module__.startswith('httpx.')\n")
    evals = project.path / "evals"
    for name in ("test_a_plain.py", "test_m_plain.py", "test_z_plain.py"):  # in file order, around the cases
        (evals / name).write_text(plain)
    (evals / "test_n_goldens.py").write_text((evals / "test_goldens.py").read_text())  # a second run of them
    built: list[int] = []
    real = routing._install
    monkeypatch.setattr(routing, "_install", lambda stack: (built.append(1), real(stack))[1])
    project.runpytest("evals", "-p", "no:randomly").assert_outcomes(passed=2 * len(CASES) + 3)
    assert len(built) == 2
    assert httpx.HTTPTransport.handle_request is UNPATCHED  # undone at the end


def test_patches_kept_between_runs_serve_the_next_run_and_are_rebuilt_for_other_custom_patches(tmp_path):
    import types

    import httpx
    from vcr.stubs import VCRHTTPSConnection

    from rag_core.evals.emulator.provider import ScriptedProvider

    url, body = "https://api.openai.com/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "?"}]}
    holder = types.SimpleNamespace(Connection=None)

    def custom(recorder):
        recorder._custom_patches = ((holder, "Connection", VCRHTTPSConnection),)  # VCR(custom_patches=...)

    seen = []
    routing.keep_installed()
    try:
        for name, configure in (("a", None), ("b", custom), ("c", custom), ("d", None)):
            recorder = CaseRecorder(tmp_path / f"{name}.yaml", "all", configure=configure)
            with recorder.use("sdk", ScriptedProvider([{"text": f"run {name}"}], seed=name)):
                answer = httpx.post(url, json=body).json()["choices"][0]["message"]["content"]
                seen.append((answer, holder.Connection is not None))
            assert httpx.HTTPTransport.handle_request is not UNPATCHED  # kept for the next run
        with pytest.raises(httpx.ConnectError):  # between runs a request goes where it was sent
            httpx.get("http://127.0.0.1:9/", timeout=1)
    finally:
        routing.release()
    assert seen == [("run a", False), ("run b", True), ("run c", True), ("run d", False)]
    assert holder.Connection is None
    assert httpx.HTTPTransport.handle_request is UNPATCHED


def test_a_slower_pace_or_a_collector_turned_off_is_left_as_it_is():
    before = gc.get_threshold()
    try:
        for young in (0, 50_000):
            gc.set_threshold(young, before[1], before[2])
            with garbage_collection.fewer_collections():
                assert gc.get_threshold()[0] == young
            assert gc.get_threshold()[0] == young
    finally:
        gc.set_threshold(*before)


def test_a_replayed_request_is_filtered_once(project, monkeypatch):
    """vcrpy deep-copies and filters a request at each of its three lookups; a replay does it once
    (and vcrpy once for each request the cassette holds, as it loads it)."""
    record(project)
    filtered: list[str] = []
    scrub = CaseRecorder._before_record_request

    def counting(self, request):
        filtered.append(request.path)
        return scrub(self, request)

    monkeypatch.setattr(CaseRecorder, "_before_record_request", counting)
    project.runpytest("evals").assert_outcomes(passed=len(CASES))
    assert len(filtered) == 2 * _requests_replayed(project), filtered


def test_a_replayed_cassette_is_read_and_decoded_once(project, monkeypatch):
    """The recorder's check reads and decodes a replayed cassette; vcrpy loads what it read, not
    the file a second time. So does a recording that keeps what the cassette held (``all``): vcrpy
    loads the staging copy of the cassette from what the recorder read of the cassette."""
    from vcr.persisters.filesystem import FilesystemPersister

    from rag_core.evals.recording import cassette_format

    record(project)
    read, loaded = [], []
    check_read, vcrpy_load = cassette_format.read_cassette, FilesystemPersister.__dict__["load_cassette"].__func__
    monkeypatch.setattr(cassette_format, "read_cassette", lambda path: read.append(path.name) or check_read(path))
    monkeypatch.setattr(FilesystemPersister, "load_cassette",
                        classmethod(lambda cls, path, serializer: loaded.append(Path(path).name) or
                                    vcrpy_load(cls, path, serializer)))
    project.runpytest("evals").assert_outcomes(passed=len(CASES))
    assert sorted(read) == sorted(f"{case}.yaml" for case in CASES) and loaded == []
    read.clear()
    project.runpytest("evals", "--record-mode=all", "--emulator").assert_outcomes(passed=len(CASES))
    assert sorted(read) == sorted(f"{case}.yaml" for case in CASES) and loaded == []
    project.runpytest("evals").assert_outcomes(passed=len(CASES))  # what it recorded replays


def _requests_replayed(project) -> int:
    """The interactions the project's cassettes hold (each case replays all of its own)."""
    return sum(len(yaml.safe_load(path.read_text())["interactions"]) for path in (project.path / "cassettes").glob("*.yaml"))


def test_a_project_filter_on_requests_still_runs_at_each_lookup(project):
    """A project's own before_record_request may not give the same request twice: it runs as
    vcrpy runs it."""
    record(project)
    (project.path / "conftest.py").write_text(
        "from pathlib import Path\n\n"
        "def pytest_rag_core_configure_cassette(case, vcr):\n"
        "    def keep(request):\n"
        "        with open(Path(__file__).parent / 'filtered.txt', 'a') as calls:\n"
        "            calls.write(request.path + '\\n')\n"
        "        return request\n"
        "    vcr.before_record_request = keep\n")
    project.runpytest("evals").assert_outcomes(passed=len(CASES))
    calls = len((project.path / "filtered.txt").read_text().splitlines())
    assert calls == 4 * _requests_replayed(project)  # loaded, then three lookups per request


DOCUMENTS = [
    "a: 1\nb: [x, 2.5, true, null, ~, '3']\nc: {d: 2001-12-14t21:59:43.10-05:00, e: 2002-12-14}\n",
    "bin: !!binary aGVsbG8=\nint: 0x1A\noct: 0o17\nfloat: .inf\nnan: .nan\nbool: off\nempty:\n",
    "1: one\n2.5: two\ntrue: three\nnull: four\n2001-12-14: five\n",
    "dup: 1\ndup: 2\n",  # PyYAML's safe loader keeps the last
    "base: &b {x: 1}\nderived: {<<: *b, y: 2}\n",  # a merge key (and an alias)
    "merge: {<<: {x: 1}, y: 2}\n",  # a merge key, no alias
    "set: !!set {a, b}\nomap: !!omap [{a: 1}, {b: 2}]\npairs: !!pairs [{a: 1}, {a: 2}]\n",
    "? [a, b]\n: value\n",  # a key that is not hashable: an error
    "{=: value}\n",  # a value key
    "!!str 12\n",
    "- !!int '7'\n- !!float '1'\n- !!str 1.5\n",
    "text: |\n  two\n  lines\nfolded: >\n  one\n  line\n",
    "[[[[[[1]]]]]]\n",
    "",
    "just a scalar\n",
]


PYYAML_SAFE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # PyYAML's own, as the harness's loader subclasses it


@pytest.mark.parametrize("text", DOCUMENTS)
def test_a_document_reads_as_the_safe_loader_reads_it(text):
    try:
        expected = yaml.load(text, Loader=PYYAML_SAFE)
    except yaml.YAMLError as exc:
        with pytest.raises(type(exc)):
            yaml_read.load_bounded(text)
        return
    got = yaml_read.load_bounded(text)
    assert got == expected or (got != got and expected != expected)  # nan
    assert repr(got) == repr(expected)  # the same types (1 and 1.0 and True are equal)


def _tags(node):
    """Each node's tag, depth first: what the resolver decided for every node of a document."""
    if node is None:
        return []
    children = ([n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else
                list(node.value) if isinstance(node, yaml.SequenceNode) else [])
    return [node.tag] + [tag for child in children for tag in _tags(child)]


# scalars made of what YAML's implicit types are written with (numbers, bools, nulls, dates, the
# merge and value keys), some quoted, in a mapping, a list and a flow collection
_scalar = st.text(alphabet="0123456789.+-_:eExXoObB~<=nNuUlLtTrRfFaAsSyYiI ", min_size=0, max_size=12)
_quoted = st.builds(lambda text, quote: f"{quote}{text}{quote}", _scalar, st.sampled_from(["'", '"']))


@given(st.lists(_scalar | _quoted, min_size=1, max_size=4))
def test_the_harness_loader_resolves_every_scalar_as_pyyamls_safe_loader(scalars):
    """The harness's loader resolves tags with less work per node (``yaml_read._SafeLoader``): every
    node gets the tag PyYAML's safe loader gives it, and the document the same value."""
    lines = [f"k{number}: {scalar}" for number, scalar in enumerate(scalars)]
    text = "\n".join(lines + ["list:"] + [f"- {scalar}" for scalar in scalars] + [f"flow: [{', '.join(scalars)}]", ""])
    outcomes = []
    for loader in (PYYAML_SAFE, yaml_read._SafeLoader):
        try:
            outcomes.append((_tags(yaml.compose(text, Loader=loader)), repr(yaml.load(text, Loader=loader))))
        except yaml.YAMLError as exc:
            outcomes.append(type(exc))
    assert outcomes[0] == outcomes[1]


def test_a_resolver_a_project_adds_to_pyyaml_does_not_change_how_the_harness_reads(monkeypatch):
    monkeypatch.setattr(yaml.resolver.Resolver, "yaml_implicit_resolvers",
                        {**yaml.resolver.Resolver.yaml_implicit_resolvers, "h": [("tag:yaml.org,2002:null", re.compile("^h$"))]})
    assert yaml.load("a: h\n", Loader=PYYAML_SAFE) != {"a": "h"}  # PyYAML's loader now reads it otherwise
    assert yaml_read.load_bounded("a: h\n") == {"a": "h"}


@pytest.mark.parametrize("text", DOCUMENTS + ["a: 1\nb: {c: 2, c: 3}\n", "a: 1\na: 2\n", "? [1]\n: x\n"])
def test_a_case_file_read_without_its_lines_is_what_the_careful_reader_reads(tmp_path, text):
    """``load_plain`` is the case files' fast path: whatever it gives is what the reader that keeps
    lines gives; a key written twice, which that reader refuses naming its line, is left to it."""
    plain, got = yaml_read.load_plain(text)
    try:
        expected, _ = yaml_read.load_with_lines(tmp_path / "case.yaml", text)
    except yaml.YAMLError:
        assert (plain, got) == (False, None)
        return
    if plain:
        assert repr(got) == repr(expected)


def test_a_case_file_with_a_key_written_twice_is_left_to_the_reader_that_names_its_line():
    assert yaml_read.load_plain("id: a\nexpect: {}\nexpect: {output: {contains: x}}\n") == (False, None)
    assert yaml_read.load_plain("id: a\nx: &y [1]\nz: *y\n") == (False, None)  # an alias: the careful reader's
    assert yaml_read.load_plain("id: a\nexpect: {output: {contains: x}}\n") == (
        True, {"id": "a", "expect": {"output": {"contains": "x"}}})


def test_a_plain_document_is_built_without_pyyaml_generic_constructor(monkeypatch):
    built: list[object] = []
    generic = yaml_read._FAST.construct_document
    monkeypatch.setattr(yaml_read._FAST, "construct_document", lambda self, node: built.append(node) or generic(self, node))
    cassette = {"interactions": [{"request": {"method": "POST", "headers": {"a": ["b"]}, "body": {"json": {"n": 1.5}}},
                                  "response": {"status": {"code": 200}, "body": {"text": "data: x\n"}}}],
                "recorded_with": {"date": datetime.date(2026, 1, 2)}, "version": 1}
    assert yaml_read.load_bounded(yaml.safe_dump(cassette)) == cassette
    assert built == []
    assert yaml_read.load_bounded("a: &x [1]\nb: *x\n") == {"a": [1], "b": [1]}  # aliases: PyYAML's own
    assert len(built) == 1


_json = st.recursive(st.none() | st.integers(0, 3) | st.sampled_from(["a", "b", "x=1"]),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["a", "b", "k"]), inner,
                                                                                  max_size=3), max_leaves=12)
_path = st.lists(st.sampled_from(["a", "b", "k", "[*]", "[0]", "[1:]", "[k=a]"]), min_size=1, max_size=4).map(
    lambda steps: ".".join(steps).replace(".[", "["))


@given(data=st.dictionaries(st.sampled_from(["a", "b", "k"]), _json, max_size=3), paths=st.lists(_path, max_size=3),
       remove=st.booleans())
@settings(max_examples=300, deadline=None)
def test_normalizing_copies_only_what_a_rule_changes_and_gives_what_a_deep_copy_gave(data, paths, remove):
    """A case's normalize rules deep-copied every request it sent before replacing a few values;
    only the containers on the way to a change are copied now. Same result, the input untouched."""
    import copy

    from rag_core.evals.golden import normalizing as observe
    from rag_core.evals.golden.normalize_rules import NormalizeRule

    def reference(node, steps, placeholder):  # in place, on a deep copy: what normalize did
        if not steps:
            return
        for key in sorted(observe._targets(node, steps[0]), reverse=True):
            if steps[1:]:
                reference(node[key], steps[1:], placeholder)
            elif placeholder is observe._REMOVE:
                del node[key]
            else:
                node[key] = placeholder

    before = copy.deepcopy(data)
    expected = copy.deepcopy(data)
    for path in paths:
        reference(expected, observe._steps(path), observe._REMOVE if remove else "<x>")
    got = (observe.without(data, paths) if remove
           else observe.normalize(data, [NormalizeRule(path=path, placeholder="<x>") for path in paths]))
    assert got == expected
    assert data == before


def test_vcrpy_all_mode_never_plays_a_held_request():
    """What recording in ``all`` against the emulator relies on to answer without asking vcrpy:
    its ``can_play_response_for`` says no in that mode, even for a request the cassette holds."""
    from vcr.cassette import Cassette
    from vcr.request import Request

    request = Request("POST", "https://api.openai.com/v1/responses", b'{"a": 1}', {})
    response = {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": b"{}"}}
    for mode, playable in (("all", False), ("new_episodes", True)):
        cassette = Cassette("unused.yaml", record_mode=mode)
        cassette.append(request, response)
        cassette.rewound = True  # as a cassette loaded from its file is
        assert bool(cassette.can_play_response_for(request)) is playable


def test_a_recording_in_all_mode_asks_vcrpy_nothing_it_must_answer_no_to(project, monkeypatch):
    """Re-recorded in ``all`` against the emulator, each request was filtered (deep-copied) and
    matched against every loaded interaction twice to learn it cannot be played; the recording
    is the same without it."""
    from vcr.cassette import Cassette

    record(project)
    asked: list[object] = []
    original = Cassette.can_play_response_for
    monkeypatch.setattr(Cassette, "can_play_response_for", lambda self, request: asked.append(request) or original(self, request))
    project.runpytest("evals", "--record-mode=all", "--emulator").assert_outcomes(passed=len(CASES))
    assert asked == []
    project.runpytest("evals").assert_outcomes(passed=len(CASES))  # and it replays
