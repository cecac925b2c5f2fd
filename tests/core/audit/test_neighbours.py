"""Blocked exact neighbours equal the whole matrix computed at once by numpy."""

from __future__ import annotations

import numpy as np
import pytest

from core.audit.neighbours import TooManyPairs, block_rows, close_pairs, tile_side, top_k


def _brute(vectors: np.ndarray, threshold: float) -> set[tuple[int, int]]:
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    sims = unit @ unit.T
    i, j = np.nonzero(np.triu(sims > threshold, k=1))
    return set(zip(i.tolist(), j.tolist(), strict=True))


@pytest.mark.parametrize("max_cells", [10, 97, 1_000_000])
def test_blocked_pairs_equal_numpy(max_cells):
    rng = np.random.default_rng(0)
    base = rng.normal(size=(40, 8))
    # Near copies make close pairs; the rest are random and mostly far apart.
    vectors = np.vstack([base, base[:15] + 0.05 * rng.normal(size=(15, 8))])
    found = close_pairs(vectors, 0.6, max_cells=max_cells)
    assert set(zip(found.i.tolist(), found.j.tolist(), strict=True)) == _brute(vectors, 0.6)
    assert len(found.i) >= 15
    assert np.all(found.i < found.j)
    assert np.all(np.diff(found.cosine) <= 0), "highest cosine first"
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    np.testing.assert_allclose(found.cosine, np.sum(unit[found.i] * unit[found.j], axis=1), atol=1e-12)


@pytest.mark.parametrize(("threshold", "max_cells"), [(0.6, 97), (0.6, 1_000_000), (-0.5, 200)])
def test_bounded_search_equals_numpy(threshold, max_cells):
    """The two-step search (a bound from 3 main directions of 16, then exact cosines) misses nothing and adds nothing.

    At -0.5 most pairs pass the bound, so tiles fall back to the whole product: that path is checked too.
    """
    rng = np.random.default_rng(3)
    base = rng.normal(size=(60, 16)).astype(np.float32)
    vectors = np.vstack([base, base[:20] + np.float32(0.1) * rng.normal(size=(20, 16)).astype(np.float32)])
    found = close_pairs(vectors, threshold, max_cells=max_cells, keep_dims=3)
    whole = close_pairs(vectors, threshold, max_cells=max_cells, keep_dims=0)
    pairs = set(zip(found.i.tolist(), found.j.tolist(), strict=True))
    assert pairs == set(zip(whole.i.tolist(), whole.j.tolist(), strict=True)) == _brute(vectors.astype(np.float64), threshold)
    assert len(pairs) >= 20
    np.testing.assert_allclose(np.sort(found.cosine), np.sort(whole.cosine), atol=1e-6)


def test_bound_is_an_upper_bound_of_every_cosine():
    from core.audit.neighbours import bound_rows, unit_float_rows

    rng = np.random.default_rng(4)
    unit = unit_float_rows(rng.normal(size=(50, 12)), side=7)
    np.testing.assert_allclose(np.linalg.norm(unit, axis=1), 1.0, atol=1e-12)
    bound = bound_rows(unit, 2, side=7)
    assert bound.shape == (50, 3)
    assert np.all(bound @ bound.T >= unit @ unit.T - 1e-12)


def test_tiles_and_blocks_bound_memory():
    assert tile_side(100_000, 16_000_000) == 4_000
    assert tile_side(3, 1) == 1
    assert tile_side(10, 10_000) == 10
    assert block_rows(100_000, 16_000_000) == 160


def test_threshold_is_strict_and_checked():
    vectors = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    assert close_pairs(vectors, 0.999).i.tolist() == [0]
    assert close_pairs(vectors, 1.0).i.size == 0  # identical vectors score 1.0, not above it
    with pytest.raises(ValueError, match="between -1 and 1"):
        close_pairs(vectors, 1.5)
    with pytest.raises(ValueError, match="n >= 2"):
        close_pairs(vectors[:1], 0.5)


def test_too_many_pairs_is_one_line():
    with pytest.raises(TooManyPairs, match="raise the threshold"):
        close_pairs(np.ones((5, 3)), 0.5, max_pairs=3)


