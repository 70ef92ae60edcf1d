"""Thresholds and baselines: the regression gate of a retrieval suite.

A baseline is one JSON file per retriever, in the suite's ``baseline`` folder, keyed by the suite
and the retriever: ``<retriever>.json`` in a folder named after the suite (``baselines/kitchen/dense.json``
for suite ``kitchen``), else ``<suite>@<retriever>.json`` (``baselines/kitchen@dense.json``), so
suites sharing a folder never write or read one another's files (``@`` is in no suite or retriever
name). The file names its suite and retriever, and both are checked when it is read. A
``<retriever>.json`` in a folder not named after the suite (written before baselines were keyed)
is still read while the keyed file does not exist, if it names this suite.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from rag_core.evals.atomic import write_checked
from rag_core.evals.retrieval.evaluate import RetrieverResult
from rag_core.evals.common.significance import paired_p_value
from rag_core.evals.retrieval.suite import SuiteSpec


DECIMALS = 6  # baselines keep 6 decimals; compared values are rounded alike
SEPARATOR = "@"  # between the suite and the retriever in a file name; in neither name


class BaselineError(ValueError):
    """A baseline file that cannot be used: it names the file and the cause. ``foreign``: the file
    is another suite's baseline (never overwritten, so nothing of that suite is lost)."""

    def __init__(self, path: Path, message: str, foreign: bool = False) -> None:
        super().__init__(message)
        self.path = path
        self.foreign = foreign


def _rounded(values: dict[str, float]) -> dict[str, float]:
    return {q: round(v, DECIMALS) for q, v in values.items()}


def baseline_folder(suite: SuiteSpec, root: Path) -> Path | None:
    return root / suite.baseline if suite.baseline else None


def baseline_file(suite: SuiteSpec, root: Path, retriever: str) -> Path | None:
    """Where this suite keeps this retriever's baseline (see the module's docstring), or None
    when the suite keeps no baselines."""
    folder = baseline_folder(suite, root)
    if folder is None:
        return None
    own = folder.name == suite.name
    return folder / (f"{retriever}.json" if own else f"{suite.name}{SEPARATOR}{retriever}.json")


def legacy_file(suite: SuiteSpec, root: Path, retriever: str) -> Path | None:
    """The unkeyed ``<retriever>.json`` of a suite whose folder is not named after it (what was
    written before baselines were keyed), or None where the keyed name is that name already."""
    folder = baseline_folder(suite, root)
    if folder is None or folder.name == suite.name:
        return None
    return folder / f"{retriever}.json"


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def shape_problem(data: Any) -> str | None:
    """Why ``data`` (a parsed JSON document) is not a baseline, or None when it is one: a mapping
    with ``suite`` and ``retriever`` (names), ``metrics`` (metric -> number) and ``per_query``
    (metric -> query -> number)."""
    if not isinstance(data, dict):
        return f"expected a mapping with suite, retriever, metrics and per_query, got {json.dumps(data)[:40]}"
    missing = [k for k in ("suite", "retriever", "metrics", "per_query") if k not in data]
    if missing:
        return f"it has no {', '.join(missing)} (a baseline names its suite, retriever, metrics and per_query values)"
    for key in ("suite", "retriever"):
        if not isinstance(data[key], str) or not data[key]:
            return f"{key} is {json.dumps(data[key])[:40]}, not a name"
    if not isinstance(data["metrics"], dict):
        return f"metrics is {json.dumps(data['metrics'])[:40]}, not a mapping of metric to number"
    for metric, value in data["metrics"].items():
        if not _number(value):
            return f"metrics.{metric} is {json.dumps(value)[:40]}, not a number"
    if not isinstance(data["per_query"], dict):
        return f"per_query is {json.dumps(data['per_query'])[:40]}, not a mapping of metric to per-query numbers"
    for metric, values in data["per_query"].items():
        if not isinstance(values, dict):
            return f"per_query.{metric} is {json.dumps(values)[:40]}, not a mapping of query to number"
        for query, value in values.items():
            if not _number(value):
                return f"per_query.{metric}.{query} is {json.dumps(value)[:40]}, not a number"
    return None


