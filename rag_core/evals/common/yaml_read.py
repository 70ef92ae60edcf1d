"""Load YAML the harness reads (case files, goldens, cassettes, suites) within bounds, and, for
case files, remember where each mapping key is, for error messages with line numbers.

Bounds, so that one bad file is one clear error, not a dead session:
- aliases may not expand past ``MAX_NODES`` nodes (a 709-byte alias bomb expanded to gigabytes);
- nesting deeper than ``MAX_DEPTH`` levels is an error, not an ``INTERNALERROR`` (a bound of its
  own, not Python's recursion limit, which libraries raise: the same file must fail everywhere);
- a key written twice in one mapping is an error (YAML would silently keep the last: an
  ``expect:`` that would have failed vanished).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

MAX_NODES = 1_000_000  # far above any real case, golden or cassette (the largest here: ~60,000)
MAX_DEPTH = 100  # levels of nesting; a request body with a JSON schema in it is about 15 deep
NESTED_TOO_DEEPLY = "it is nested more deeply than can be read"

# the safe loader's implicit resolvers by a scalar's first character, each list followed by the
# wildcard ones ('' for the empty scalar, as PyYAML keys it): what ``Resolver.resolve`` looks up
# and concatenates for every plain scalar, made once; a snapshot, so that a project adding
# resolvers to PyYAML's classes does not change how the harness reads its own files
_WILDCARD = tuple(yaml.resolver.Resolver.yaml_implicit_resolvers.get(None, ()))
_BY_FIRST = {first: tuple(found) + _WILDCARD
             for first, found in yaml.resolver.Resolver.yaml_implicit_resolvers.items() if first is not None}


class _SafeLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The safe loader (its C parser where installed), resolving each node's tag as it does, with
    less work per node: the parser calls these three methods for every node, and PyYAML's versions
    were a fifth of composing a cassette. No path resolvers (PyYAML's safe loader has none)."""

    yaml_implicit_resolvers = {first: list(found) for first, found in _BY_FIRST.items()}
    yaml_path_resolvers: dict[Any, Any] = {}

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is yaml.ScalarNode:
            if implicit[0]:  # a plain scalar: its value says its type
                for tag, pattern in _BY_FIRST.get(value[:1], _WILDCARD):
                    if pattern.match(value):
                        return tag
            return self.DEFAULT_SCALAR_TAG
        return self.DEFAULT_SEQUENCE_TAG if kind is yaml.SequenceNode else self.DEFAULT_MAPPING_TAG

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        pass  # what PyYAML's does without path resolvers

    def ascend_resolver(self) -> None:
        pass


_FAST = _SafeLoader


# what YAML counts as a line break (a NEL and the Unicode separators too)
_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")


def tab_problem(exc: yaml.YAMLError, text: str | None) -> str | None:
    """What a parser error is about when a tab is where it stopped: YAML allows no tab in
    indentation, and neither parser says "tab" there ("found character that cannot start any
    token"); None for any other error."""
    mark = getattr(exc, "problem_mark", None)
    if mark is None or text is None:
        return None
    lines = _LINE_BREAK.split(text)
    if not 0 <= mark.line < len(lines):
        return None
    line = lines[mark.line]
    indentation = line[:len(line) - len(line.lstrip(" \t"))]
    if mark.column < len(line) and line[mark.column] == "\t":
        column = mark.column
    elif "\t" in indentation:
        column = indentation.index("\t")
    else:
        return None
    if column < len(indentation):
        return f"tab character at line {mark.line + 1}, column {column + 1}: indent with spaces (YAML allows no tabs in indentation)"
    return f"tab character at line {mark.line + 1}, column {column + 1}: write spaces instead (YAML allows no tab there)"


class BoundsError(yaml.YAMLError):
    """A document past the reader's bounds (the message says which)."""

    def __init__(self, problem: str, mark: Any = None) -> None:
        super().__init__(problem)
        self.problem, self.problem_mark = problem, mark


def _expanded_size(root: yaml.Node) -> int:
    """How many nodes the document has once every alias is written out, counted without writing
    them out (each node's size once, in post-order, without recursion)."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    on_path: set[int] = set()
    while stack:
        node, done = stack.pop()
        if id(node) in sizes:
            continue
        children = [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else (
            list(node.value) if isinstance(node, yaml.SequenceNode) else [])
        if done:
            on_path.discard(id(node))
            sizes[id(node)] = min(MAX_NODES + 1, 1 + sum(sizes.get(id(c), 0) for c in children))
            continue
        if id(node) in on_path:  # a recursive alias: infinite once written out
            raise BoundsError("an alias refers to a node that contains it", node.start_mark)
        on_path.add(id(node))
        stack.append((node, True))
        stack += [(c, False) for c in children if id(c) not in sizes]
    return sizes[id(root)]


def _has_aliases(root: yaml.Node) -> bool:
    """Whether a node is reached twice (an alias), checking the depth bound on the way: one cheap
    walk, so the expanded size is worked out only for the rare document with aliases."""
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    shared = False
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise BoundsError(NESTED_TOO_DEEPLY, node.start_mark)
        if id(node) in seen:
            shared = True
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            stack += [(child, depth + 1) for pair in node.value for child in pair]
        elif isinstance(node, yaml.SequenceNode):
            stack += [(child, depth + 1) for child in node.value]
    return shared


class _Unusual(Exception):
    """A node ``_plain`` leaves to PyYAML's constructor (a tag or a key of another kind)."""