def test_top_k_equals_argsort():
    rng = np.random.default_rng(1)
    queries, passages = rng.normal(size=(7, 5)), rng.normal(size=(30, 5))
    idx, cos = top_k(queries, passages, 5, max_cells=40)
    unit_q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    unit_p = passages / np.linalg.norm(passages, axis=1, keepdims=True)
    sims = unit_q @ unit_p.T
    np.testing.assert_array_equal(idx, np.argsort(-sims, axis=1)[:, :5])
    np.testing.assert_allclose(cos, np.take_along_axis(sims, idx, axis=1), atol=1e-12)


def test_float32_vectors_equal_numpy_in_float32():
    rng = np.random.default_rng(2)
    base = rng.normal(size=(30, 16)).astype(np.float32)
    vectors = np.vstack([base, base[:10] + np.float32(0.05) * rng.normal(size=(10, 16)).astype(np.float32)])
    found = close_pairs(vectors, 0.7, max_cells=64)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    sims = unit @ unit.T
    assert sims.dtype == np.float32
    i, j = np.nonzero(np.triu(sims > 0.7, k=1))
    assert set(zip(found.i.tolist(), found.j.tolist(), strict=True)) == set(zip(i.tolist(), j.tolist(), strict=True))
    np.testing.assert_allclose(found.cosine, sims[found.i, found.j], atol=1e-6)


def test_approximate_pairs_and_their_measured_recall():
    from core.audit.approximate import approximate_pairs, sample_against_exact
    from core.audit.search import SearchReport

    rng = np.random.default_rng(4)
    base = rng.normal(size=(200, 16)).astype(np.float32)
    vectors = np.vstack([base, base + np.float32(0.05) * rng.normal(size=(200, 16)).astype(np.float32)])
    exact = close_pairs(vectors, 0.8)
    wide = approximate_pairs(vectors, 0.8, k=64)
    # Each passage has one near copy: with 64 neighbours asked, HNSW finds every exact pair, with the exact cosines.
    assert set(zip(wide.i.tolist(), wide.j.tolist(), strict=True)) == set(zip(exact.i.tolist(), exact.j.tolist(), strict=True))
    np.testing.assert_allclose(wide.cosine, exact.cosine, atol=1e-6)
    report = sample_against_exact(vectors, wide, 0.8, SearchReport("hnsw", 64), sample=100)
    assert (report.recall, report.sample) == (1.0, 100) and report.exact_pairs_in_sample >= 50
    assert report.within_cap == report.exact_pairs_in_sample and report.crowded == 0 and report.index_recall == 1.0
    # k = 1 with clusters of three: each passage keeps one neighbour, so some exact pairs are lost, and the recall says how many.
    triples = np.vstack([base[:50], base[:50] + np.float32(0.02), base[:50] - np.float32(0.02)])
    narrow = approximate_pairs(triples, 0.8, k=1)
    all_exact = close_pairs(triples, 0.8)
    report = sample_against_exact(triples, narrow, 0.8, SearchReport("hnsw", 1), sample=150)
    got = set(zip(narrow.i.tolist(), narrow.j.tolist(), strict=True))
    truth = set(zip(all_exact.i.tolist(), all_exact.j.tolist(), strict=True))
    assert got < truth and report.sample == 150 and report.exact_pairs_in_sample == len(truth)
    assert report.recall == pytest.approx(len(got) / len(truth))
    assert report.recall_low < report.recall < report.recall_high  # a sampled recall comes with its Wilson interval
    assert report.crowded == 150  # every passage has two neighbours above 0.8: one nearest each is the cap's loss, not the index's


def test_the_neighbour_cap_counts_its_crowded_passages_in_words():
    from core.audit.search import SearchReport

    one = SearchReport("faiss HNSW", k=32, exact_pairs_in_sample=5, within_cap=4, crowded=1, index_recall=1.0).cap_words()
    assert "(1 passage with more than 32 neighbours above the threshold)" in one and "(s)" not in one
    none = SearchReport("faiss HNSW", k=32, sample=6, exact_pairs_in_sample=2, within_cap=2, crowded=0, index_recall=1.0)
    assert "(0 sampled passages with more than 32" in none.cap_words()
