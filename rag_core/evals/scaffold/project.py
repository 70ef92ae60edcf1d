"""What ``rag-core init`` writes into a project: one example golden case that runs there (see
``examples``) and what runs it.

Files that already exist are never overwritten. The pytest settings go where the project keeps
its pytest configuration, in that file's own format (see ``PytestConfig``); an existing pytest
section is never edited: the lines it lacks are printed instead.

All or nothing: every new file is first written to a temporary file beside its target, then the
temporary files are moved into place (each with a link that fails rather than replace a file that
appeared meanwhile), and an existing ``pyproject.toml`` or ``pytest.ini`` that gains a section is
replaced last, in one rename. When any step fails, what this run wrote (temporary files, placed
files, folders it created) is removed and ``ScaffoldError`` says what failed and that nothing was
written.
"""

from __future__ import annotations

import configparser
import errno
import json
import os
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from rag_core.evals.scaffold.examples import AGENT_EXAMPLE, NoExample, choose

TEST_MODULE = '''\
"""Every golden case under fixtures/goldens/: rag-core's pytest plugin makes each one a test."""


def test_golden_case(golden_case, golden_harness):
    golden_harness.check(golden_case)
'''

RETRIEVAL_TEST_MODULE = '''\
"""Every retrieval suite under fixtures/retrieval/: one test per retriever (skipped while there is none)."""


def test_retrieval(retrieval_target, retrieval_check):
    retrieval_check(retrieval_target)
'''

# rag-core's pytest settings: name -> value (testpaths is a list of folders; the others are folders)
SETTINGS: dict[str, str | list[str]] = {
    "testpaths": ["evals"],
    "rag_core_cases": "fixtures/goldens",
    "rag_core_cassettes": "cassettes",
    "rag_core_fixtures": "fixtures",
}
SETTINGS_COMMENT = "rag-core: where golden cases, cassettes and corpora live (these are the defaults)"

# Where CI installs rag-core from, with the extras the example needs. rag-core is on no package
# index, so the workflow names a git URL or a wheel; without --install it holds this placeholder,
# and the workflow's install step stops with an error naming the file until it is filled in.
INSTALL_PLACEHOLDER = "rag-core[{extras}] @ git+https://github.com/<owner>/rag-core.git@<tag>"
PLACEHOLDER_MARK = "<owner>"
WORKFLOW_PATH = ".github/workflows/rag-core-evals.yml"

CI_WORKFLOW = """\
# Replays every golden case from its cassette: no provider keys, no network.
name: rag-core evals
on: [push, pull_request]
env:
  # Where CI installs rag-core from (it is on no package index). A pip requirement: a git URL,
  #   rag-core[{extras}] @ git+https://github.com/<owner>/rag-core.git@<tag>
  # or a wheel built with `python -m build` and kept in this repository,
  #   ./wheels/rag_core-0.1.0-py3-none-any.whl[{extras}]
  # [harness] alone is enough when every case is a target: case (no rag_core agent).
  RAG_CORE_INSTALL: {install}
  # a case whose requires: is not installed here fails instead of being skipped
  RAG_CORE_REQUIRE_ALL_CASES: "1"
jobs:
  evals:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with: {{python-version: "3.12"}}
      - name: Install rag-core
        run: |
          case "$RAG_CORE_INSTALL" in *"{mark}"*)
            echo "::error file={workflow}::RAG_CORE_INSTALL is still the placeholder: set it to a git URL or a wheel of rag-core"
            exit 1;;
          esac
          python -m pip install "$RAG_CORE_INSTALL"
      # Install here what your cases need beside rag-core (your package, the SDKs their requires: names).
      # Ubuntu 24.04 (ubuntu-latest) has AppArmor refuse what rag-core offline needs (an unprivileged
      # user namespace); a GitHub-hosted runner is a VM used for this job alone, so it is lifted there.
      - if: runner.os == 'Linux' && runner.environment == 'github-hosted'
        run: sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 || true
      # The replay, with loopback as its only network where the runner allows it (rag-core offline):
      # then a child process or a socket opened in C (gRPC) cannot reach the network either.
      - name: Replay the golden cases
        run: |
          if refused=$(python -m rag_core offline -- true 2>&1); then
            python -m rag_core offline -- python -m pytest evals/ --golden-report=golden-report.md
          else
            echo "::notice::replaying without rag-core offline, so a child process or a C-level socket could reach the network: $refused"
            python -m pytest evals/ --golden-report=golden-report.md
          fi
      - if: always()
        run: cat golden-report.md >> "$GITHUB_STEP_SUMMARY" || true
      # the run's HTML report: one file that opens from the downloaded artifact, no server needed
      - if: always()
        run: python -m rag_core report -o rag-core-report.html || true
      - if: always()
        uses: actions/upload-artifact@v4
        with: {{name: rag-core-report, path: rag-core-report.html, if-no-files-found: ignore}}
"""

