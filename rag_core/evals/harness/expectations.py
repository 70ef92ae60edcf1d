"""Hand-written checks on what a case did, beyond its golden snapshot: the documents its searches
returned (``expect.retrieved``), its token and round budget (``expect.usage`` limits), and a
prompt prefix that stays byte-identical across rounds and turns (``expect.stable_prefix``)."""

from __future__ import annotations

from typing import Any

from rag_core.evals.harness.case import GoldenCase, RetrievedExpect
from rag_core.evals.harness.paths import shown
from rag_core.evals.harness.wire import prompt_prefix


def check(case: GoldenCase, turn_references: list[list[dict[str, Any]]], observed: dict[str, Any],
          chat_requests: list[dict[str, Any]]) -> list[str]:
    """One message per failed check, naming the case file and the field. ``chat_requests`` are
    the bodies of the case's model requests (embedding and rerank calls have no prompt prefix)."""
    where = f"{shown(case.source)}:expect"
    failures = []
    expect = case.expect
    if expect.retrieved is not None:
        specs = expect.retrieved if isinstance(expect.retrieved, list) else [expect.retrieved] * len(turn_references)
        for turn, (spec, searches) in enumerate(zip(specs, turn_references), start=1):
            if spec is not None:
                problem = retrieved_problem(spec, searches)
                if problem:
                    label = f" (turn {turn})" if len(case.inputs) > 1 else ""
                    failures.append(f"{where}.retrieved{label}: {problem}")
    failures += [f"{where}.usage: {p}" for p in usage_problems(expect.usage or {}, observed)]
    if expect.stable_prefix:
        problem = prefix_problem(chat_requests)
        if problem:
            failures.append(f"{where}.stable_prefix: {problem}")
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


def usage_problems(limits: dict[str, int], observed: dict[str, Any]) -> list[str]:
    """``max_*`` limits against the recorded usage and the number of provider rounds."""
    spent = dict(observed.get("usage") or {}) | {"rounds": len(observed.get("requests") or [])}
    problems = []
    for key, limit in limits.items():
        if key.startswith("max_"):
            counter = key[len("max_"):]
            if spent.get(counter, 0) > limit:
                problems.append(f"{counter} = {spent.get(counter, 0)} is above {key} = {limit}")
    return problems


def prefix_problem(requests: list[dict[str, Any]]) -> str | None:
    """Where the system prompt or the tools first differ from the first request's, with the diff."""
    from rag_core.evals.harness.compare import unified

    if not requests:
        return None
    first = prompt_prefix(requests[0])
    for number, body in enumerate(requests[1:], start=2):
        prefix = prompt_prefix(body)
        if prefix != first:
            parts = [p for p in ("system", "tools") if prefix[p] != first[p]]
            return (f"request #{number} changes the {' and the '.join(parts)} sent in request #1, so a provider's "
                    f"prompt cache cannot reuse the prefix:\n" + unified("prefix", first, prefix))
    return None
