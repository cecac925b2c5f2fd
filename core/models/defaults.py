"""The models scored when none is named: one rule for every CLI command and the app's sidebar."""

from __future__ import annotations

import os

from core import constants
from core.models import registry

DEFAULT_MODELS_ENV = constants.ENV_DEFAULT_MODELS.name


def default_models() -> list[str]:
    """``$COSINE_PROBE_DEFAULT_MODELS`` (comma-separated names) when set, else the bundled models installed here.

    The approximate bundled model (the 4-bit e5) is offered and scored when named, never by default. Read at call
    time, so a test or an operator that sets the variable is obeyed by the next command or session.
    """
    env = os.environ.get(DEFAULT_MODELS_ENV, "").strip()
    if env:
        return [m.strip() for m in env.split(",") if m.strip()]
    from core.models.loading import availability  # only when no variable names the models

    return [m for m in registry.DEFAULT_BUNDLED if availability(m).available]
