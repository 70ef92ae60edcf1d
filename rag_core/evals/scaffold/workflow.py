"""The CI workflow ``rag-core init`` writes: it replays the golden cases on every push, with
rag-core installed from where the project names (``--install``), or stops naming the placeholder."""

from __future__ import annotations

import json

from rag_core.evals.scaffold.errors import ScaffoldError
from rag_core.evals.scaffold.examples import AGENT_EXAMPLE

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
