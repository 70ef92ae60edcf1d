"""Load YAML while remembering where each mapping key is, for error messages with line numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


class _LineLoader(yaml.SafeLoader):
    pass


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> dict[str, Any]:
    mapping = loader.construct_mapping(node, deep=True)
    lines = {}
    for key_node, _ in node.value:
        lines[str(loader.construct_object(key_node))] = key_node.start_mark.line + 1
    loader.key_lines.setdefault(id(mapping), lines)
    loader.mappings.append((mapping, lines))
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_with_lines(path: Path) -> tuple[Any, list[tuple[dict[str, Any], dict[str, int]]]]:
    """The document, and for every mapping in it the line of each of its keys."""
    loader = _LineLoader(path.read_text(encoding="utf-8"))
    loader.key_lines = {}  # type: ignore[attr-defined]
    loader.mappings = []  # type: ignore[attr-defined]
    try:
        data = loader.get_single_data()
    finally:
        loader.dispose()
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
