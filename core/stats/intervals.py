"""Seeded percentile bootstrap intervals: of a mean, of a paired difference, of a failure rate."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from core.constants import (
    BOOTSTRAP_SEED,
    CONFIDENCE,
    DEFAULT_THRESHOLD,
)
from core.stats._validation import _as_1d, _check_confidence, _check_resamples, _same_length
from core.stats.rates import above

_RESAMPLED_VALUES = 2_000_000  # resampled values per vectorized statistic call (16 MB of float64)

_STATISTICS: dict[str, Callable[..., np.ndarray]] = {
    "mean": np.mean,
    "median": np.median,
}


def _percentile_bootstrap(
    data: tuple[np.ndarray, ...],
    statistic: Callable[..., np.ndarray],
    *,
    paired: bool,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> tuple[float, float]:
    from scipy import stats

    # scipy resamples every replicate in one (n_resamples, n) array by default: 3 GB at n = 100k.
    # Batches of _RESAMPLED_VALUES draw the same stream (the same interval, checked) in bounded memory.
    batch = max(1, _RESAMPLED_VALUES // max(1, len(data[0])))
    result = stats.bootstrap(
        data,
        statistic,
        n_resamples=n_resamples,
        batch=batch,
        vectorized=True,
        paired=paired,
        confidence_level=confidence,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    ci = result.confidence_interval
    return float(ci.low), float(ci.high)


def bootstrap_ci(
    values: ArrayLike,
    statistic: str = "mean",
    n_resamples: int | None = None,
    confidence: float = CONFIDENCE,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Seeded percentile-bootstrap confidence interval of a statistic.

    Resamples ``values`` with replacement ``n_resamples`` times
    (``scipy.stats.bootstrap``, ``method="percentile"``) and returns the
    ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the
    resampled statistic. The same seed always gives the same interval.

    Args:
        values: Sample of shape ``(n,)``.
        statistic: ``"mean"`` or ``"median"``.
        n_resamples: Number of bootstrap resamples (>= 1); None for the current
            setting (:func:`core.settings.bootstrap_resamples`).
        confidence: Confidence level in ``(0, 1)``.
        seed: Seed of the numpy random generator.

    Returns:
        ``(low, high)``. For a degenerate sample (``n == 1`` or all values
        equal) every resample has the same statistic, so the interval is
        ``(v, v)``; it is returned directly, without calling scipy.

    Raises:
        ValueError: On empty/NaN/non-1-D values, an unknown statistic, or an
            invalid ``n_resamples`` / ``confidence``.
    """
    arr = _as_1d(values, "values")
    if statistic not in _STATISTICS:
        raise ValueError(f"statistic must be one of {sorted(_STATISTICS)}, got {statistic!r}")
    n_resamples = _check_resamples(n_resamples)
    confidence = _check_confidence(confidence)
    func = _STATISTICS[statistic]
    if np.ptp(arr) == 0:
        # arr[0], not arr.mean(): the mean of three 0.7s is 0.6999999999999998.
        value = float(arr[0])
        return value, value
    return _percentile_bootstrap(
        (arr,),
        func,
        paired=False,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def bootstrap_diff_ci(
    x: ArrayLike,
    y: ArrayLike,
    n_resamples: int | None = None,
    confidence: float = CONFIDENCE,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Percentile-bootstrap CI of ``mean(x) - mean(y)`` for paired samples.

    ``x_i`` and ``y_i`` belong to the same unit (for OOV: the original and
    the replaced cosine of pair ``i``), so pair indices are resampled
    together (``scipy.stats.bootstrap(..., paired=True)``), keeping the
    within-pair correlation that makes the difference precise.

    Args:
        x: First measurement per unit, shape ``(n,)`` (e.g. original cosines).
        y: Second measurement per unit, shape ``(n,)`` (e.g. replaced cosines).
        n_resamples: Number of bootstrap resamples (>= 1); None for the current
            setting (:func:`core.settings.bootstrap_resamples`).
        confidence: Confidence level in ``(0, 1)``.
        seed: Seed of the numpy random generator.

    Returns:
        ``(low, high)``; ``(d, d)`` when every difference ``x_i - y_i`` is the
        same (including ``n == 1``).

    Raises:
        ValueError: On empty/NaN/non-1-D input, unequal lengths, or an
            invalid ``n_resamples`` / ``confidence``.
    """
    x_arr = _as_1d(x, "x")
    y_arr = _as_1d(y, "y")
    _same_length(x_arr, y_arr, "x", "y")
    n_resamples = _check_resamples(n_resamples)
    confidence = _check_confidence(confidence)
    diffs = x_arr - y_arr
    if np.ptp(diffs) == 0:
        value = float(diffs[0])
        return value, value
    return _percentile_bootstrap(
        (x_arr, y_arr),
        _mean_difference,
        paired=True,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )


def failure_rate_ci(
    cosines: ArrayLike,
    threshold: float = DEFAULT_THRESHOLD,
    n_resamples: int | None = None,
    confidence: float = CONFIDENCE,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Percentile-bootstrap CI of :func:`failure_rate`.

    Bootstraps the mean of the indicators ``1[cos_i > threshold]``.

    Args:
        cosines: Cosines, shape ``(n,)``.
        threshold: Retrieval threshold (strict ``>``).
        n_resamples: Number of bootstrap resamples (>= 1); None for the current
            setting (:func:`core.settings.bootstrap_resamples`).
        confidence: Confidence level in ``(0, 1)``.
        seed: Seed of the numpy random generator.

    Returns:
        ``(low, high)`` within ``[0, 1]``. A rate of exactly 0 or 1 gives
        ``(rate, rate)``: no resample can differ, which is a limit of the
        bootstrap on all-or-nothing samples rather than certainty.

    Raises:
        ValueError: On empty/NaN/non-1-D cosines, a non-finite threshold, or
            an invalid ``n_resamples`` / ``confidence``.
    """
    indicators = above(cosines, threshold).astype(float)
    return bootstrap_ci(
        indicators,
        "mean",
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )


def cluster_rate_ci(
    values: ArrayLike,
    clusters: ArrayLike,
    *,
    n_resamples: int | None = None,
    confidence: float = CONFIDENCE,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Percentile bootstrap CI of a rate whose observations come in clusters.

    Whole clusters are resampled (one anchor group contributes several
    variants, which are not independent), and the rate is the resampled
    successes over the resampled observations.

    Args:
        values: 0/1 outcomes, shape ``(n,)``.
        clusters: the cluster label of each outcome, shape ``(n,)``.
        n_resamples: bootstrap resamples; None for the current setting
            (:func:`core.settings.bootstrap_resamples`).
        confidence: confidence level in (0, 1).
        seed: RNG seed; the same seed gives the same interval.

    Returns:
        ``(low, high)``.

    Raises:
        ValueError: unequal lengths, fewer than two clusters, or a bad setting.
    """
    x = _as_1d(values, "values")
    labels = np.asarray(clusters)
    if labels.shape != x.shape:
        raise ValueError(f"clusters must have the shape of values {x.shape}, got {labels.shape}")
    codes = np.unique(labels, return_inverse=True)[1]
    if codes.max(initial=0) < 1:
        raise ValueError("cluster_rate_ci needs at least two clusters")
    successes, sizes = np.bincount(codes, weights=x), np.bincount(codes).astype(float)
    return _percentile_bootstrap(
        (successes, sizes),
        lambda s, n, axis=-1: np.sum(s, axis=axis) / np.sum(n, axis=axis),
        paired=True,
        n_resamples=_check_resamples(n_resamples),
        confidence=_check_confidence(confidence),
        seed=seed,
    )
