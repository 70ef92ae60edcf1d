"""Case files on disk: the case(s) a file gives (two for ``stream: [false, true]``), the cases
that clash with each other, what a file's top level says without validating it, and the case
files of a folder."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import ValidationError

from rag_core.evals.common.errors import CaseFileError
from rag_core.evals.common.modes import GOLDEN_SUFFIX
from rag_core.evals.common.paths import shown
from rag_core.evals.common.yaml_read import compose_nodes, load_with_lines, tab_problem
from rag_core.evals.golden.case import GoldenCase, compare_cassette, located_problems


def parse_case_file(path: Path) -> list[GoldenCase]:
    """The case(s) in a file: one, or two when ``stream: [false, true]`` asks for both variants.

    A file read again with the same text gives the cases it gave, without validating it again
    (the orphan check at a session's end reads every case file a second time)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CaseFileError(f"{shown(path)}: not UTF-8 text (byte {exc.start}: {exc.reason}); save it as UTF-8") from None
    except OSError as exc:
        raise CaseFileError(f"{shown(path)}: cannot be read: {exc}") from exc
    return list(_parsed(path, text))


@functools.lru_cache(maxsize=65536)  # errors are not kept: their messages name the file from the working directory
def _parsed(path: Path, text: str) -> tuple[GoldenCase, ...]:
    try:
        data, mappings = load_with_lines(path, text)
    except yaml.YAMLError as exc:
        tab = tab_problem(exc, text)
        if tab is not None:
            raise CaseFileError(f"{shown(path)}: {tab}") from None
        mark = getattr(exc, "problem_mark", None)
        where = f"{shown(path)}:{mark.line + 1}" if mark else shown(path)
        raise CaseFileError(f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from exc
    if not isinstance(data, dict):
        raise CaseFileError(f"{shown(path)}: a case file must be a mapping of case fields, got {type(data).__name__}")
    try:
        case = GoldenCase.model_validate(data)
    except ValidationError as exc:
        raise CaseFileError(located_problems(exc, data, mappings, path)) from None
    except RecursionError:
        raise CaseFileError(f"{shown(path)}: it is nested more deeply than can be read") from None
    case.source = path
    if isinstance(case.stream, bool):
        return (case,)
    variants = []
    for stream in dict.fromkeys(case.stream):
        variant = case.model_copy(update={"id": f"{case.id}.{'stream' if stream else 'sync'}", "stream": stream})
        variant.source = path
        variants.append(variant)
    return tuple(variants)


def find_duplicates(cases: list[GoldenCase]) -> dict[str, str]:
    """For every case sharing its id, cassette or golden with another: the error naming both files.

    Variants count: a plain ``s.sync`` and the sync variant of ``s`` would share a cassette
    and a golden, and silently overwrite each other's recordings; so do compared subjects' cassettes
    (a case ``s.compare`` would record into the ``compare_with`` cassette of ``s``)."""
    owners: dict[tuple[str, str], GoldenCase] = {}
    errors: dict[str, str] = {}
    for case in cases:
        for what, key in clash_keys(case):
            other = owners.setdefault((what, key), case)
            if other is not case and case.id not in errors:
                message = (f"{shown(case.source)} and {shown(other.source)} both define a case with the {what} "
                           f"{key!r} (a stream: [false, true] case is <id>.sync and <id>.stream); rename one")
                errors[case.id] = message
                errors.setdefault(other.id, message)
    return errors


def clash_keys(case: GoldenCase) -> list[tuple[str, str]]:
    """What a case owns alone: its id, its golden and its cassettes (see ``find_duplicates``)."""
    return [("id", case.id), ("golden", case.golden_path.name)] + [("cassette", n) for n in case.cassette_names()]


_ID = re.compile(r"^[A-Za-z0-9_.-]+$")  # GoldenCase.id's pattern


@dataclass(frozen=True)
class Skimmed:
    """What a case file's top level says, read without validating the file: enough to know, under
    ``--case``, that the file cannot be one of the selected cases nor clash with one (see
    ``discovery.py``). ``keys`` holds every clash key the file can have if it is valid."""

    id: str  # the test id the file gives if it is valid (a file that is not gives its stem instead)
    keys: frozenset[tuple[str, str]]
    tags: tuple[str, ...]


def skim_case_file(path: Path) -> Skimmed | None:
    """The top level of a case file, or None when only reading it whole can tell what tests it gives
    (it is not YAML, or not a mapping; its id is not a plain string; ``stream:`` is not a plain
    true or false, so it may give two tests; a merge key or a key written twice; not readable).

    Only the node tree is composed (the C parser's, no values built, so an alias bomb is not
    expanded), and pydantic never runs: cheaper than loading the file."""
    try:
        root = compose_nodes(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError, OSError, RecursionError):
        return None
    if not isinstance(root, yaml.MappingNode):
        return None
    fields: dict[str, yaml.Node] = {}
    for key, value in root.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge" or key.value in fields:
            return None
        fields[key.value] = value

    def text(name: str) -> str | None | bool:  # a plain string, None when absent, False for anything else
        node = fields.get(name)
        if node is None:
            return None
        return node.value if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:str" else False

    case_id, cassette = text("id"), text("cassette")
    stream = fields.get("stream")
    if not isinstance(case_id, str) or cassette is False or (
            stream is not None and not (isinstance(stream, yaml.ScalarNode) and stream.tag == "tag:yaml.org,2002:bool")):
        return None
    names = [cassette or f"{case_id}.yaml"]
    if "compare_with" in fields:
        names.append(compare_cassette(names[0]))
    keys = frozenset([("id", case_id), ("golden", f"{case_id}{GOLDEN_SUFFIX}")] + [("cassette", n) for n in names])
    tags = fields.get("tags")
    tag_names = tuple(t.value for t in tags.value if isinstance(t, yaml.ScalarNode)) if isinstance(
        tags, yaml.SequenceNode) else ()
    return Skimmed(case_id if _ID.match(case_id) else path.stem, keys, tag_names)


def case_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.yaml") if not p.name.endswith(GOLDEN_SUFFIX))
