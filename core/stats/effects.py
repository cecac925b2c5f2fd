"""Effect sizes and summary statistics: Cohen's d, severity ratio, mean ± SD."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from core.stats._validation import _as_1d, _as_scalar


def _cohens_d(mean_x: float, var_x: float, n_x: int, mean_y: float, var_y: float, n_y: int) -> float:
    diff = mean_x - mean_y
    pooled_var = ((n_x - 1) * var_x + (n_y - 1) * var_y) / (n_x + n_y - 2)
    if pooled_var == 0.0:
        # Both groups are constant: any difference is a perfect separation
        # (+/-inf keeps its direction); identical constants are no effect.
        return 0.0 if diff == 0.0 else math.copysign(math.inf, diff)
    return float(diff / math.sqrt(pooled_var))


def cohens_d(x: ArrayLike, y: ArrayLike) -> float:
    """Cohen's d of two independent samples with pooled standard deviation.

    ``d = (mean(x) - mean(y)) / s_p`` with
    ``s_p = sqrt(((n_x - 1) s_x^2 + (n_y - 1) s_y^2) / (n_x + n_y - 2))`` and
    sample SDs ``s`` (``ddof=1``). No small-sample (Hedges) correction.

    The sign follows the argument order; the project uses two conventions:

    * Failure paper, Table 5: ``cohens_d(positive, failure)``. Negative d
      means failure pairs score *higher* than true paraphrases.
    * OOV paper, Table 7: ``cohens_d(deltas_model1, deltas_model2)``.
      Positive d means model 1 loses more similarity to OOV words. This
      (unpaired, pooled ``ddof=1``) variant reproduces the published Table 7
      from the Appendix A1 deltas within 0.01, so it is the one used there,
      although the deltas of two models on the same pairs are paired data.

    Args:
        x: First sample, shape ``(n_x,)``, ``n_x >= 2``.
        y: Second sample, shape ``(n_y,)``, ``n_y >= 2``.

    Returns:
        The effect size. If both samples are constant the pooled SD is 0 and
        the result is ``+inf``/``-inf`` when the means differ, 0.0 when they
        are equal (no warning either way).

    Raises:
        ValueError: If a sample has fewer than 2 values, NaN/inf, or is not
            1-D.
    """
    x_arr = _as_1d(x, "x", min_size=2)
    y_arr = _as_1d(y, "y", min_size=2)
    # Test constancy exactly: var() of a constant float array can be 1e-33
    # instead of 0, which would turn "no spread" into an absurd finite d.
    var_x = 0.0 if np.ptp(x_arr) == 0 else float(x_arr.var(ddof=1))
    var_y = 0.0 if np.ptp(y_arr) == 0 else float(y_arr.var(ddof=1))
    return _cohens_d(float(x_arr.mean()), var_x, x_arr.size, float(y_arr.mean()), var_y, y_arr.size)


def cohens_d_from_summary(
    mean_x: float,
    sd_x: float,
    n_x: int,
    mean_y: float,
    sd_y: float,
    n_y: int,
) -> float:
    """Cohen's d from published summary statistics (same formula as :func:`cohens_d`).

    ``d = (mean_x - mean_y) / sqrt(((n_x - 1) sd_x^2 + (n_y - 1) sd_y^2)
    / (n_x + n_y - 2))``. Used to check published tables against their own
    means and SDs; ``sd`` must be the sample SD (``ddof=1``) for the result to
    equal :func:`cohens_d` on the raw data.

    Args:
        mean_x: Mean of the first group.
        sd_x: Sample SD of the first group (>= 0).
        n_x: Size of the first group (>= 2).
        mean_y: Mean of the second group.
        sd_y: Sample SD of the second group (>= 0).
        n_y: Size of the second group (>= 2).

    Returns:
        The effect size; ``+/-inf`` or 0.0 when both SDs are 0 (see
        :func:`cohens_d`).

    Raises:
        ValueError: On non-finite values, negative SDs, or group sizes that
            are not integers >= 2.
    """
    values = {
        "mean_x": _as_scalar(mean_x, "mean_x"),
        "sd_x": _as_scalar(sd_x, "sd_x"),
        "mean_y": _as_scalar(mean_y, "mean_y"),
        "sd_y": _as_scalar(sd_y, "sd_y"),
    }
    for name in ("sd_x", "sd_y"):
        if values[name] < 0.0:
            raise ValueError(f"{name} must be >= 0, got {values[name]}")
    for name, n in (("n_x", n_x), ("n_y", n_y)):
        if isinstance(n, bool) or int(n) != n or n < 2:
            raise ValueError(f"{name} must be an integer >= 2, got {n!r}")
    return _cohens_d(
        values["mean_x"],
        values["sd_x"] ** 2,
        int(n_x),
        values["mean_y"],
        values["sd_y"] ** 2,
        int(n_y),
    )


def severity_ratio(failure: ArrayLike, positive: ArrayLike) -> float:
    """Severity ratio of a failure mode (failure paper, Section 3.4 / Table 3).

    ``ratio = mean(failure) / mean(positive)``. A ratio >= 1 means the model
    scores the failure pairs at least as similar as true paraphrases.

    Args:
        failure: Cosines of one failure mode's pairs, shape ``(n_f,)``.
        positive: Cosines of positive-control pairs, shape ``(n_p,)``.

    Returns:
        The ratio of means.

    Raises:
        ValueError: On empty/NaN/non-1-D input, or if ``mean(positive) <= 0``
            (a ratio to a non-positive baseline has no "more similar than
            paraphrases" reading).
    """
    fail = _as_1d(failure, "failure")
    pos = _as_1d(positive, "positive")
    pos_mean = float(pos.mean())
    if pos_mean <= 0.0:
        raise ValueError(f"mean(positive) must be > 0, got {pos_mean}")
    return float(fail.mean()) / pos_mean


def mean_sd(values: ArrayLike) -> tuple[float, float]:
    """Mean and sample standard deviation.

    ``mean = sum(v) / n``; ``sd = sqrt(sum((v - mean)^2) / (n - 1))``
    (``ddof=1``).

    Args:
        values: Sample of shape ``(n,)``, ``n >= 1``.

    Returns:
        ``(mean, sd)``; ``sd`` is ``nan`` when ``n == 1`` (no warning).

    Raises:
        ValueError: On empty, NaN/inf or non-1-D input.
    """
    arr = _as_1d(values, "values")
    mean = float(arr.mean())
    sd = float(arr.std(ddof=1)) if arr.size > 1 else math.nan
    return mean, sd
