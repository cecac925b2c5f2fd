"""The corpus map: PCA coordinates, deterministic, equal to numpy's SVD up to the fixed signs."""

from __future__ import annotations

import numpy as np
import pytest

from core.audit.projection import project_2d


def test_pca_equals_svd_and_is_repeatable():
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(50, 12)) * np.linspace(3, 0.1, 12)
    coords = project_2d(vectors)
    assert coords.shape == (50, 2)
    centred = vectors - vectors.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    expected = centred @ vt[:2].T
    np.testing.assert_allclose(np.abs(coords), np.abs(expected), atol=1e-8)
    np.testing.assert_array_equal(coords, project_2d(vectors))
    # The sign rule: each axis's largest coordinate is positive.
    assert all(coords[np.argmax(np.abs(coords[:, k])), k] > 0 for k in range(2))


def test_one_dimension_and_bad_input():
    assert project_2d(np.array([[1.0], [2.0], [4.0]])).shape == (3, 2)
    with pytest.raises(ValueError, match="n >= 2"):
        project_2d(np.ones((1, 4)))
    with pytest.raises(ValueError, match="finite"):
        project_2d(np.array([[1.0, np.nan], [0.0, 1.0]]))
