"""The IVF search: every probed pair exactly once, nothing at or below the threshold, exact when every cell is probed."""

from __future__ import annotations

import numpy as np
import pytest

from core.audit import ivf
from core.audit.neighbours import ClosePairs, close_pairs
from tests.core.audit.vectors_files import clustered

THRESHOLD = 0.75


@pytest.fixture(scope="module")
def vectors() -> np.ndarray:
    return clustered(3_000, dim=32, centres=30)


@pytest.fixture(scope="module")
def exact(vectors) -> ClosePairs:
    return close_pairs(vectors, THRESHOLD, max_pairs=10**7)


def _keys(found: ClosePairs) -> list[tuple[int, int]]:
    return list(zip(found.i.tolist(), found.j.tolist(), strict=True))


def test_probing_every_cell_is_the_exact_search(vectors, exact):
    found, report = ivf.ivf_close_pairs(vectors.copy(), THRESHOLD, cells=12, probe=12, recall_sample=500)
    assert len(exact.i) > 1_000
    assert sorted(_keys(found)) == sorted(_keys(exact))
    mine = dict(zip(_keys(found), found.cosine.tolist(), strict=True))
    assert all(abs(mine[k] - c) < 1e-6 for k, c in zip(_keys(exact), exact.cosine.tolist(), strict=True))
    assert np.all(np.diff(found.cosine) <= 0)  # highest first
    assert report.recall is not None and report.recall.recall == 1.0 and report.recall.exact_pairs > 50
    assert set(report.cpu_seconds) == set(report.seconds) == {"partition", "search", "recall"}


@pytest.mark.parametrize("probe", [1, 3])
def test_each_pair_is_listed_once_above_the_threshold_and_is_an_exact_pair(vectors, exact, probe):
    found, report = ivf.ivf_close_pairs(vectors.copy(), THRESHOLD, cells=30, probe=probe, recall_sample=0)
    keys = _keys(found)
    assert len(keys) == len(set(keys)) and all(i < j for i, j in keys)
    assert set(keys) <= set(_keys(exact))
    assert found.cosine.min() > THRESHOLD
    assert report.recall is None and report.cells == 30 and report.probe == probe
    if probe == 1:  # one cell per row: pairs across cells are lost, which the sampled recall must show
        assert len(keys) < len(exact.i)


def test_sampled_recall_counts_the_missing_pairs(vectors, exact):
    keep = np.arange(exact.i.size) % 4 != 0  # a quarter of the exact pairs dropped
    partial = ClosePairs(exact.i[keep], exact.j[keep], exact.cosine[keep])
    unit = ivf.check_unit(vectors.copy())
    got = ivf.sampled_recall(unit, partial, THRESHOLD, sample=vectors.shape[0])  # every row sampled: every pair checked
    assert got.exact_pairs == exact.i.size
    assert got.recall == pytest.approx(keep.sum() / keep.size)
    assert got.low < got.recall < got.high
    none = ivf.sampled_recall(unit, exact, 0.999999, sample=100)
    assert none.exact_pairs == 0 and np.isnan(none.recall)


def test_cell_pairs_keeps_a_pair_two_cells_see_in_exactly_one():
    # Rows 0 and 1 each probe the other's home: both cells see the pair, only one keeps it.
    a = np.array([[1.0, 0.0]], dtype=np.float32)
    b = np.array([[0.8, 0.6]], dtype=np.float32)
    in_0 = ivf.cell_pairs(a, np.array([0]), np.array([[0, 1]]), b, np.array([1]), np.array([1]), 0.5)
    in_1 = ivf.cell_pairs(b, np.array([1]), np.array([[1, 0]]), a, np.array([0]), np.array([0]), 0.5)
    assert in_0.cosine.size + in_1.cosine.size == 1
    # When row 1 does not probe row 0's home, only cell 1 sees the pair, and keeps it.
    alone = ivf.cell_pairs(b, np.array([1]), np.array([[1, 2]]), a, np.array([0]), np.array([0]), 0.5)
    assert alone.cosine.tolist() == pytest.approx([0.8])


def test_check_unit_refuses_a_row_without_direction_and_normalises_in_place():
    rows = np.array([[3.0, 4.0], [0.0, 0.0]], dtype=np.float32)
    with pytest.raises(ValueError, match="row 1 is zero or not finite"):
        ivf.check_unit(rows)
    good = np.array([[3.0, 4.0], [1.0, 0.0]], dtype=np.float32)
    assert ivf.check_unit(good) is good and good[0].tolist() == pytest.approx([0.6, 0.8])
    with pytest.raises(ValueError, match="n >= 2"):
        ivf.check_unit(np.ones((1, 3), dtype=np.float32))


@pytest.mark.parametrize(("cells", "probe"), [(0, 1), (5_000, 1), (10, 0), (10, 11)])
def test_bad_cells_or_probe_are_refused(vectors, cells, probe):
    with pytest.raises(ValueError, match="cells|probe"):
        ivf.ivf_close_pairs(vectors.copy(), THRESHOLD, cells=cells, probe=probe, recall_sample=0)


def test_progress_reports_the_time_left(vectors):
    said: list[tuple[float, str]] = []
    ivf.ivf_close_pairs(vectors.copy(), THRESHOLD, cells=10, probe=2, recall_sample=0, progress=lambda f, m: said.append((f, m)))
    fractions = [f for f, _ in said]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert any("left" in m for _, m in said)


def test_the_cells_as_the_audits_strategy_find_the_exact_pairs_and_say_so(vectors, exact):
    """IvfSearch plugs into the audit as any NeighbourSearch: the same pairs, its recall with a Clopper-Pearson interval."""
    from core.audit.run import default_search

    assert isinstance(default_search(200_000), ivf.IvfSearch) and not isinstance(default_search(100), ivf.IvfSearch)
    seen: list[tuple[int, int]] = []
    found, report = ivf.IvfSearch(probe=64, sample=len(vectors)).close_pairs(
        vectors.copy(), THRESHOLD, max_pairs=10**7, progress=lambda d, n: seen.append((d, n))
    )
    assert sorted(_keys(found)) == sorted(_keys(exact)) and np.allclose(np.sort(found.cosine), np.sort(exact.cosine), atol=1e-6)
    assert report.recall == 1.0 and report.sample == 0 and report.exact_pairs_in_sample == len(_keys(exact))
    assert "Clopper-Pearson interval" in report.sentence() and seen and seen[-1][1] == len(vectors)
