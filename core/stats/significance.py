"""Tests across groups and correlations: Kruskal-Wallis, Pearson and Spearman."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from core.stats._validation import _as_1d, _same_length


class KruskalResult(NamedTuple):
    """Kruskal-Wallis H-test across groups.

    Attributes:
        h: H statistic (tie-corrected, as scipy computes it).
        p: p-value from the chi-squared approximation with ``n_groups - 1``
            degrees of freedom.
        n_groups: Number of groups compared.
    """

    h: float
    p: float
    n_groups: int


class CorrelationResult(NamedTuple):
    """Pearson and Spearman correlation of two aligned samples.

    Attributes:
        pearson_r: Pearson product-moment correlation coefficient.
        pearson_p: Two-sided p-value of ``pearson_r``.
        spearman_rho: Spearman rank correlation coefficient.
        spearman_p: Two-sided p-value of ``spearman_rho``.
        n: Number of pairs.
    """

    pearson_r: float
    pearson_p: float
    spearman_rho: float
    spearman_p: float
    n: int


def kruskal_wallis(groups: Mapping[str, ArrayLike]) -> KruskalResult:
    """Kruskal-Wallis H-test: do the groups come from the same distribution?

    Wraps ``scipy.stats.kruskal`` (H with tie correction, chi-squared p-value
    on ``k - 1`` degrees of freedom). The failure paper uses it across models
    for each failure mode (Appendix A), with one group per model.

    Args:
        groups: Mapping of group name to a sample of shape ``(n_g,)``; at
            least two groups, each non-empty.

    Returns:
        ``KruskalResult(h, p, n_groups)``. When every value in every group is
        identical the test is undefined (H is 0/0) and ``h`` and ``p`` are
        ``nan``, returned without a warning.

    Raises:
        TypeError: If ``groups`` is not a mapping.
        ValueError: With fewer than two groups, or an empty, NaN or non-1-D
            group.
    """
    if not isinstance(groups, Mapping):
        raise TypeError("groups must be a mapping of group name to values")
    if len(groups) < 2:
        raise ValueError(f"kruskal_wallis needs at least 2 groups, got {len(groups)}")
    samples = [_as_1d(values, f"group {name!r}") for name, values in groups.items()]
    pooled = np.concatenate(samples)
    if np.ptp(pooled) == 0:
        return KruskalResult(math.nan, math.nan, len(samples))
    from scipy import stats  # imported here: scipy.stats costs ~0.6 s, and pages import this module at start

    result = stats.kruskal(*samples)
    return KruskalResult(float(result.statistic), float(result.pvalue), len(samples))


def correlation(x: ArrayLike, y: ArrayLike) -> CorrelationResult:
    """Pearson and Spearman correlation of two aligned samples.

    Wraps ``scipy.stats.pearsonr`` and ``scipy.stats.spearmanr`` (two-sided
    p-values). The OOV paper correlates token Jaccard with cosine this way.

    Args:
        x: First sample, shape ``(n,)``, ``n >= 3``.
        y: Second sample, shape ``(n,)``.

    Returns:
        ``CorrelationResult(pearson_r, pearson_p, spearman_rho, spearman_p,
        n)``. If either sample is constant the correlations are undefined and
        all four values are ``nan`` (scipy's ``ConstantInputWarning`` is not
        emitted).

    Raises:
        ValueError: On fewer than 3 pairs, unequal lengths, NaN/inf or
            non-1-D input.
    """
    x_arr = _as_1d(x, "x", min_size=3)
    y_arr = _as_1d(y, "y", min_size=3)
    _same_length(x_arr, y_arr, "x", "y")
    n = int(x_arr.size)
    if np.ptp(x_arr) == 0 or np.ptp(y_arr) == 0:
        return CorrelationResult(math.nan, math.nan, math.nan, math.nan, n)
    with warnings.catch_warnings():
        from scipy import stats

        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        pearson = stats.pearsonr(x_arr, y_arr)
        spearman = stats.spearmanr(x_arr, y_arr)
    return CorrelationResult(
        float(pearson.statistic),
        float(pearson.pvalue),
        float(spearman.statistic),
        float(spearman.pvalue),
        n,
    )
