"""core.stats.intervals.cluster_rate_ci: a rate's bootstrap interval that resamples whole clusters."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from core.stats.intervals import cluster_rate_ci


def test_singleton_clusters_match_scipys_bootstrap_of_the_mean():
    values = np.array([1, 0, 1, 1, 0, 1, 1, 0, 1, 1], dtype=float)
    low, high = cluster_rate_ci(values, np.arange(values.size), n_resamples=2000, seed=3)
    ref = sps.bootstrap(
        (values, np.ones_like(values)),
        lambda s, n, axis=-1: s.sum(axis=axis) / n.sum(axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=2000,
        confidence_level=0.95,
        method="percentile",
        rng=np.random.default_rng(3),
    )
    assert (low, high) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high))
    assert low <= values.mean() <= high


def test_clusters_are_resampled_whole():
    # Two clusters: one all wins (3 rows), one all losses (1 row).  Any resample
    # is made of whole clusters, so the rate is 0, 3/4, or 1: never 1/4 or 1/2.
    values = np.array([1, 1, 1, 0], dtype=float)
    low, high = cluster_rate_ci(values, ["a", "a", "a", "b"], n_resamples=500, seed=0)
    assert low in (0.0, 0.75, 1.0) and high in (0.0, 0.75, 1.0)


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="shape"):
        cluster_rate_ci([1.0, 0.0], ["a"])
    with pytest.raises(ValueError, match="two clusters"):
        cluster_rate_ci([1.0, 0.0], ["a", "a"])
