"""rag-core's pytest settings in a project: where the project keeps its pytest configuration (as
pytest finds it), and what ``rag-core init`` adds there, in that file's own format, or prints
instead: an existing pytest section is never edited."""

from __future__ import annotations

import configparser
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

# rag-core's pytest settings: name -> value (testpaths is a list of folders; the others are folders)
SETTINGS: dict[str, str | list[str]] = {
    "testpaths": ["evals"],
    "rag_core_cases": "fixtures/goldens",
    "rag_core_cassettes": "cassettes",
    "rag_core_fixtures": "fixtures",
}
SETTINGS_COMMENT = "rag-core: where golden cases, cassettes and corpora live (these are the defaults)"


@dataclass
class PytestConfig:
    """Where a project's pytest configuration lives, as pytest itself finds it in one folder.

    ``kind`` is how the settings are written there: ``ini`` (``[pytest]`` in pytest.ini or
    tox.ini, ``[tool:pytest]`` in setup.cfg), ``toml-ini`` (``[tool.pytest.ini_options]`` in
    pyproject.toml: values as strings or lists of strings) or ``toml`` (pytest 9's native
    ``[tool.pytest]`` in pyproject.toml, ``[pytest]`` in pytest.toml)."""

    file: str
    section: str
    kind: str
    existing: dict[str, object] | None  # the section's settings; None: the section is not there yet


def _ini_sections(path: Path) -> configparser.ConfigParser | None:
    parser = configparser.ConfigParser(interpolation=None, strict=False, allow_no_value=True)
    try:
        parser.read_string(path.read_text(encoding="utf-8"))
    except (configparser.Error, UnicodeDecodeError, OSError):
        return None
    return parser


def _toml(path: Path) -> dict | None:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError):
        return None


class _Unreadable(Exception):
    """A configuration file pytest would read, but this module cannot parse."""

    def __init__(self, file: str, section: str, kind: str) -> None:
        super().__init__(file)
        self.config = PytestConfig(file, section, kind, None)


def find_pytest_config(root: Path) -> PytestConfig | None:
    """The file pytest reads its configuration from in ``root``, in pytest's own order
    (pytest.toml, pytest.ini, pyproject.toml, tox.ini, setup.cfg); None when there is none.
    Raises ``_Unreadable`` for a file pytest would read but that does not parse."""
    for name in ("pytest.toml", ".pytest.toml"):
        path = root / name
        if path.is_file():  # pytest reads these even when empty
            data = _toml(path)
            if data is None:
                raise _Unreadable(name, "[pytest]", "toml")
            return PytestConfig(name, "[pytest]", "toml", data.get("pytest"))
    for name in ("pytest.ini", ".pytest.ini"):
        path = root / name
        if path.is_file():  # pytest reads these even without a [pytest] section
            parser = _ini_sections(path)
            if parser is None:
                raise _Unreadable(name, "[pytest]", "ini")
            return PytestConfig(name, "[pytest]", "ini", dict(parser["pytest"]) if parser.has_section("pytest") else None)
    path = root / "pyproject.toml"
    if path.is_file():
        data = _toml(path)
        if data is None:
            if "pytest" in path.read_text(encoding="utf-8", errors="replace"):
                raise _Unreadable("pyproject.toml", "[tool.pytest.ini_options]", "toml-ini")
        else:
            tool = data.get("tool", {}).get("pytest", {})
            native = {k: v for k, v in tool.items() if k != "ini_options"}
            if native:
                return PytestConfig("pyproject.toml", "[tool.pytest]", "toml", native)
            if "ini_options" in tool:
                return PytestConfig("pyproject.toml", "[tool.pytest.ini_options]", "toml-ini", tool["ini_options"])
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        path = root / name
        if path.is_file():
            parser = _ini_sections(path)
            if parser is None:
                if f"[{section}]" in path.read_text(encoding="utf-8", errors="replace"):
                    raise _Unreadable(name, f"[{section}]", "ini")
            elif parser.has_section(section):
                return PytestConfig(name, f"[{section}]", "ini", dict(parser[section]))
    return None


def settings_text(kind: str, names: list[str] | None = None) -> str:
    """rag-core's settings (or those named) as lines of a config file of this kind."""
    lines = [f"# {SETTINGS_COMMENT}"]
    for name, value in SETTINGS.items():
        if names is not None and name not in names:
            continue
        if kind == "ini":
            lines.append(f"{name} = {' '.join(value) if isinstance(value, list) else value}")
        else:
            lines.append(f"{name} = {json.dumps(value)}")
    return "\n".join(lines) + "\n"


def _as_words(value: object) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    return str(value).split()


