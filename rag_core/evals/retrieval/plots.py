"""The report's figures: recall@k per suite, and per-query differences against the baseline.

One colour per retriever in every panel of both figures (a retriever is found by its colour
across suites); retrievers whose rankings are identical are one curve with one legend entry
("dense = dense_chroma"), instead of curves hidden under each other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def colours(results: list[dict[str, Any]]) -> dict[str, Any]:
    """A colour per retriever name, the same in every suite and figure."""
    from matplotlib import colormaps

    names = sorted({r["retriever"] for r in results})
    palette = colormaps["tab10" if len(names) <= 10 else "tab20"]
    return {name: palette(number % palette.N) for number, name in enumerate(names)}


def identical_groups(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Rows grouped by identical rankings, in name order (each group keeps its first row's place)."""
    groups: list[list[dict[str, Any]]] = []
    for row in sorted(rows, key=lambda r: r["retriever"]):
        same = next((g for g in groups if g[0].get("rankings") == row.get("rankings") and row.get("rankings")), None)
        if same is None:
            groups.append([row])
        else:
            same.append(row)
    return groups


def _panels(suites: list[str]) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(suites), figsize=(6 * len(suites), 4.5), squeeze=False)
    return figure, axes[0]


def recall_figure(results: list[dict[str, Any]]) -> Any:
    from matplotlib.ticker import MaxNLocator

    palette = colours(results)
    suites = sorted({r["suite"] for r in results})
    figure, axes = _panels(suites)
    for axis, suite in zip(axes, suites):
        for group in identical_groups([r for r in results if r["suite"] == suite]):
            curve = group[0]["recall_curve"]
            axis.plot(range(1, len(curve) + 1), curve, color=palette[group[0]["retriever"]],
                      label=" = ".join(r["retriever"] for r in group))
        axis.set_title(f"{suite}: recall@k")
        axis.set_xlabel("k (documents retrieved)")
        axis.set_ylabel("recall")
        axis.set_ylim(0, 1.02)
        axis.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=10))  # 1, 10, 20 ... not 10^1
        axis.grid(True, alpha=0.3)
        axis.legend(fontsize=8, loc="lower right")
    figure.tight_layout()
    return figure


def delta_figure(results: list[dict[str, Any]]) -> Any | None:
    """Per suite, each retriever's per-query change of the primary metric against its baseline,
    sorted (queries that got worse on the left); None when no retriever has a baseline."""
    with_baseline = [r for r in results if r.get("baseline_per_query")]
    if not with_baseline:
        return None
    palette = colours(results)
    suites = sorted({r["suite"] for r in with_baseline})
    figure, axes = _panels(suites)
    for axis, suite in zip(axes, suites):
        primary = ""
        for group in identical_groups([r for r in with_baseline if r["suite"] == suite]):
            row = group[0]
            primary = next(iter(row["metrics"]))
            before = row["baseline_per_query"]
            deltas = sorted(row["per_query"][primary][q] - before[q] for q in row["per_query"][primary] if q in before)
            axis.plot(range(1, len(deltas) + 1), deltas, color=palette[row["retriever"]], drawstyle="steps-mid",
                      label=" = ".join(r["retriever"] for r in group))
        axis.axhline(0, color="black", linewidth=0.8)
        axis.set_title(f"{suite}: {primary} per query, now - baseline")
        axis.set_xlabel("queries, sorted by change")
        axis.set_ylabel(f"change in {primary}")
        axis.grid(True, alpha=0.3)
        axis.legend(fontsize=8, loc="upper left")
    figure.tight_layout()
    return figure


def save(figure: Any, path: Path) -> None:
    """Written beside the target and renamed over it: a reader never sees half a PNG."""
    import os

    import matplotlib.pyplot as plt

    staging = path.with_name(f".{path.name}.tmp.png")
    figure.savefig(staging, dpi=120)
    plt.close(figure)
    os.replace(staging, path)
