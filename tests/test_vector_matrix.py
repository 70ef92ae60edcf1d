"""VectorMatrix: float32 candidates then the shared float64 cosine give exactly the ranking of
scoring every row in float64 — ties, duplicates, filters, replaced and removed rows included."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_core.vectordb.fusion import SAMPLE_STRIDE, SORT_AT_MOST, kth_largest, rank_order, top_ranked
from rag_core.vectordb.similarity import (SIMILARITY_PRECISION, candidate_margin, cosine_scores,
                                          normalized_rows, unit_vector)
from rag_core.vectordb import vector_matrix
from rag_core.vectordb.vector_matrix import CONVERT_ROWS, VectorMatrix, one_blas_thread


def same(ranking, expected) -> bool:
    """The same ids in the same order, the same scores (BLAS may sum in another order: 1e-12)."""
    return [i for i, _ in ranking] == [i for i, _ in expected] and all(
        abs(a - b) < 1e-12 for (_, a), (_, b) in zip(ranking, expected))


def reference(vectors: dict[str, list[float]], query: list[float], depth: int, allowed=None):
    ids = sorted(i for i in vectors if allowed is None or i in allowed)
    if not ids:
        return []
    scores = cosine_scores(normalized_rows([vectors[i] for i in ids]), query)
    return rank_order(zip(ids, scores.tolist()), SIMILARITY_PRECISION)[:depth]  # every row sorted


# few distinct small-integer values make many exact ties and duplicate rows
value = st.integers(-3, 3).map(float)
corpora = st.integers(2, 6).flatmap(lambda d: st.tuples(
    st.lists(st.lists(value, min_size=d, max_size=d), min_size=1, max_size=120),
    st.lists(value, min_size=d, max_size=d),
))


@settings(max_examples=150, deadline=None)
@given(corpora, st.integers(1, 40), st.data())
def test_rank_equals_scoring_every_row_in_float64(corpus, depth, data):
    check_rank(corpus, depth, data)


@settings(max_examples=100, deadline=None)
@given(corpora, st.integers(1, 40), st.data())
def test_rows_spread_over_many_blocks_rank_as_rows_in_one(corpus, depth, data):
    """Blocks of 5 rows: products per block, candidates taken across blocks, a row removed from
    one block filled from the last, the last block dropped when it empties."""
    before, vector_matrix.BLOCK_ROWS = vector_matrix.BLOCK_ROWS, 5
    try:
        check_rank(corpus, depth, data)
    finally:
        vector_matrix.BLOCK_ROWS = before


def check_rank(corpus, depth, data) -> None:
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
        for depth in (10, 100):  # at 10 the cut-off is found from a sample of the scores first
            assert same(matrix.rank(query, depth), reference(vectors, query, depth))


def test_growing_copies_at_most_a_block_never_the_whole_matrix(monkeypatch):
    """One matrix doubled whole held both copies while it grew: 4,097 rows peaked at 12,288 rows'
    worth (a million 384-d rows: 2.4 GB for 1.5 GB of vectors). In blocks, only the last one
    grows, and the peak stays near the rows themselves."""
    import tracemalloc

    monkeypatch.setattr(vector_matrix, "BLOCK_ROWS", 1024, raising=False)
    rows = np.random.default_rng(5).standard_normal((4097, 384)).astype(np.float32)
    ids = [f"doc{n}" for n in range(len(rows))]
    matrix = VectorMatrix()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for start in range(0, len(rows), 500):  # as a store is given batches
            matrix.put(zip(ids[start:start + 500], rows[start:start + 500]))
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert peak < 1.6 * rows.nbytes, f"peak {peak / rows.nbytes:.2f}× the rows"
    assert same(matrix.rank(rows[7].tolist(), 10), reference(dict(zip(ids, rows.tolist())), rows[7].tolist(), 10))


def test_the_best_rows_are_found_when_the_sample_misses_them_all():
    """Rows the cut-off's sample reads (every SAMPLE_STRIDE-th) point away from the query;
    the best rows all sit between them."""
    generator = np.random.default_rng(3)
    query = generator.standard_normal(64)
    vectors = {}
    for n in range(2_000):
        noise = generator.standard_normal(64)
        vectors[f"doc{n:04d}"] = (-query + 0.1 * noise if n % SAMPLE_STRIDE == 0 else query + noise).tolist()
    matrix = VectorMatrix()
    matrix.put(vectors.items())
    for depth in (1, 10, 30):
        assert same(matrix.rank(query.tolist(), depth), reference(vectors, query.tolist(), depth))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_kth_largest_is_the_partitions_whatever_the_order_ties_and_filtered_rows(data):
    size = data.draw(st.integers(1, 3_000), label="size")
    k = data.draw(st.integers(1, min(size, 200)), label="k")
    # few distinct values: many ties at the cut-off; -inf is how a filter removes a row. The
    # values come from a drawn seed: drawing thousands of floats one by one took 5 s a run
    palette = data.draw(st.lists(st.sampled_from([-np.inf, -1.0, 0.0, 0.25, 0.5, 1.0]), min_size=1, unique=True),
                        label="palette")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    values = np.random.default_rng(seed).choice(np.array(palette, dtype=np.float32), size)
    order = data.draw(st.sampled_from(["as drawn", "ascending", "descending", "best off the sample"]), label="order")
    if order == "ascending":
        values.sort()
    elif order == "descending":
        values = np.sort(values)[::-1].copy()
    elif order == "best off the sample":
        ranked = np.sort(values)
        sampled = np.arange(size) % SAMPLE_STRIDE == 0
        values = np.empty_like(ranked)
        values[sampled] = ranked[: sampled.sum()]  # the sample gets the lowest values
        values[~sampled] = ranked[sampled.sum():]
    assert kth_largest(values, k) == np.partition(values, size - k)[size - k]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0.1, 0.3, 0.3000000001, 0.7, 0.9]), max_size=3 * SORT_AT_MOST),
       st.integers(1, 2 * SORT_AT_MOST))
def test_top_ranked_equals_sorting_every_score(scores, depth):
    ids = [f"d{n:03d}" for n in reversed(range(len(scores)))]  # id order is not input order
    expected = rank_order(zip(ids, scores), SIMILARITY_PRECISION)[:depth]
    assert top_ranked(ids, np.array(scores), depth, SIMILARITY_PRECISION) == expected


def test_the_product_runs_on_one_blas_thread_and_each_exit_restores_what_it_found():
    from threadpoolctl import threadpool_limits

    from rag_core.vectordb.vector_matrix import _blas_libraries

    libraries = _blas_libraries()  # numpy's (found once; a library loaded later is not limited)
    assert libraries

    def threads() -> set[int]:
        return {lib.get_num_threads() for lib in libraries}

    with threadpool_limits(limits=2, user_api="blas"):
        assert threads() == {2}
        with one_blas_thread():
            assert threads() == {1}
            with one_blas_thread():
                assert threads() == {1}
            assert threads() == {1}  # the inner exit restored the outer's one thread
        assert threads() == {2}


# ---------------------------------------------------------------- each shortcut is the formula it stands for

def two_stage_formula(matrix: VectorMatrix, query, depth: int):
    """The search as its two stages are written out (``kth_largest``, then every score compared;
    ``numpy.linalg.norm``; every candidate sorted in Python): what ``rank`` returns, bit for bit."""
    ids = matrix.ids
    if not ids:
        return []
    stored = np.asarray([matrix._blocks[n // vector_matrix.BLOCK_ROWS][n % vector_matrix.BLOCK_ROWS]
                         for n in range(len(ids))], dtype=np.float32)

    def normalized(rows):
        rows = np.asarray(rows, dtype=np.float32).astype(np.float64).reshape(len(rows), -1)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms == 0, 1.0, norms)

    unit = normalized(np.asarray(query, dtype=np.float32).reshape(1, -1))[0]
    approximate = (stored @ unit.astype(np.float32)) * matrix._inverse_norms[: len(ids)]
    cut = kth_largest(approximate, min(len(ids), depth + candidate_margin(depth)))
    candidates = np.flatnonzero(approximate >= max(cut, -2.0) - vector_matrix.CANDIDATE_SLACK)
    scores = normalized(stored[candidates]) @ unit
    return rank_order(zip([ids[n] for n in candidates.tolist()], scores.tolist()), SIMILARITY_PRECISION)[:depth]


# float32 values across their range: zeros, subnormals, values whose squares overflow float32
extremes = st.sampled_from([0.0, -0.0, 1e-45, -3e-39, 1e-20, 0.5, -1.0, 3.0, 1e19, -3e38])
rows_of = st.integers(1, 24).flatmap(lambda d: st.lists(st.lists(st.one_of(value, extremes), min_size=d, max_size=d),
                                                         min_size=1, max_size=40))


@settings(max_examples=300, deadline=None)
@given(rows_of)
def test_normalized_rows_and_the_unit_query_are_numpys_norm_to_the_bit(rows):
    matrix = np.asarray(rows, dtype=np.float32).astype(np.float64)
    with np.errstate(all="ignore"):
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        expected = matrix / np.where(norms == 0, 1.0, norms)
        assert np.array_equal(normalized_rows(rows), expected, equal_nan=True)
        assert np.array_equal(unit_vector(rows[0]), expected[0], equal_nan=True)
        assert np.array_equal(unit_vector(np.asarray(rows[0], dtype=np.float32)), expected[0], equal_nan=True)


@settings(max_examples=200, deadline=None)
@given(corpora, st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_rank_is_the_two_stage_formula_to_the_last_bit(corpus, depth, seed):
    """Ties and duplicates (few distinct values), and random rows with many near-ties, each
    score compared as a float: the candidates, the cosine and the order are the formula's."""
    rows, query = corpus
    generator = np.random.default_rng(seed)
    for vectors, q in ((rows, query), (generator.standard_normal((400, 16)).round(1), generator.standard_normal(16))):
        matrix = VectorMatrix()
        matrix.put((f"d{n:03d}", v) for n, v in enumerate(vectors))
        assert matrix.rank(list(q), depth) == two_stage_formula(matrix, q, depth)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_the_rows_near_the_cut_are_those_of_kth_largest_then_a_comparison(data):
    """NaN (a row whose product overflowed), -inf (a row a filter removed), ties at the cut-off,
    and the best rows where the sample does not read."""
    size = data.draw(st.integers(1, 4_000), label="size")
    wanted = data.draw(st.integers(1, min(size, 100)), label="wanted")
    palette = data.draw(st.lists(st.sampled_from([np.nan, -np.inf, -3.0, -1.0, 0.0, 0.2, 0.2001, 0.5, 1.0]),
                                 min_size=1, unique=True), label="palette")
    generator = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    values = generator.choice(np.array(palette, dtype=np.float32), size)
    if data.draw(st.booleans(), label="jitter"):  # distinct scores a slack apart, as a product gives
        values = values + generator.integers(-3, 4, size).astype(np.float32) * np.float32(vector_matrix.CANDIDATE_SLACK)
    if data.draw(st.booleans(), label="best off the sample"):
        ranked = np.sort(values)
        sampled = np.arange(size) % SAMPLE_STRIDE == 0
        values = np.empty_like(ranked)
        values[sampled] = ranked[: sampled.sum()]
        values[~sampled] = ranked[sampled.sum():]
    expected = np.flatnonzero(values >= max(kth_largest(values, wanted), -2.0) - vector_matrix.CANDIDATE_SLACK)
    assert np.array_equal(vector_matrix._near_the_cut(values, wanted), expected)


# scores that round to the same 9 decimals, or just not: offsets of a quarter of the rounding step
near_ties = st.lists(st.one_of(st.sampled_from([0.1234567885, 0.5, -0.25, 1.0]).flatmap(
    lambda base: st.integers(-8, 8).map(lambda k: base + k * 2.5e-10)),
    st.floats(allow_nan=True, allow_infinity=True), st.floats(-1, 1)), min_size=1, max_size=SORT_AT_MOST)


@settings(max_examples=500, deadline=None)
@given(near_ties, st.integers(1, SORT_AT_MOST + 2), st.sampled_from([None, 9, 3]))
def test_the_few_scores_top_ranked_sorts_come_out_as_sorting_all_of_them(scores, depth, precision):
    ids = [f"d{n:03d}" for n in reversed(range(len(scores)))]  # id order is not input order
    expected = rank_order(zip(ids, scores), precision)[:depth]
    got = top_ranked(ids, np.array(scores), depth, precision)
    assert [i for i, _ in got] == [i for i, _ in expected]
    assert np.array_equal([s for _, s in got], [s for _, s in expected], equal_nan=True)