NEXT_STEPS = """\
Next, in {folder}:
  pytest evals/ --record-mode=once --emulator   # record the example against the built-in emulator; writes its golden
  pytest evals/                                 # replay, as CI does: no keys, no network"""


class ScaffoldError(Exception):
    """``rag-core init`` could not scaffold the project; the message is one line, and says
    whether anything was left behind."""


@dataclass
class InitResult:
    written: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # existed already; left as they were
    notes: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # "<section> to <file>": existing files that gained a section


# ---------------------------------------------------------------------------- pytest configuration


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


def _plan_config(root: Path, result: InitResult) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """New files and changed files (name -> (original text, new text)) for rag-core's pytest
    settings; what cannot be written safely goes into ``result.notes`` instead."""
    try:
        config = find_pytest_config(root)
    except _Unreadable as unreadable:
        found = unreadable.config
        result.notes.append(f"{found.file} does not parse, so rag-core left it as it is; add these settings to its "
                            f"{found.section} section:\n" + _indent(found.section + "\n" + settings_text(found.kind)))
        return {}, {}
    if config is None:
        pyproject = root / "pyproject.toml"
        if pyproject.is_file():  # the project's own format: add the table, if the result is the same TOML plus it
            original = pyproject.read_text(encoding="utf-8")
            new = _append(original, "[tool.pytest.ini_options]\n" + settings_text("toml-ini"))
            before, after = _toml(pyproject), _parse_toml(new)
            if before is not None and after is not None and _without_pytest(after) == _without_pytest(before) \
                    and after["tool"]["pytest"] == {"ini_options": SETTINGS}:
                result.changed.append("[tool.pytest.ini_options] to pyproject.toml")
                return {}, {"pyproject.toml": (original, new)}
            result.notes.append("pyproject.toml could not take a [tool.pytest.ini_options] table safely; add it "
                                "yourself:\n" + _indent("[tool.pytest.ini_options]\n" + settings_text("toml-ini")))
            return {}, {}
        return {"pytest.ini": "[pytest]\n" + settings_text("ini")}, {}
    if config.existing is None:  # pytest.ini / pytest.toml without their section: add it
        path = root / config.file
        original = path.read_text(encoding="utf-8")
        new = _append(original, f"{config.section}\n" + settings_text(config.kind))
        if _section_is_ours(config, original, new):
            result.changed.append(f"{config.section} to {config.file}")
            return {}, {config.file: (original, new)}
        result.notes.append(f"{config.file} could not take a {config.section} section safely; add it yourself:\n"
                            + _indent(config.section + "\n" + settings_text(config.kind)))
        return {}, {}
    missing, notes = _differences(config.existing)
    if missing:
        result.notes.append(f"{config.file} already configures pytest in {config.section}; rag-core left it as it "
                            f"is. Add these lines to that section:\n" + _indent(settings_text(config.kind, missing)))
    else:
        result.notes.append(f"{config.file} already holds rag-core's pytest settings in {config.section}.")
    result.notes.extend(f"{config.file}: {note}" for note in notes)
    return {}, {}


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


# ---------------------------------------------------------------------------- the files


def _case_schema() -> str:
    from rag_core.evals.golden.case import json_schema

    return json.dumps(json_schema(), indent=2) + "\n"


