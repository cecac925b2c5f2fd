"""The one safe normalisation of fresh vectors (``normalize_rows``) and the cosines built on it, against hand computation."""

from __future__ import annotations

import numpy as np
import pytest

from core.stats.similarity import UnnormalizableRows, cos_sim, normalize_rows, pairwise_cos_sim, unit_checked


def test_rows_whose_squares_overflow_or_underflow_float32_keep_their_direction():
    # By hand: (3, 4) / 5 whatever the scale; float32 squares of 3e19 overflow to inf and of 1e-40 underflow to 0.
    rows = np.array([[3e19, 4e19], [3e-40, 4e-40], [3.0, 4.0], [-6e30, 8e30]], dtype=np.float64)
    np.testing.assert_allclose(normalize_rows(rows), [[0.6, 0.8], [0.6, 0.8], [0.6, 0.8], [-0.6, 0.8]], rtol=1e-12)
    as_float32 = np.array([[3e19, 4e19]], dtype=np.float32)
    with np.errstate(over="ignore"):
        assert not np.isfinite(np.linalg.norm(as_float32))  # what the old normalisation divided by
    np.testing.assert_allclose(normalize_rows(as_float32), [[0.6, 0.8]], rtol=1e-6)


def test_values_past_float64_squares_still_normalise():
    rows = np.array([[1e200, 1e200, 0.0]])
    np.testing.assert_allclose(normalize_rows(rows), [[2**-0.5, 2**-0.5, 0.0]], rtol=1e-12)


@pytest.mark.parametrize(
    ("row", "kind"), [([0.0, 0.0], "all zeros"), ([-0.0, 0.0], "all zeros"), ([np.nan, 1.0], "not finite"), ([np.inf, 1.0], "not finite")]
)
def test_a_row_with_no_direction_is_refused_and_named(row, kind):
    with pytest.raises(UnnormalizableRows, match=kind) as info:
        normalize_rows(np.array([[1.0, 2.0], row, [2.0, 1.0]]))
    assert info.value.rows == (1,)


def test_the_cosines_agree_with_hand_computation_at_extreme_scales():
    a, b = np.array([[3e19, 4e19, 0.0]]), np.array([[4e19, 3e19, 1e19]])
    expected = 24 / (5 * np.sqrt(26))  # (12 + 12 + 0) / (5 * sqrt(16 + 9 + 1))
    assert cos_sim(a, b)[0, 0] == pytest.approx(expected, abs=1e-12)
    assert pairwise_cos_sim(a * 1e-59, b * 1e-59)[0] == pytest.approx(expected, abs=1e-12)
    assert cos_sim([0.0, 0.0, 0.0], [1.0, 0.0, 0.0])[0, 0] == 0.0  # cos_sim keeps its rule: a zero row scores 0 with anything


def test_unit_rows_and_cos_sim_units_equal_cos_sim():
    from core.stats.similarity import cos_sim_units, unit_rows

    rng = np.random.default_rng(7)
    a, b = rng.normal(size=(6, 5)), rng.normal(size=(4, 5))
    a[0] = 0.0  # a zero row stays zero: cosine 0 with everything
    np.testing.assert_allclose(cos_sim_units(unit_rows(a), unit_rows(b)), cos_sim(a, b), atol=1e-12)
    single = unit_rows(a.astype(np.float32))
    assert single.dtype == np.float32
    np.testing.assert_allclose(cos_sim_units(single, single), cos_sim(a, a), atol=1e-6)
    with pytest.raises(ValueError, match="NaN or infinite"):
        unit_rows(np.array([[np.nan, 1.0]]))


def test_unit_checked_keeps_unit_rows_and_normalises_the_others_naming_their_norms():

    rows = np.array([[0.6, 0.8], [3.0, 4.0], [0.0, 0.5]], dtype=np.float32)
    out, norms = unit_checked(rows)
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.6, 0.8], [0.0, 1.0]], atol=1e-7)
    np.testing.assert_allclose(norms, [5.0, 0.5])
    assert out.dtype == np.float32
    same, none = unit_checked(rows[:1])
    assert none.size == 0 and same[0].tolist() == rows[0].tolist()


def test_unit_checked_refuses_a_row_with_no_direction_by_its_place():

    with pytest.raises(UnnormalizableRows) as caught:
        unit_checked(np.array([[0.6, 0.8], [2.0, 0.0], [0.0, 0.0]]))
    assert caught.value.rows == (2,)
