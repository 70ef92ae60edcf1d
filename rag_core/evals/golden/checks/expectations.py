"""Hand-written checks on what a case did, beyond its golden snapshot: the documents its searches
returned (``expect.retrieved``), its token and round budget (``expect.usage`` limits), and a
prompt prefix that stays byte-identical across rounds and turns (``expect.stable_prefix``)."""

from __future__ import annotations

from typing import Any

from rag_core.evals.golden.case import RetrievedExpect
from rag_core.evals.golden.case_run import CaseRun
from rag_core.evals.common.failure import Failure
from rag_core.evals.common.paths import shown


def _where(run: CaseRun) -> str:
    return f"{shown(run.case.source)}:expect"


def retrieved(run: CaseRun) -> list[Failure]:
    """Context recall and precision of each turn's searches (a target reports none: every turn's
    list is empty, and the spec says what that means)."""
    spec_or_specs = run.case.expect.retrieved
    if spec_or_specs is None:
        return []
    turns = run.turn_references or [[] for _ in run.case.inputs]
    specs = spec_or_specs if isinstance(spec_or_specs, list) else [spec_or_specs] * len(turns)
    failures = []
    for turn, (spec, searches) in enumerate(zip(specs, turns), start=1):
        if spec is not None:
            problem = retrieved_problem(spec, searches)
            if problem:
                label = f" (turn {turn})" if len(run.case.inputs) > 1 else ""
                failures.append(Failure("retrieved", "case", shown(run.case.source), "expect.retrieved",
                                        f"{_where(run)}.retrieved{label}: {problem}"))
    return failures


def retrieved_documents(spec: RetrievedExpect, searches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The documents the turn's searches returned, each search's first ``k``, once each, in order."""
    seen, documents = set(), []
    for search in searches:
        for doc in search.get("references", [])[: spec.k]:
            key = (doc.get("name"), doc.get("content"))
            if key not in seen:
                seen.add(key)
                documents.append(doc)
    return documents


def retrieved_problem(spec: RetrievedExpect, searches: list[dict[str, Any]]) -> str | None:
    """Context recall (expected items found) and precision (returned documents that were expected),
    or None when both reach the spec's minimums."""
    documents = retrieved_documents(spec, searches)
    if spec.names is not None:
        wanted = spec.names
        found = [name for name in wanted if any(d.get("name") == name for d in documents)]
        relevant = [d for d in documents if d.get("name") in wanted]
    else:
        wanted = spec.contains or []
        found = [text for text in wanted if any(text in (d.get("content") or "") for d in documents)]
        relevant = [d for d in documents if any(text in (d.get("content") or "") for text in wanted)]
    recall = len(found) / len(wanted) if wanted else 1.0
    precision = len(relevant) / len(documents) if documents else 0.0
    if recall >= spec.min_recall and precision >= spec.min_precision:
        return None
    missing = [item for item in wanted if item not in found]
    got = [d.get("name") or (d.get("content") or "")[:40] for d in documents]
    searched = [s.get("query") for s in searches]
    return (f"context recall {len(found)}/{len(wanted)} = {recall:.2f} (at least {spec.min_recall:g}), precision "
            f"{len(relevant)}/{len(documents)} = {precision:.2f} (at least {spec.min_precision:g}); missing: "
            f"{missing or 'nothing'}; the searches {searched} returned (first {spec.k} each): {got}")


def usage_limits(run: CaseRun) -> list[Failure]:
    """``max_*`` limits against the recorded usage and the number of provider rounds."""
    limits = run.case.expect.usage or {}
    spent = dict(run.observed.get("usage") or {}) | {"rounds": len(run.observed.get("requests") or [])}
    failures = []
    for key, limit in limits.items():
        if key.startswith("max_"):
            counter = key[len("max_"):]
            if spent.get(counter, 0) > limit:
                failures.append(Failure("usage", "case", shown(run.case.source), f"expect.usage.{key}",
                                        f"{_where(run)}.usage: {counter} = {spent.get(counter, 0)} is above "
                                        f"{key} = {limit}"))
    return failures


def stable_prefix(run: CaseRun) -> list[Failure]:
    """Where the system prompt or the tools first differ from the first model request's."""
    prefixes = run.wire["prompt_prefixes"]
    if not run.case.expect.stable_prefix or not prefixes:
        return []
    first = prefixes[0]
    for number, prefix in enumerate(prefixes[1:], start=2):
        if prefix != first:
            parts = [p for p in ("system", "tools") if prefix[p] != first[p]]
            return [Failure("stable_prefix", "case", shown(run.case.source), "expect.stable_prefix",
                            f"{_where(run)}.stable_prefix: request #{number} changes the {' and the '.join(parts)} "
                            "sent in request #1, so a provider's prompt cache cannot reuse the prefix:",
                            golden=first, observed=prefix, label="prefix")]
    return []
