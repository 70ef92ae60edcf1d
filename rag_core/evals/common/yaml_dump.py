"""Readable YAML for goldens and cassettes: multi-line strings as literal blocks, keys in insertion order."""

from __future__ import annotations

from typing import Any

import yaml


class _GoldenDumper(yaml.SafeDumper):
    """Multi-line strings as literal blocks, so a prompt edit shows as a line diff; no
    anchors or aliases, so every value is written out where it is."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value and not any(line != line.rstrip() for line in value.splitlines()) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_GoldenDumper.add_representer(str, _str)


def _plain_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    """A str subclass (LangChain's answers, enum values) is written as the text it is."""
    return _str(dumper, str(value))


_GoldenDumper.add_multi_representer(str, _plain_str)


def dump(data: Any) -> str:
    return yaml.dump(data, Dumper=_GoldenDumper, sort_keys=False, allow_unicode=True, width=100)


# what a trailing space or tab shows as in a diff (YAML cannot write them in a block)
TRAILING_MARK = {" ": "\u2420", "\t": "\u2409"}


class _DiffDumper(_GoldenDumper):
    """The golden's YAML as a person reads it in a diff: every multi-line string as a block, its
    trailing spaces and tabs shown as marks (YAML would otherwise quote and escape the whole string
    and fold it, so a one-word edit showed as a dozen reflowed lines)."""


def _diff_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    value = str(value)
    if "\n" not in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value)
    lines = []
    for line in value.split("\n"):
        body = line.rstrip(" \t")
        lines.append(body + "".join(TRAILING_MARK[c] for c in line[len(body):]))
    return dumper.represent_scalar("tag:yaml.org,2002:str", "\n".join(lines), style="|")


_DiffDumper.add_representer(str, _diff_str)
_DiffDumper.add_multi_representer(str, _diff_str)


def dump_for_diff(data: Any) -> str:
    """``data`` as YAML to diff, not to load: strings unfolded, multi-line ones as marked blocks."""
    return yaml.dump(data, Dumper=_DiffDumper, sort_keys=False, allow_unicode=True, width=float("inf"))

