"""Shared fixtures: an isolated cache folder for the whole session, MiniLM, a fresh cache.

The cache folder is set before any test runs, so no test (and no subprocess
started by a test, which inherits the environment) touches the user's real
cache.  The mpnet bundle is extracted into it at most once per session.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from core.constants import BACKEND_ENV_VAR, CACHE_ENV_VAR
from core.models.registry import MINILM_L6

DEFAULT_MODELS_ENV = "COSINE_PROBE_DEFAULT_MODELS"

# Property tests (tests/core/test_properties.py): few examples in `make test`, many in a
# nightly or manual run with HYPOTHESIS_PROFILE=nightly.  No deadline: the machine is shared.
settings.register_profile("default", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("nightly", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(scope="session", autouse=True)
def session_cache_dir(tmp_path_factory):
    """A fresh cache folder for the session, MiniLM as the default model, torch as the default backend.

    The fresh cache holds no exact ONNX export, so the default backend (auto)
    would export MiniLM and mpnet once per session; tests of the export and of
    the auto default (tests/core/models/test_onnx_export.py) ask for them.
    """
    folder = tmp_path_factory.mktemp("cosine-probe-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(CACHE_ENV_VAR, str(folder))
        mp.setenv(DEFAULT_MODELS_ENV, MINILM_L6)
        mp.setenv(BACKEND_ENV_VAR, "torch")
        yield folder


@pytest.fixture(scope="session")
def minilm(session_cache_dir):
    """The shared, loaded all-MiniLM-L6-v2."""
    from core.models.loading import load_model

    return load_model(MINILM_L6)


@pytest.fixture
def fresh_cache(tmp_path):
    """An empty embedding cache in its own sqlite file."""
    from core.models.cache import EmbeddingCache

    cache = EmbeddingCache(tmp_path / "embeddings.sqlite")
    yield cache
    cache.close()
