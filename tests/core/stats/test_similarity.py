"""The cosine for many blocks of two matrices: rows normalised once, then one product per block."""

from __future__ import annotations

import numpy as np
import pytest

from core.stats.similarity import cos_sim


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