def workflow(install: str | None = None, extras: str = AGENT_EXAMPLE.extras) -> str:
    """The CI workflow; ``install`` is the pip requirement CI installs rag-core with (a git URL
    or a wheel), else a placeholder with ``extras`` that the workflow refuses to run with."""
    spec = INSTALL_PLACEHOLDER.format(extras=extras) if install is None else install
    return CI_WORKFLOW.format(install=json.dumps(spec), mark=PLACEHOLDER_MARK, workflow=WORKFLOW_PATH, extras=extras)


def check_install(install: str) -> str:
    """The ``--install`` value, or ScaffoldError when it cannot be a pip requirement line."""
    text = install.strip()
    if not text or "\n" in text or "\r" in text:
        raise ScaffoldError("--install: give one pip requirement, such as "
                            "'rag-core[harness,agent] @ git+https://github.com/you/rag-core.git@v0.1.0' or a wheel path")
    if PLACEHOLDER_MARK in text:
        raise ScaffoldError(f"--install: {text!r} still holds the placeholder {PLACEHOLDER_MARK}")
    return text


def init_project(root: Path, install: str | None = None) -> InitResult:
    """Scaffold ``root`` (created if missing) with the example that runs here (``examples.choose``).
    Raises ScaffoldError, having written nothing, when ``root`` is a file, when no example can run
    here (the message says what to install) or when any file cannot be written."""
    if root.exists() and not root.is_dir():
        raise ScaffoldError(f"{root} is a file, not a folder; nothing was written")
    spec = None if install is None else check_install(install)
    try:
        example = choose()
    except NoExample as exc:
        raise ScaffoldError(f"{exc}; nothing was written") from None
    (case, text), *beside = example.files.items()
    files = {
        case: text,
        "fixtures/goldens/case.schema.json": _case_schema(),
        **dict(beside),
        "evals/__init__.py": "",
        "evals/test_goldens.py": TEST_MODULE,
        "evals/test_retrieval.py": RETRIEVAL_TEST_MODULE,
        WORKFLOW_PATH: workflow(spec, example.extras),
    }
    result = InitResult(notes=list(example.notes))
    if root.is_dir():
        new_config, changed = _plan_config(root, result)
    else:
        new_config, changed = {"pytest.ini": "[pytest]\n" + settings_text("ini")}, {}
    files.update(new_config)
    _refuse_credentials({**files, **{name: new for name, (_, new) in changed.items()}})
    for relative in list(files):
        if (root / relative).exists() or (root / relative).is_symlink():
            result.kept.append(relative)
            del files[relative]
    if install is not None and WORKFLOW_PATH in result.kept:
        result.notes.append(f"--install was not used: {WORKFLOW_PATH} exists already (kept); set RAG_CORE_INSTALL in it")
    _Transaction(root).commit(files, changed)
    result.written.extend(files)
    _ignore_run_records(root, result)
    return result


RUNS_IGNORE = ".rag-core/"  # run records and reports (docs/report.md)


def _ignore_run_records(root: Path, result: InitResult) -> None:
    """Add the run records' folder to an existing .gitignore. After the scaffold's files, not among
    them: a line that could not be added is a note, not a reason to write nothing. Without a
    .gitignore the folder ignores itself (runs/store.py)."""
    path = root / ".gitignore"
    try:
        original = path.read_text(encoding="utf-8") if path.is_file() else None
        if original is None or RUNS_IGNORE.rstrip("/") in {line.strip().strip("/") for line in original.splitlines()}:
            return
        from rag_core.evals.atomic import write_atomic

        write_atomic(path, original + ("" if original.endswith("\n") or not original else "\n") + RUNS_IGNORE + "\n")
    except (OSError, UnicodeDecodeError) as exc:
        result.notes.append(f".gitignore: could not add {RUNS_IGNORE} ({exc}); add it yourself")
    else:
        result.changed.append(f"{RUNS_IGNORE} to .gitignore")


