"""Retrieval failure rates (failure paper): the share of pairs strictly above a threshold, and its curve.

The one place a share of cosines above a threshold is computed: the failure
rate of a category, a calibration's true- and false-positive rates, a label's
share above, a report's share per model all call :func:`failure_rate` (its
interval is :func:`core.stats.intervals.failure_rate_ci`, over the same
:func:`above` indicators), so "above" is strictly greater everywhere.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
from numpy.typing import ArrayLike

from core.constants import (
    DEFAULT_THRESHOLD,
    THRESHOLD_GRID_STEP,
)
from core.stats._validation import _as_1d, _as_scalar


def above(cosines: ArrayLike, threshold: float) -> np.ndarray:
    """Which cosines count as matches at ``threshold``: strictly greater (a cosine exactly at it does not).

    Args:
        cosines: Cosines, shape ``(n,)``.
        threshold: Retrieval threshold.

    Returns:
        Boolean array of shape ``(n,)``.

    Raises:
        ValueError: On empty/NaN/non-1-D cosines or a non-finite threshold.
    """
    return _as_1d(cosines, "cosines") > _as_scalar(threshold, "threshold")


def failure_rate(cosines: ArrayLike, threshold: float = DEFAULT_THRESHOLD) -> float:
    """Fraction of pairs that would be retrieved as matches at ``threshold``.

    ``rate = #{i : cos_i > threshold} / n``: strictly greater, as in the
    failure paper ("% of pairs with similarity > 0.7"); a cosine exactly at
    the threshold is not a failure.

    Args:
        cosines: Cosines of pairs that *should not* match, shape ``(n,)``.
        threshold: Retrieval threshold.

    Returns:
        Rate in ``[0, 1]``.

    Raises:
        ValueError: On empty/NaN/non-1-D cosines or a non-finite threshold.
    """
    return float(np.mean(above(cosines, threshold)))


def threshold_grid(step: float = THRESHOLD_GRID_STEP, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    """Evenly spaced thresholds from ``low`` to ``high`` inclusive.

    ``t_k = low + k * step`` for ``k = 0 .. floor((high - low) / step)``,
    computed in decimal arithmetic so every value is the float nearest to its
    decimal spelling (``t[70] == 0.7`` exactly, not ``0.7000000000000001``);
    otherwise the strict ``>`` of :func:`failure_rate` would disagree between
    the grid and a typed-in threshold. ``high`` is included when
    ``high - low`` is a multiple of ``step``; otherwise the grid stops at the
    last point below ``high``.

    Args:
        step: Spacing, > 0.
        low: First threshold.
        high: Upper bound, >= ``low``.

    Returns:
        Array of shape ``(k,)``, ascending.

    Raises:
        ValueError: If a bound is not finite, ``step <= 0`` or ``high < low``.
    """
    step_f = _as_scalar(step, "step")
    low_f = _as_scalar(low, "low")
    high_f = _as_scalar(high, "high")
    if step_f <= 0.0:
        raise ValueError(f"step must be > 0, got {step_f}")
    if high_f < low_f:
        raise ValueError(f"high must be >= low, got low={low_f}, high={high_f}")
    # repr() gives the shortest decimal that round-trips, i.e. what was typed.
    d_step, d_low, d_high = (Decimal(repr(v)) for v in (step_f, low_f, high_f))
    n_steps = int((d_high - d_low) // d_step)
    return np.array([float(d_low + k * d_step) for k in range(n_steps + 1)])


def failure_rate_curve(cosines: ArrayLike, thresholds: ArrayLike) -> np.ndarray:
    """Failure rate at each of several thresholds.

    ``rate_k = #{i : cos_i > t_k} / n`` for every threshold ``t_k``, the same
    strict comparison as :func:`failure_rate`, computed for all thresholds at
    once with a sort and a binary search.

    Args:
        cosines: Cosines, shape ``(n,)``.
        thresholds: Thresholds, shape ``(k,)``, any order.

    Returns:
        Rates of shape ``(k,)`` in ``[0, 1]``, aligned with ``thresholds``.

    Raises:
        ValueError: On empty, NaN/inf or non-1-D input.
    """
    arr = np.sort(_as_1d(cosines, "cosines"))
    thr = _as_1d(thresholds, "thresholds")
    # side="right" puts values equal to t_k below the cut, giving strict ">".
    n_above = arr.size - np.searchsorted(arr, thr, side="right")
    return n_above / arr.size
