"""Tuning knobs read when a function runs, not when a module is imported.

``core/constants.py`` holds names (columns, suites, categories) that never
change within a process.  A knob that sets how much work a computation does
lives here instead, and a function takes ``None`` for it and resolves the
value at call time: ``n_resamples: int | None = None`` means "the current
setting".  A default bound in a signature (``n_resamples=2000``) is fixed when
the module is imported, so neither a user nor a test could lower it for a
whole run without passing it through every caller.

Each knob has a default and an environment variable that overrides it for a
process and its subprocesses (the test suite lowers the bootstrap this way,
``tests/conftest.py``).
"""

from __future__ import annotations

import os

from core import constants

# Percentile-bootstrap resamples per interval (core.stats.intervals, core.stats.ranking and everything
# built on them); COSINE_PROBE_BOOTSTRAP_RESAMPLES sets another number for a process.
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_RESAMPLES_ENV_VAR = constants.ENV_BOOTSTRAP_RESAMPLES.name


def _env_int(name: str, default: int, minimum: int = 1) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a whole number, got {raw!r}") from None
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def bootstrap_resamples(n_resamples: int | None = None) -> int:
    """The bootstrap resamples to draw: ``n_resamples`` when given, else the current setting.

    Args:
        n_resamples: an explicit count (returned as is, checked by the caller),
            or None for ``$COSINE_PROBE_BOOTSTRAP_RESAMPLES``, else
            :data:`BOOTSTRAP_RESAMPLES`.

    Returns:
        The count.

    Raises:
        ValueError: the environment variable is set to something other than a
            whole number >= 1 (the message names the variable).
    """
    if n_resamples is not None:
        return n_resamples
    return _env_int(BOOTSTRAP_RESAMPLES_ENV_VAR, BOOTSTRAP_RESAMPLES)


# Seconds an endpoint (core.models.endpoint) may take to answer one embeddings request before it is
# given up on; the client tries at most MAX_RETRIES (core.models.endpoint) more times, so a server that accepts and
# never answers costs (retries + 1) x this. COSINE_PROBE_ENDPOINT_TIMEOUT sets another number of seconds.
ENDPOINT_TIMEOUT_SECONDS = 15.0
ENDPOINT_TIMEOUT_ENV_VAR = constants.ENV_ENDPOINT_TIMEOUT.name


def endpoint_timeout(seconds: float | None = None) -> float:
    """Seconds per endpoint request: ``seconds`` when given, else ``$COSINE_PROBE_ENDPOINT_TIMEOUT``, else :data:`ENDPOINT_TIMEOUT_SECONDS`.

    Raises:
        ValueError: the environment variable is not a positive finite number of seconds (the message names it).
    """
    if seconds is not None:
        return seconds
    raw = os.environ.get(ENDPOINT_TIMEOUT_ENV_VAR, "").strip()
    if not raw:
        return ENDPOINT_TIMEOUT_SECONDS
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{ENDPOINT_TIMEOUT_ENV_VAR} must be a number of seconds, got {raw!r}") from None
    if not (value > 0 and value < float("inf")):
        raise ValueError(f"{ENDPOINT_TIMEOUT_ENV_VAR} must be a positive number of seconds, got {raw!r}")
    return value
