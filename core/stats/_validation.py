"""Input checks shared by the public statistics: they raise ``ValueError`` naming the argument."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from core.settings import bootstrap_resamples


def _as_1d(values: ArrayLike, name: str, min_size: int = 1) -> np.ndarray:
    """Return ``values`` as a finite float array of shape ``(n,)``, n >= min_size."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric, got {values!r:.80}") from exc
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.size < min_size:
        if arr.size == 0:
            raise ValueError(f"{name} is empty")
        raise ValueError(f"{name} needs at least {min_size} values, got {arr.size}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def _as_2d(values: ArrayLike, name: str) -> np.ndarray:
    """Return ``values`` as a finite float matrix ``(n, d)``; 1-D becomes ``(1, d)``."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric") from exc
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D (n, d), got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} is empty, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def _as_scalar(value: float, name: str) -> float:
    """Return ``value`` as a finite Python float."""
    try:
        out = float(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a number, got {value!r}") from exc
    if not math.isfinite(out):
        raise ValueError(f"{name} must be finite, got {out}")
    return out


def _same_length(x: np.ndarray, y: np.ndarray, x_name: str, y_name: str) -> None:
    if x.shape != y.shape:
        raise ValueError(f"{x_name} and {y_name} must have the same length, got {x.shape[0]} and {y.shape[0]}")


def _check_confidence(confidence: float) -> float:
    confidence = _as_scalar(confidence, "confidence")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return confidence


def _check_resamples(n_resamples: int | None) -> int:
    """``n_resamples`` checked, or the current setting (:func:`core.settings.bootstrap_resamples`) for None."""
    n_resamples = bootstrap_resamples(n_resamples)
    if isinstance(n_resamples, bool) or int(n_resamples) != n_resamples:
        raise ValueError(f"n_resamples must be an integer, got {n_resamples!r}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    return int(n_resamples)
