"""Reports of a retrieval session: terminal table, JSON, markdown and a recall@k plot."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from rag_core.evals.atomic import write_checked
from rag_core.evals.retrieval.metrics import run_from_ranking


def table(results: list[dict[str, Any]]) -> list[str]:
    """All retrievers side by side, grouped by suite."""
    lines: list[str] = []
    for suite in sorted({r["suite"] for r in results}):
        rows = sorted((r for r in results if r["suite"] == suite), key=lambda r: r["retriever"])
        metrics = list(rows[0]["metrics"])
        header = f"{'retriever':<22}" + "".join(f"{m:>14}" for m in metrics) + f"{'index s':>9}{'query ms p50':>14}"
        lines += [f"suite {suite}", header]
        for r in rows:
            lines.append(
                f"{r['retriever']:<22}" + "".join(f"{r['metrics'][m]:>14.4f}" for m in metrics)
                + f"{r['index_seconds']:>9.2f}{r['query_ms_p50']:>14.2f}"
            )
        empty = max(r.get("empty_documents", 0) for r in rows)
        if empty:
            lines.append(f"{empty} empty document(s) not indexed (they count as relevant but unretrievable)")
        lines.append("")
    return lines


def markdown(results: list[dict[str, Any]], worse: dict[str, list[Any]]) -> str:
    out = ["## Retrieval quality", ""]
    for suite in sorted({r["suite"] for r in results}):
        rows = sorted((r for r in results if r["suite"] == suite), key=lambda r: r["retriever"])
        metrics = list(rows[0]["metrics"])
        out += [f"### {suite}", "", "| retriever | " + " | ".join(metrics) + " | index (s) | query p50 (ms) |",
                "|---|" + "---|" * (len(metrics) + 2)]
        for r in rows:
            out.append(f"| {r['retriever']} | " + " | ".join(f"{r['metrics'][m]:.4f}" for m in metrics)
                       + f" | {r['index_seconds']:.2f} | {r['query_ms_p50']:.2f} |")
        out.append("")
        for r in rows:
            drops = worse.get(f"{suite}/{r['retriever']}") or []
            if drops:
                out.append(f"Queries worse than the baseline for `{r['retriever']}`: "
                           + ", ".join(f"`{q}` ({b:.3f} → {n:.3f})" for q, b, n in drops[:20]))
                out.append("")
    return "\n".join(out)


def plot(results: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    suites = sorted({r["suite"] for r in results})
    figure, axes = plt.subplots(1, len(suites), figsize=(6 * len(suites), 4.5), squeeze=False)
    for axis, suite in zip(axes[0], suites):
        styles = ["-", "--", ":", "-."]  # retrievers with identical numbers stay visible on top of each other
        for number, r in enumerate(sorted((r for r in results if r["suite"] == suite), key=lambda r: r["retriever"])):
            curve = r["recall_curve"]
            axis.plot(range(1, len(curve) + 1), curve, label=r["retriever"], linestyle=styles[number % len(styles)])
        axis.set_title(f"{suite}: recall@k")
        axis.set_xlabel("k")
        axis.set_ylabel("recall")
        axis.set_xscale("log")
        axis.grid(True, alpha=0.3)
        axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


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


def write(folder: Path, results: list[dict[str, Any]], worse: dict[str, list[Any]]) -> list[str]:
    """Write the reports; returns a line per file (or per file left out, and why)."""
    kept = [{k: v for k, v in r.items() if k != "qrels"} for r in results]  # qrels go to one file per suite
    write_checked(folder / "retrieval.json", json.dumps({"results": kept, "worse_than_baseline": worse}, indent=1) + "\n")
    write_checked(folder / "retrieval.md", markdown(results, worse) + "\n")
    written = [str(folder / "retrieval.json"), str(folder / "retrieval.md")]
    for result in results:
        run = folder / "trec" / f"{result['suite']}.{result['retriever']}.run"
        write_checked(run, trec_run(result))
        written.append(str(run))
    for suite in sorted({r["suite"] for r in results}):
        qrels = folder / "trec" / f"{suite}.qrels"
        write_checked(qrels, trec_qrels(next(r["qrels"] for r in results if r["suite"] == suite)))
        written.append(str(qrels))
    try:
        import matplotlib  # noqa: F401  (the plot is optional: the light `evals` install has no matplotlib)
    except ImportError:
        return written + [f"{folder / 'recall_at_k.png'} not drawn: matplotlib is not installed (pip install matplotlib)"]
    png = folder / "recall_at_k.png"
    staging = png.with_name(f".{png.name}.tmp.png")
    plot(results, staging)
    os.replace(staging, png)
    return written + [str(png)]
