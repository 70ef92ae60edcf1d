"""VectorMatrix: float32 candidates then the shared float64 cosine give exactly the ranking of
scoring every row in float64 — ties, duplicates, filters, replaced and removed rows included."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_core.vectordb.fusion import top_ranked
from rag_core.vectordb.similarity import SIMILARITY_PRECISION, cosine_scores, normalized_rows
from rag_core.vectordb.vector_matrix import CONVERT_ROWS, VectorMatrix


def same(ranking, expected) -> bool:
    """The same ids in the same order, the same scores (BLAS may sum in another order: 1e-12)."""
    return [i for i, _ in ranking] == [i for i, _ in expected] and all(
        abs(a - b) < 1e-12 for (_, a), (_, b) in zip(ranking, expected))


def reference(vectors: dict[str, list[float]], query: list[float], depth: int, allowed=None):
    ids = sorted(i for i in vectors if allowed is None or i in allowed)
    if not ids:
        return []
    scores = cosine_scores(normalized_rows([vectors[i] for i in ids]), query)
    return top_ranked(ids, scores, depth, SIMILARITY_PRECISION)


# few distinct small-integer values make many exact ties and duplicate rows
value = st.integers(-3, 3).map(float)
corpora = st.integers(2, 6).flatmap(lambda d: st.tuples(
    st.lists(st.lists(value, min_size=d, max_size=d), min_size=1, max_size=120),
    st.lists(value, min_size=d, max_size=d),
))


@settings(max_examples=150, deadline=None)
@given(corpora, st.integers(1, 40), st.data())
def test_rank_equals_scoring_every_row_in_float64(corpus, depth, data):
    rows, query = corpus
    vectors = {f"d{n:03d}": row for n, row in enumerate(rows)}
    matrix = VectorMatrix()
    matrix.put(vectors.items())
    removed = data.draw(st.sets(st.sampled_from(sorted(vectors))), label="removed")
    matrix.remove(removed)
    for doc_id in removed:
        del vectors[doc_id]
    replaced = data.draw(st.sets(st.sampled_from(sorted(vectors))) if vectors else st.just(set()), label="replaced")
    changes = {doc_id: [v + 1.0 for v in vectors[doc_id]] for doc_id in replaced}
    matrix.put(changes.items())
    vectors.update(changes)
    allowed = data.draw(st.none() | st.sets(st.sampled_from(sorted(vectors))) if vectors else st.none(), label="allowed")
    assert same(matrix.rank(query, depth, allowed), reference(vectors, query, depth, allowed))
    assert len(matrix) == len(vectors)


def test_random_embeddings_rank_as_in_float64():
    generator = np.random.default_rng(7)
    # more rows than one conversion step holds: the steps' rows land where their ids say
    vectors = {f"doc{n}": generator.standard_normal(384).tolist() for n in range(3 * CONVERT_ROWS - 50)}
    matrix = VectorMatrix()
    matrix.put(vectors.items())
    for _ in range(20):
        query = generator.standard_normal(384).tolist()
        assert same(matrix.rank(query, 100), reference(vectors, query, 100))


def test_an_empty_matrix_ranks_nothing():
    matrix = VectorMatrix()
    assert matrix.rank([1.0, 0.0], 10) == [] and matrix.dimensions is None
    matrix.put([("a", [1.0, 0.0])])
    matrix.remove(["a"])
    assert matrix.rank([1.0, 0.0], 10) == [] and matrix.dimensions is None