def _differences(existing: dict[str, object]) -> tuple[list[str], list[str]]:
    """The settings the section lacks, and notes on those it sets otherwise (kept as they are)."""
    missing, notes = [], []
    for name, wanted in SETTINGS.items():
        if name not in existing:
            missing.append(name)
            continue
        have = _as_words(existing[name])
        if name == "testpaths":
            if "evals" not in have:
                notes.append(f"testpaths is {' '.join(have)!r} (kept): a bare `pytest` does not run evals/; "
                             "run `pytest evals/`, or add evals to testpaths")
        elif have != [wanted]:
            notes.append(f"{name} is {' '.join(have)!r} (kept): the example was written under {wanted}; "
                         f"move it there, or remove {name}")
    return missing, notes


def _append(original: str, addition: str) -> str:
    return original + ("" if not original or original.endswith("\n") else "\n") + ("\n" if original.strip() else "") + addition


@dataclass
class SettingsPlan:
    """What writing rag-core's pytest settings takes: new files (name -> text), existing files that
    gain a section (name -> (original text, new text)), and what the project must do itself."""

    new: dict[str, str] = field(default_factory=dict)
    changed: dict[str, tuple[str, str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)  # "<section> to <file>", one per changed file


def new_settings_file() -> SettingsPlan:
    """The settings in a pytest.ini of their own, for a folder with no configuration yet."""
    return SettingsPlan(new={"pytest.ini": "[pytest]\n" + settings_text("ini")})


def plan_settings(root: Path) -> SettingsPlan:
    """Where rag-core's pytest settings go in ``root``; what cannot be written safely is a note."""
    try:
        config = find_pytest_config(root)
    except _Unreadable as unreadable:
        found = unreadable.config
        return SettingsPlan(notes=[f"{found.file} does not parse, so rag-core left it as it is; add these settings "
                                   f"to its {found.section} section:\n"
                                   + _indent(found.section + "\n" + settings_text(found.kind))])
    if config is None:
        pyproject = root / "pyproject.toml"
        if pyproject.is_file():
            return _into_pyproject(pyproject)
        return new_settings_file()
    if config.existing is None:  # pytest.ini / pytest.toml without their section: add it
        return _section_into(root / config.file, config)
    missing, notes = _differences(config.existing)
    if missing:
        first = (f"{config.file} already configures pytest in {config.section}; rag-core left it as it is. Add "
                 f"these lines to that section:\n" + _indent(settings_text(config.kind, missing)))
    else:
        first = f"{config.file} already holds rag-core's pytest settings in {config.section}."
    return SettingsPlan(notes=[first, *(f"{config.file}: {note}" for note in notes)])


def _into_pyproject(pyproject: Path) -> SettingsPlan:
    """The project's own format: add the table, if the result is the same TOML plus it."""
    original = pyproject.read_text(encoding="utf-8")
    new = _append(original, "[tool.pytest.ini_options]\n" + settings_text("toml-ini"))
    before, after = _toml(pyproject), _parse_toml(new)
    if before is not None and after is not None and _without_pytest(after) == _without_pytest(before) \
            and after["tool"]["pytest"] == {"ini_options": SETTINGS}:
        return SettingsPlan(changed={"pyproject.toml": (original, new)},
                            added=["[tool.pytest.ini_options] to pyproject.toml"])
    return SettingsPlan(notes=["pyproject.toml could not take a [tool.pytest.ini_options] table safely; add it "
                               "yourself:\n" + _indent("[tool.pytest.ini_options]\n" + settings_text("toml-ini"))])


def _section_into(path: Path, config: PytestConfig) -> SettingsPlan:
    original = path.read_text(encoding="utf-8")
    new = _append(original, f"{config.section}\n" + settings_text(config.kind))
    if _section_is_ours(config, original, new):
        return SettingsPlan(changed={config.file: (original, new)}, added=[f"{config.section} to {config.file}"])
    return SettingsPlan(notes=[f"{config.file} could not take a {config.section} section safely; add it yourself:\n"
                               + _indent(config.section + "\n" + settings_text(config.kind))])


def _parse_toml(text: str) -> dict | None:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None


def _without_pytest(data: dict) -> dict:
    """The TOML document without its tool.pytest table (and without ``tool`` if that was all)."""
    rest = {k: v for k, v in data.items() if k != "tool"}
    tool = {k: v for k, v in data.get("tool", {}).items() if k != "pytest"}
    return {**rest, "tool": tool} if tool else rest


def _section_is_ours(config: PytestConfig, original: str, new: str) -> bool:
    if config.kind == "toml":
        before, after = _parse_toml(original), _parse_toml(new)
        return before is not None and after is not None and \
            {k: v for k, v in after.items() if k != "pytest"} == before and after.get("pytest") == SETTINGS
    parser = configparser.ConfigParser(interpolation=None, strict=True, allow_no_value=True)
    try:
        parser.read_string(new)
    except configparser.Error:
        return False
    return {name: _as_words(value) for name, value in parser["pytest"].items()} == \
        {name: _as_words(value) for name, value in SETTINGS.items()}


def _indent(text: str) -> str:
    return "".join(f"    {line}\n" for line in text.splitlines())
