"""What ``rag-core init`` writes into a project: one example golden case that runs there (see
``examples``) and what runs it: its test modules, rag-core's pytest settings (``pytest_config``)
and a CI workflow (``workflow``).

Files that already exist are never overwritten, and an existing pytest section is never edited:
the lines it lacks are printed instead. All or nothing (``transaction``): when any step fails,
what this run wrote is removed and ``ScaffoldError`` says what failed and that nothing was written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from rag_core.evals.scaffold.errors import ScaffoldError
from rag_core.evals.scaffold.examples import NoExample, choose
from rag_core.evals.scaffold.pytest_config import new_settings_file, plan_settings
from rag_core.evals.scaffold.transaction import Transaction
from rag_core.evals.scaffold.workflow import WORKFLOW_PATH, check_install, workflow

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

NEXT_STEPS = """\
Next, in {folder}:
  pytest evals/ --record-mode=once --emulator   # record the example against the built-in emulator; writes its golden
  pytest evals/                                 # replay, as CI does: no keys, no network"""


@dataclass
class InitResult:
    written: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # existed already; left as they were
    notes: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # "<section> to <file>": existing files that gained a section


def _case_schema() -> str:
    from rag_core.evals.golden.case import json_schema

    return json.dumps(json_schema(), indent=2) + "\n"


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
    settings = plan_settings(root) if root.is_dir() else new_settings_file()
    result.notes.extend(settings.notes)
    result.changed.extend(settings.added)
    files.update(settings.new)
    changed = settings.changed
    _refuse_credentials({**files, **{name: new for name, (_, new) in changed.items()}})
    for relative in list(files):
        if (root / relative).exists() or (root / relative).is_symlink():
            result.kept.append(relative)
            del files[relative]
    if install is not None and WORKFLOW_PATH in result.kept:
        result.notes.append(f"--install was not used: {WORKFLOW_PATH} exists already (kept); set RAG_CORE_INSTALL in it")
    Transaction(root).commit(files, changed)
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
