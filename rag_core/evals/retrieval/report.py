"""Reports of a retrieval session: terminal table, JSON, markdown, TREC files and figures (plots.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rag_core.evals.atomic import write_checked
from rag_core.evals.retrieval.metrics import run_from_ranking
from rag_core.evals.common.significance import pairwise


def table(results: list[dict[str, Any]]) -> list[str]:
    """All retrievers side by side, grouped by suite."""
    lines: list[str] = []
    for suite in sorted({r["suite"] for r in results}):
        rows = sorted((r for r in results if r["suite"] == suite), key=lambda r: r["retriever"])
        metrics = list(rows[0]["metrics"])
        header = (f"{'retriever':<22}" + "".join(f"{m:>14}" for m in metrics)
                  + f"{'index s':>9}{'query ms p50':>14}{'gate':>6}")
        lines += [f"suite {suite}", header]
        for r in rows:
            lines.append(
                f"{r['retriever']:<22}" + "".join(f"{r['metrics'][m]:>14.4f}" for m in metrics)
                + f"{r['index_seconds']:>9.2f}{r['query_ms_p50']:>14.2f}{r.get('gate', '-'):>6}"
            )
        empty = max(r.get("empty_documents", 0) for r in rows)
        if empty:
            lines.append(f"{empty} empty document(s) not indexed (they count as relevant but unretrievable)")
        beside = max(r.get("background_threads", 0) for r in rows)
        if beside:
            lines.append(f"timed while other retrievers ran in {beside} background thread(s) beside the tests; "
                         "pytest --retrieval-threads 0 times each alone")
        lines.append("")
    return lines


def significance(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per suite, the p-value of every pair of retrievers on the suite's primary metric."""
    out: dict[str, dict[str, Any]] = {}
    for suite in sorted({r["suite"] for r in results}):
        rows = [r for r in results if r["suite"] == suite]
        primary = next(iter(rows[0]["metrics"]))
        p_values = pairwise({r["retriever"]: r["per_query"][primary] for r in rows})
        out[suite] = {"metric": primary, "test": "paired randomization (sign flips), two-sided",
                      "p": {f"{a} vs {b}": p for (a, b), p in p_values.items()}}
    return out


def markdown(results: list[dict[str, Any]], worse: dict[str, list[Any]],
             p_values: dict[str, dict[str, Any]] | None = None) -> str:
    out = ["## Retrieval quality", ""]
    for suite in sorted({r["suite"] for r in results}):
        rows = sorted((r for r in results if r["suite"] == suite), key=lambda r: r["retriever"])
        metrics = list(rows[0]["metrics"])
        out += [f"### {suite}", "", "| retriever | " + " | ".join(metrics) + " | index (s) | query p50 (ms) | gate |",
                "|---|" + "---|" * (len(metrics) + 3)]
        for r in rows:
            out.append(f"| {r['retriever']} | " + " | ".join(f"{r['metrics'][m]:.4f}" for m in metrics)
                       + f" | {r['index_seconds']:.2f} | {r['query_ms_p50']:.2f} | {r.get('gate', '-')} |")
        out.append("")
        tested = (p_values or {}).get(suite)
        if tested and tested["p"]:
            names = [r["retriever"] for r in rows]
            out += [f"Is the difference in {tested['metric']} between two retrievers real? p-values of a "
                    f"{tested['test']} test over the queries (below 0.05: unlikely to be chance):", "",
                    "| | " + " | ".join(names[1:]) + " |", "|---|" + "---|" * (len(names) - 1)]
            for i, a in enumerate(names[:-1]):
                cells = ["" if j <= i else _p_cell(tested["p"].get(f"{a} vs {b}")) for j, b in enumerate(names) if j > 0]
                out.append(f"| {a} | " + " | ".join(cells) + " |")
            out.append("")
        for r in rows:
            drops = worse.get(f"{suite}/{r['retriever']}") or []
            if drops:
                out.append(f"Queries worse than the baseline for `{r['retriever']}`: "
                           + ", ".join(f"`{q}` ({b:.3f} → {n:.3f})" for q, b, n in drops[:20]))
                out.append("")
    return "\n".join(out)


def _p_cell(p: float | None) -> str:
    return "-" if p is None else f"{p:.4f}"


def trec_run(result: dict[str, Any]) -> str:
    """The retriever's rankings as a TREC run file (``qid Q0 docid rank score tag``).

    Scores fall strictly with the rank (n, n-1, …, 1), so trec_eval, whose order is score
    descending with ties broken by document id, reads back exactly the order the retriever
    returned: the order the suite scored."""
    tag = f"{result['suite']}.{result['retriever']}"
    lines = []
    for query in sorted(result["rankings"]):
        scores = run_from_ranking(result["rankings"][query])  # the scores the suite itself scored
        lines += [f"{query} Q0 {doc} {rank} {scores[doc]:g} {tag}" for rank, doc in enumerate(scores, start=1)]
    return "\n".join(lines) + "\n"


def trec_qrels(qrels: dict[str, dict[str, int]]) -> str:
    """Judgements as a TREC qrels file (``qid 0 docid grade``)."""
    return "".join(f"{q} 0 {doc} {grade}\n" for q in sorted(qrels) for doc, grade in sorted(qrels[q].items()))


def write(folder: Path, results: list[dict[str, Any]], worse: dict[str, list[Any]],
          sweeps: list[dict[str, Any]] | None = None) -> list[str]:
    """Write the reports; returns a line per file (or per file left out, and why)."""
    from rag_core.evals.retrieval.sweep import table as sweep_table

    kept = [{k: v for k, v in r.items() if k != "qrels"} for r in results]  # qrels go to one file per suite
    p_values = significance(results)
    sweeps = sorted(sweeps or [], key=lambda s: (s["suite"], s["retriever"]))
    write_checked(folder / "retrieval.json",
                  {"results": kept, "worse_than_baseline": worse, "significance": p_values, "sweeps": sweeps},
                  lambda data: json.dumps(data, indent=1) + "\n")
    swept = "".join("\n```\n" + "\n".join(sweep_table(s)) + "\n```\n" for s in sweeps)
    write_checked(folder / "retrieval.md", markdown(results, worse, p_values) + ("\n## Sweeps\n" + swept if sweeps else "") + "\n")
    written = [str(folder / "retrieval.json"), str(folder / "retrieval.md")]
    for result in results:
        run = folder / "trec" / f"{result['suite']}.{result['retriever']}.run"
        write_checked(run, trec_run(result))
        written.append(str(run))
    for suite in sorted({r["suite"] for r in results}):
        qrels = folder / "trec" / f"{suite}.qrels"
        write_checked(qrels, trec_qrels(next(r["qrels"] for r in results if r["suite"] == suite)))
        written.append(str(qrels))
    if not results:
        return written  # only sweeps ran: no retriever's curve to draw
    try:
        import matplotlib  # noqa: F401  (the plot is optional: the light `evals` install has no matplotlib)
    except ImportError:
        return written + [f"{folder / 'recall_at_k.png'} not drawn: matplotlib is not installed (pip install matplotlib)"]
    from rag_core.evals.retrieval import plots

    plots.save(plots.recall_figure(results), folder / "recall_at_k.png")
    written.append(str(folder / "recall_at_k.png"))
    deltas = plots.delta_figure(results)
    if deltas is not None:
        plots.save(deltas, folder / "per_query_vs_baseline.png")
        written.append(str(folder / "per_query_vs_baseline.png"))
    return written
