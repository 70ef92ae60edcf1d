"""Files no case or suite uses any more: cassettes and goldens of deleted or renamed cases,
baselines of removed retrievers. Listed in the session summary; ``--prune-orphans`` deletes them."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from rag_core.evals.harness.case import GOLDEN_SUFFIX


def golden_orphans(cases: Iterable[Any], cases_dir: Path, cassettes_dir: Path) -> list[Path]:
    """Top-level cassettes and ``.golden.yaml`` files that belong to no case. Sub-folders of the
    cassettes folder (embedding caches, other recordings) are not the golden cases' to judge."""
    cases = list(cases)
    used = {(cassettes_dir / n).resolve() for c in cases for n in c.cassette_names()} | {c.golden_path.resolve() for c in cases}
    candidates = sorted(cases_dir.glob(f"*{GOLDEN_SUFFIX}")) + sorted(cassettes_dir.glob("*.yaml"))
    return [p for p in candidates if p.resolve() not in used]


def baseline_orphans(suites: Iterable[Any], root: Path) -> list[Path]:
    """Baseline files in a suite's baseline folder that name no retriever of the suite."""
    orphans: list[Path] = []
    for suite in suites:
        if not suite.baseline:
            continue
        folder = root / suite.baseline
        names = {r.name for r in suite.retrievers}
        orphans += [p for p in sorted(folder.glob("*.json")) if p.stem not in names]
    return orphans


def prune(paths: Iterable[Path]) -> list[Path]:
    removed = []
    for path in paths:
        path.unlink(missing_ok=True)
        removed.append(path)
    return removed