_STR, _SEQ, _MAP = "tag:yaml.org,2002:str", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"
# the scalars of the safe loader; the others (a merge key, !!set, !!omap, unknown tags) are unusual
_SCALAR_TAGS = frozenset(f"tag:yaml.org,2002:{name}" for name in ("null", "bool", "int", "float", "binary",
                                                                     "timestamp", "str"))


def _plain(loader: Any, node: yaml.Node, depth: int, seen: set[int], unique: bool = False) -> Any:
    """The value of a document without aliases, built as the safe loader builds it, for the nodes
    most documents are made of: plain mappings with scalar keys, lists, and scalars (each through
    the safe loader's own constructor for its tag). PyYAML's generic constructor, which keeps
    state per node for aliases and recursion, took twice as long on a cassette. The bounds are
    checked on the way: the depth, and a node met twice (an alias) is left to the careful path;
    with ``unique``, so is a mapping that writes a key twice (the careful reader names its line)."""
    if depth > MAX_DEPTH:
        raise BoundsError(NESTED_TOO_DEEPLY, node.start_mark)
    if id(node) in seen:
        raise _Unusual
    seen.add(id(node))
    kind, tag = type(node), node.tag  # exact types: a subclass of PyYAML's nodes is unusual
    if kind is yaml.ScalarNode:
        if tag == _STR:
            return node.value
        if tag in _SCALAR_TAGS:
            return loader.yaml_constructors[tag](loader, node)
    elif kind is yaml.MappingNode and tag == _MAP:
        mapping = {}
        for key_node, value_node in node.value:
            if type(key_node) is not yaml.ScalarNode:  # a key that may not be hashable
                raise _Unusual
            key = key_node.value if key_node.tag == _STR else _plain(loader, key_node, depth + 1, seen)
            if unique and key in mapping:
                raise _Unusual
            mapping[key] = _plain(loader, value_node, depth + 1, seen, unique)
        return mapping
    elif kind is yaml.SequenceNode and tag == _SEQ:
        return [_plain(loader, child, depth + 1, seen, unique) for child in node.value]
    raise _Unusual


def _document(loader: Any, plain: bool = False, unique: bool = False) -> Any:
    """The document ``loader`` reads, within the bounds; with ``plain``, built by ``_plain`` when
    it has no alias and only usual nodes (the same value PyYAML builds). With ``unique`` as well,
    a document ``_plain`` leaves to PyYAML raises ``_Unusual`` instead."""
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if plain:  # one walk: the bounds checked as it builds (the recursion is bounded by the depth)
            try:
                return _plain(loader, node, 1, set(), unique)
            except _Unusual:
                if unique:
                    raise
        if _has_aliases(node) and _expanded_size(node) > MAX_NODES:
            raise BoundsError(f"its aliases expand to more than {MAX_NODES:,} nodes (a YAML alias bomb?)",
                              node.start_mark)
        return loader.construct_document(node)
    except RecursionError:
        raise BoundsError(NESTED_TOO_DEEPLY) from None
    finally:
        loader.dispose()


def compose_nodes(text: str) -> yaml.Node | None:
    """The node tree of ``text`` (the fast C parser where installed), no values built: aliases stay
    shared nodes, so no alias is expanded whatever the document holds; nesting too deep for the
    composer raises RecursionError, as building it would."""
    loader = _FAST(text)
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()


def load_bounded(text: str) -> Any:
    """``text`` parsed as YAML (the fast C parser where installed), within the bounds above."""
    return _document(_FAST(text), plain=True)


def load_plain(text: str) -> tuple[bool, Any]:
    """(True, the document) when ``text`` is made of the usual nodes only, each mapping's keys
    written once: the value ``load_with_lines`` gives, without keeping lines. (False, None) for any
    other text (a key written twice, an alias, another tag, invalid YAML, past the bounds), which
    the careful reader reads, to give its value or name the line of its problem."""
    try:
        return True, _document(_FAST(text), plain=True, unique=True)
    except (_Unusual, yaml.YAMLError):
        return False, None


class _LineLoader(_FAST):  # the C parser where installed: its nodes carry their lines too
    pass


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> dict[str, Any]:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode):
            first = seen.setdefault(key_node.value, key_node.start_mark.line + 1)
            if first != key_node.start_mark.line + 1:
                raise BoundsError(f"the key {key_node.value!r} is written twice in one mapping (first on line {first}); "
                                  "YAML would keep only the last", key_node.start_mark)
    mapping = loader.construct_mapping(node, deep=True)
    lines = {}
    for key_node, _ in node.value:
        lines[str(loader.construct_object(key_node))] = key_node.start_mark.line + 1
    loader.key_lines.setdefault(id(mapping), lines)
    loader.mappings.append((mapping, lines))
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_with_lines(path: Path, text: str | None = None) -> tuple[Any, list[tuple[dict[str, Any], dict[str, int]]]]:
    """The document (``text``, or the file's), and for every mapping in it the line of each of its keys."""
    loader = _LineLoader(path.read_text(encoding="utf-8") if text is None else text)
    loader.key_lines = {}  # type: ignore[attr-defined]
    loader.mappings = []  # type: ignore[attr-defined]
    data = _document(loader)
    return data, loader.mappings  # type: ignore[attr-defined]


def line_of(data: Any, mappings: list[tuple[dict[str, Any], dict[str, int]]], location: tuple[Any, ...]) -> int | None:
    """The line of the key at ``location`` (a pydantic error ``loc``) in ``data``."""
    node: Any = data
    line: int | None = None
    for part in location:
        if isinstance(node, dict):
            for mapping, lines in mappings:
                if mapping is node and str(part) in lines:
                    line = lines[str(part)]
            if part not in node:
                break
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            break
    return line