def read_baseline(path: Path) -> dict[str, Any]:
    """The file's baseline, whoever's it is; BaselineError naming the file when it is not one."""
    from rag_core.evals.common.paths import shown

    hint = "fix it or rewrite it with pytest evals/ --update-baselines"
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        from rag_core.evals.retrieval.reading import not_utf8

        raise BaselineError(path, f"{not_utf8(shown(path), exc)}, or rewrite it with pytest evals/ --update-baselines") from None
    except IsADirectoryError:
        raise BaselineError(path, f"{shown(path)}: a folder where the baseline file should be; move it away, "
                                  "then write the baseline with pytest evals/ --update-baselines") from None
    except OSError as exc:
        raise BaselineError(path, f"{shown(path)}: the baseline cannot be read ({exc.strerror or exc})") from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested more deeply than can be read
        raise BaselineError(path, f"{shown(path)}: not valid JSON ({exc}); {hint}") from exc
    problem = shape_problem(data)
    if problem:
        raise BaselineError(path, f"{shown(path)}: not a baseline: {problem}; {hint}")
    return data


def load_baseline(suite: SuiteSpec, root: Path, retriever: str) -> dict[str, Any] | None:
    """This retriever's baseline, or None when it has none yet (or the suite keeps none).

    A file there that is not a baseline, or is another suite's or retriever's, is a BaselineError
    naming the file and the cause: never a gate silently left without its baseline."""
    from rag_core.evals.common.paths import shown

    path = baseline_file(suite, root, retriever)
    if path is None:
        return None
    if path.parent.exists() and not path.parent.is_dir():  # else every baseline in it would read as "none yet"
        raise BaselineError(path.parent, f"{shown(path.parent)}: the suite's baseline folder is a file (baseline: in "
                                         f"{shown(suite.source) if suite.source else 'suite ' + suite.name}); move it "
                                         f"away, or name another folder")
    if not path.exists():
        legacy = legacy_file(suite, root, retriever)
        if legacy is None or not legacy.exists():
            return None
        path = legacy
    data = read_baseline(path)
    keyed = baseline_file(suite, root, retriever)
    if data["suite"] != suite.name:
        if path != keyed and data["suite"] == path.parent.name:
            return None  # the own file of the suite this folder is named after, not a legacy one of ours
        other, where = data["suite"], (
            f"where suite {suite.name} keeps retriever {retriever}'s baseline" if path == keyed else
            f"read as suite {suite.name}'s while it has no {shown(keyed)}")
        raise BaselineError(
            path, f"{shown(path)}: the baseline of suite {other!r}, not of suite {suite.name!r} ({where}); if suite "
                  f"{other} still uses it, rename it {other}{SEPARATOR}{data['retriever']}.json, else delete it; then "
                  f"write suite {suite.name}'s with pytest evals/ --update-baselines", foreign=True)
    if data["retriever"] != retriever:
        raise BaselineError(
            path, f"{shown(path)}: the baseline of retriever {data['retriever']!r}, not of {retriever!r} (suite "
                  f"{suite.name}); rewrite it with pytest evals/ --update-baselines")
    return data


def owned_baselines(suite: SuiteSpec, root: Path) -> set[Path]:
    """The files this suite reads as its baselines (resolved): every retriever's keyed file, and
    its legacy file while the keyed one does not exist and the legacy one names this suite."""
    owned: set[Path] = set()
    for retriever in suite.retrievers:
        path = baseline_file(suite, root, retriever.name)
        if path is None:
            return owned
        owned.add(path.resolve())
        legacy = legacy_file(suite, root, retriever.name)
        if legacy is not None and not path.exists() and legacy.exists():
            try:
                if read_baseline(legacy)["suite"] == suite.name:
                    owned.add(legacy.resolve())
            except BaselineError:
                pass  # not a baseline: never an orphan anyway
    return owned


