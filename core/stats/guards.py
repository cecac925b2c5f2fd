"""A statistic, or NaN where its inputs are too few.

Summary tables compute one statistic per model and category; a category with
one pair has no SD and no interval.  The table shows "n/a" for such a cell
rather than stopping, so every table builder calls these two wrappers instead
of catching ``ValueError`` itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any


def stat_or_nan(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> float:
    """``float(fn(*args, **kwargs))``, or NaN where ``fn`` rejects its inputs as too few."""
    try:
        return float(fn(*args, **kwargs))
    except (ValueError, ZeroDivisionError):
        return math.nan


def interval_or_nan(fn: Callable[..., tuple[float, float]], *args: Any, **kwargs: Any) -> tuple[float, float]:
    """``fn(*args, **kwargs)`` (a ``(low, high)`` interval), or ``(nan, nan)`` where ``fn`` rejects its inputs."""
    try:
        low, high = fn(*args, **kwargs)
        return (float(low), float(high))
    except ValueError:
        return (math.nan, math.nan)
