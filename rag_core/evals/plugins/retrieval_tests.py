"""Which retrieval tests a session has: one per retriever of each suite file, one per
``identical`` group and one per sweep (``Target``, a test's parameter), or one that fails naming a
suite file that does not load."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # imported lazily below: a project without retrieval suites never loads them
    from rag_core.evals.retrieval.suite import SuiteSpec


@dataclass
class Target:
    id: str
    suite: SuiteSpec | None = None
    retriever: str | None = None  # None: an `identical` group check or a sweep
    group: list[str] | None = None
    sweep: int | None = None  # index into suite.sweep
    error: str | None = None
    # the tests that reuse one another's retriever results or tables (identical groups, sweeps,
    # the retrievers they read, PgVector retrievers sharing a table) share a process under
    # pytest-xdist's --dist loadgroup
    shares_results: bool = False

    def marks(self) -> list[Any]:
        marks = [pytest.mark.xdist_group(f"{self.suite.name}/shared")] if self.shares_results and self.suite else []
        return marks + [getattr(pytest.mark, tag) for tag in self.tags()]

    def tags(self) -> list[str]:
        """The ``tags:`` of the retrievers this test runs: a group or a sweep needs what each of them needs."""
        if self.suite is None:
            return []
        names = self.group or ([self.suite.sweep[self.sweep].retriever] if self.sweep is not None else
                               [self.retriever] if self.retriever else [])
        return list(dict.fromkeys(tag for name in names for tag in self.suite.retriever(name).tags))


def collect_targets(config: pytest.Config) -> list[Target]:
    from rag_core.evals.common.paths import shown
    from rag_core.evals.retrieval.suite import SuiteFileError, load_suite, suite_files

    targets: list[Target] = []
    loaded: list[SuiteSpec | Target] = []
    for path in suite_files(Path(config.rootpath) / config.getini("rag_core_retrieval")):
        try:
            loaded.append(load_suite(path))
        except SuiteFileError as exc:
            loaded.append(Target(path.stem, error=str(exc)))
    files: dict[str, list[Path]] = {}
    for suite in loaded:
        if not isinstance(suite, Target):
            files.setdefault(suite.name, []).append(suite.source)
    for suite in loaded:
        if isinstance(suite, Target):
            targets.append(suite)
            continue
        if len(files[suite.name]) > 1:  # their baselines (keyed by suite name) and results would be one another's
            targets.append(Target(suite.source.stem, error=f"{' and '.join(shown(p) for p in files[suite.name])} "
                                                           f"both define the suite {suite.name!r}; rename one"))
            continue
        reused = {name for g in suite.identical for name in g} | {s.retriever for s in suite.sweep}
        # PgVector retrievers that can share a loaded table (see evaluate.SharedTables)
        tables = Counter(r.exact for r in suite.retrievers if r.store == "pgvector")
        reused |= {r.name for r in suite.retrievers if r.store == "pgvector" and tables[r.exact] > 1}
        targets += [Target(f"{suite.name}/{r.name}", suite, r.name, shares_results=r.name in reused)
                    for r in suite.retrievers]
        targets += [Target(f"{suite.name}/identical:{'='.join(g)}", suite, None, g, shares_results=True)
                    for g in suite.identical]
        targets += [Target(f"{suite.name}/sweep:{s.retriever}" + (f"#{n}" if n else ""), suite, sweep=n,
                           shares_results=True) for n, s in enumerate(suite.sweep)]
    return targets