def _refuse_credentials(files: dict[str, str]) -> None:
    from rag_core.evals.credentials import CredentialError, check

    for relative, text in files.items():
        try:
            check(relative, text)
        except CredentialError as exc:
            where = "--install" if relative == WORKFLOW_PATH else relative
            raise ScaffoldError(f"{where}: holds what looks like a credential ({exc.findings[0].kind}); a CI "
                                "workflow must read it from a secret; nothing was written") from None


class _Appeared(FileExistsError):
    """A file appeared at a target between the plan and the write: it is kept, and nothing is written."""


class _Transaction:
    """Write every file to a temporary file beside its target first, then move them all into
    place; on any failure remove what this run made (temporary files, placed files, folders)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folders: list[Path] = []  # folders this run created, outermost first
        self.temporaries: list[Path] = []
        self.placed: list[Path] = []

    def commit(self, files: dict[str, str], changed: dict[str, tuple[str, str]]) -> None:
        current = self.root
        try:
            staged = []
            for relative, text in files.items():
                current = self.root / relative
                self._folders_for(current.parent)
                staged.append((self._stage(current, text), current))
            current = self.root / "cassettes"
            self._folders_for(current)  # recordings land here
            replacements = []
            for relative, (original, new) in changed.items():
                current = self.root / relative
                if current.read_text(encoding="utf-8") != original:
                    raise _Appeared(errno.EEXIST, "it changed while rag-core init ran (left as it is)", str(current))
                replacements.append((self._stage(current, new), current))
            for temporary, target in staged:
                current = target
                self._place(temporary, target)
            for temporary, target in replacements:  # last: the one step that changes an existing file
                current = target
                os.replace(temporary, target)
                self.temporaries.remove(temporary)
        except BaseException as exc:
            left = self._undo()
            if not isinstance(exc, OSError):
                raise
            cause = exc.strerror or str(exc)
            outcome = "nothing was written" if not left else "could not remove " + ", ".join(map(str, left))
            raise ScaffoldError(f"cannot write {current}: {cause}; {outcome}") from None

    def _folders_for(self, folder: Path) -> None:
        missing = []
        while not folder.is_dir():
            missing.append(folder)
            folder = folder.parent
        for path in reversed(missing):
            try:
                os.mkdir(path)
            except FileExistsError:
                if path.is_dir():  # made meanwhile by someone else: not ours to remove
                    continue
                raise NotADirectoryError(errno.ENOTDIR, f"{path} is a file, not a folder", str(path)) from None
            self.folders.append(path)

    def _stage(self, target: Path, text: str) -> Path:
        from rag_core._files import _mode_for

        handle, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        temporary = Path(name)
        self.temporaries.append(temporary)
        with os.fdopen(handle, "wb") as out:
            if hasattr(os, "fchmod"):  # the mode a plain open() would give, not mkstemp's 0600
                os.fchmod(out.fileno(), _mode_for(target))
            out.write(text.encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())
        return temporary

    def _place(self, temporary: Path, target: Path) -> None:
        """Move ``temporary`` to ``target`` unless something is there by now (never replaced)."""
        try:
            os.link(temporary, target)  # fails if the target appeared meanwhile
        except FileExistsError:
            raise _Appeared(errno.EEXIST, "it appeared while rag-core init ran (left as it is)", str(target)) from None
        except OSError:  # a file system without hard links: check, then rename (a narrow race)
            if target.exists() or target.is_symlink():
                raise _Appeared(errno.EEXIST, "it appeared while rag-core init ran (left as it is)", str(target)) from None
            os.replace(temporary, target)
            self.temporaries.remove(temporary)
            self.placed.append(target)
            return
        self.placed.append(target)
        temporary.unlink()
        self.temporaries.remove(temporary)

    def _undo(self) -> list[Path]:
        """Remove what this run made; the paths that could not be removed."""
        left = []
        for path in [*self.temporaries, *self.placed]:
            try:
                path.unlink(missing_ok=True)
            except OSError:
                left.append(path)
        for folder in reversed(self.folders):
            try:
                folder.rmdir()
            except FileNotFoundError:
                pass
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):  # not empty: it holds someone else's file now
                    left.append(folder)
        return left