def write_baseline(path: Path, suite: SuiteSpec, result: RetrieverResult) -> None:
    """The metrics and every metric's per-query values (what a significance test pairs with)."""
    data = {
        "suite": suite.name,
        "retriever": result.retriever,
        "metrics": _rounded(result.metrics),
        "per_query": {m: _rounded(dict(sorted(result.per_query[m].items()))) for m in suite.metrics},
    }
    from rag_core.evals.credentials import CredentialError
    from rag_core.evals.common.paths import shown

    try:
        write_checked(path, data, lambda data: json.dumps(data, indent=1, sort_keys=False) + "\n")
    except CredentialError as exc:
        raise BaselineError(path, " ".join(str(exc).split())) from None
    except OSError as exc:
        raise BaselineError(path, f"{shown(path)}: the baseline cannot be written ({_write_problem(exc)})") from None


def _write_problem(exc: OSError) -> str:
    """Why a file could not be written, in words: a file standing where a folder must be, and a
    folder where the file must be, are what a person can fix."""
    from rag_core.evals.common.paths import shown

    if isinstance(exc, (FileExistsError, NotADirectoryError)) and exc.filename:
        return f"{shown(Path(exc.filename))} is a file, where a folder is needed"
    if isinstance(exc, IsADirectoryError):
        return "a folder is in its place"
    return exc.strerror or str(exc)


def worse_queries(suite: SuiteSpec, result: RetrieverResult, baseline: dict[str, Any] | None) -> list[tuple[str, float, float]]:
    """(query, before, now) for queries whose primary metric dropped by more than the suite's
    tolerance, worst first. Baselines keep 6 decimals, so a smaller drop is rounding, not a change."""
    primary = suite.metrics[0]
    before = (baseline or {}).get("per_query", {}).get(primary, {})
    now = result.per_query[primary]
    allowed = max(suite.tolerance, 5e-7)  # never finer than the baseline's rounding
    drops = [(q, before[q], now[q]) for q in now if q in before and now[q] < before[q] - allowed]
    return sorted(drops, key=lambda d: (d[2] - d[1], d[0]))


def check(suite: SuiteSpec, result: RetrieverResult, baseline: dict[str, Any] | None) -> tuple[list[str], str]:
    """Failures (empty when the gate passes) and a table of every metric, before and after, with
    the p-value of the change where the baseline has per-query values for the metric."""
    gates = suite.thresholds.get(result.retriever, {})
    old = (baseline or {}).get("metrics", {})
    old_per_query = (baseline or {}).get("per_query", {})
    rows = [f"{'metric':<14} {'threshold':>9} {'baseline':>9} {'now':>9} {'delta':>9} {'p':>7}  status"]
    failures = []
    for metric in suite.metrics:
        now = result.metrics[metric]
        floor = gates.get(metric)
        before = old.get(metric)
        # rounded as the baseline was: an unchanged query differs by 0, not by rounding noise
        p = (paired_p_value(_rounded(result.per_query[metric]), old_per_query[metric])
             if metric in old_per_query else None)
        status = "ok"
        if floor is not None and now < floor:
            status = "BELOW THRESHOLD"
            failures.append(f"{metric} = {now:.4f} is below its threshold {floor:.4f}")
        if before is not None and now < before - suite.tolerance:
            drop = f"{metric} = {now:.4f} fell below the baseline {before:.4f} by more than {suite.tolerance}"
            if suite.significance is not None and p is not None and p >= suite.significance:
                status = "ok (drop not significant)" if status == "ok" else status
            else:
                status = "REGRESSED" if status == "ok" else status + ", REGRESSED"
                failures.append(drop + (f" (p = {p:.4f}, paired randomization test)" if p is not None else ""))
        rows.append(
            f"{metric:<14} {floor if floor is not None else '-':>9} "
            f"{f'{before:.4f}' if before is not None else '-':>9} {now:>9.4f} "
            f"{f'{now - before:+.4f}' if before is not None else '-':>9} "
            f"{f'{p:.4f}' if p is not None else '-':>7}  {status}"
        )
    if suite.significance is not None:
        rows.append(f"(a drop beyond {suite.tolerance} fails only with p < {suite.significance})")
    return failures, "\n".join(rows)
