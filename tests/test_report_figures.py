"""The report's figures: one colour per retriever, identical rankings drawn once, linear k."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from rag_core.evals.retrieval import plots  # noqa: E402


def _result(suite: str, retriever: str, rankings: dict, curve: list[float], baseline=None) -> dict:
    return {"suite": suite, "retriever": retriever, "rankings": rankings, "recall_curve": curve,
            "metrics": {"ndcg@10": 0.5}, "per_query": {"ndcg@10": {"q1": 0.5, "q2": 1.0, "q3": 0.0}},
            "baseline_per_query": baseline}


RESULTS = [
    _result("a", "dense", {"q1": ["d1", "d2"]}, [0.2, 0.4, 0.6]),
    _result("a", "dense_chroma", {"q1": ["d1", "d2"]}, [0.2, 0.4, 0.6]),
    _result("a", "bm25", {"q1": ["d2", "d1"]}, [0.3, 0.5, 0.7], baseline={"q1": 0.25, "q2": 1.0, "q3": 0.5}),
    _result("b", "bm25", {"q1": ["d9"]}, [0.1, 0.2, 0.3], baseline={"q1": 0.5, "q2": 1.0, "q3": 0.0}),
    _result("b", "hybrid", {"q1": ["d8"]}, [0.15, 0.3, 0.45]),
]


def _lines(axis) -> dict[str, object]:
    return {line.get_label(): line for line in axis.get_lines() if not line.get_label().startswith("_")}


def test_identical_rankings_are_one_curve_and_a_retriever_keeps_its_colour_in_every_panel():
    figure = plots.recall_figure(RESULTS)
    first, second = figure.axes
    assert set(_lines(first)) == {"bm25", "dense = dense_chroma"}
    assert set(_lines(second)) == {"bm25", "hybrid"}
    assert _lines(first)["bm25"].get_color() == _lines(second)["bm25"].get_color()
    assert len({_lines(first)["dense = dense_chroma"].get_color(), _lines(second)["hybrid"].get_color(),
                _lines(first)["bm25"].get_color()}) == 3
    assert first.get_xscale() == "linear"
    figure.canvas.draw()
    labels = [t.get_text() for t in first.get_xticklabels() if t.get_text()]
    assert labels and all(label.lstrip("−-").isdigit() for label in labels)  # plain integers, no 10^x


def test_the_per_query_figure_shows_each_retrievers_sorted_changes_against_its_baseline(tmp_path):
    figure = plots.delta_figure(RESULTS)
    first, second = figure.axes
    assert list(_lines(first)) == ["bm25"] and list(_lines(second)) == ["bm25"]
    assert list(_lines(first)["bm25"].get_ydata()) == pytest.approx([-0.5, 0.0, 0.25])
    assert list(_lines(second)["bm25"].get_ydata()) == pytest.approx([0.0, 0.0, 0.0])
    plots.save(figure, tmp_path / "deltas.png")
    assert (tmp_path / "deltas.png").read_bytes()[:4] == b"\x89PNG" and not list(tmp_path.glob(".*"))
    assert plots.delta_figure([r | {"baseline_per_query": None} for r in RESULTS]) is None
