"""Shared fixtures: an isolated cache folder for the whole session, MiniLM, a fresh cache, the CLI.

The cache folder is set before any test runs, so no test (and no subprocess
started by a test, which inherits the environment) touches the user's real
cache.  The mpnet bundle is extracted into it at most once per session.

Workloads are lowered for the session through the settings read at call time
(``core/settings.py``): bootstrap intervals draw :data:`TEST_RESAMPLES`
resamples unless a test is marked ``full_bootstrap`` (a test of the interval
itself), and the run history is off unless a test names a history file.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from streamlit.components.v2 import manifest_scanner

from core import settings as core_settings
from core.constants import BACKEND_ENV_VAR, CACHE_ENV_VAR, HISTORY_ENV_VAR, WARM_ENV_VAR
from core.models.registry import MINILM_L6

# One torch (OpenMP) thread per core per pytest-xdist worker, set in each worker before anything imports torch; the app's
# servers and the CLI's subprocesses a test starts inherit it.  `make test` runs a worker per core: two workers of two
# threads each on two cores spin on OpenMP's barriers for each other's threads (the same two files on two workers:
# 81 CPU-s and 181 s with two threads, 35 CPU-s and 72 s with one, at load 8).  An OMP_NUM_THREADS already set is kept.
if "PYTEST_XDIST_WORKER_COUNT" in os.environ:
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))))

DEFAULT_MODELS_ENV = "COSINE_PROBE_DEFAULT_MODELS"
# Resamples per bootstrap interval in tests that only need an interval to exist and be ordered.
TEST_RESAMPLES = 200

# Property tests (tests/core/test_properties.py): few examples in `make test`, many in a
# nightly or manual run with HYPOTHESIS_PROFILE=nightly.  No deadline: the machine is shared.
settings.register_profile("default", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("nightly", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


# Each new AppTest scans every installed distribution's metadata for Streamlit components on its first run (0.3 s
# here, paid by every AppTest in the suite); what is installed does not change while the tests run.
manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)


@pytest.fixture(scope="session", autouse=True)
def session_cache_dir(tmp_path_factory):
    """A fresh cache folder for the session, MiniLM as the default model, torch as the default backend,
    :data:`TEST_RESAMPLES` bootstrap resamples and no run history (subprocesses inherit all of it).

    The fresh cache holds no exact ONNX export, so the default backend (auto)
    would export MiniLM and mpnet once per session; tests of the export and of
    the auto default (tests/core/models/test_onnx_export.py) ask for them.
    """
    folder = tmp_path_factory.mktemp("cosine-probe-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(CACHE_ENV_VAR, str(folder))
        mp.setenv(DEFAULT_MODELS_ENV, MINILM_L6)
        mp.setenv(BACKEND_ENV_VAR, "torch")
        mp.setenv(core_settings.BOOTSTRAP_RESAMPLES_ENV_VAR, str(TEST_RESAMPLES))
        mp.setenv(HISTORY_ENV_VAR, "off")
        mp.setenv(WARM_ENV_VAR, "0")  # no background warm-up of the default models in the app's tests (tests/ui/test_warmup.py turns it on)
        yield folder


@pytest.fixture(autouse=True)
def _full_bootstrap(request, monkeypatch):
    """Tests marked ``full_bootstrap`` (of an interval itself) draw the real default resamples."""
    if request.node.get_closest_marker("full_bootstrap"):
        monkeypatch.delenv(core_settings.BOOTSTRAP_RESAMPLES_ENV_VAR, raising=False)


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


@pytest.fixture
def cli(capsys):
    """Run the CLI in this process: ``cli("compare", "a", "b")`` -> ``(exit code, stdout, stderr)``."""
    from core.cli import main as cli_main

    def run(*argv: str) -> tuple[int, str, str]:
        code = cli_main.main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture(scope="session")
def ray_instance():
    """One local 2-CPU Ray instance for every test that needs Ray (starting one takes 10-20 s here), shut down at the end.

    Code under test finds it running (``core.cluster.session.ray_session``) and leaves it up.
    """
    ray = pytest.importorskip("ray")
    # address="local": a new instance even while another Ray runs on this machine (ray.init would join that one).
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="WARNING")
    yield ray
    ray.shutdown()


# Non-browser files of 40 s or more (`--durations`, load 8-11, where the browser files took 20-250 s each): started
# right after the browser files, so that no long file is the last one left on a worker.  A file missing here, or one
# that got faster, only costs time at the end, never a test.
LONG_FILES = (
    "core/models/test_onnx_export.py",
    "core/papers/test_suites.py",
    "views/test_your_data.py",
    "core/cli/test_audit.py",
    "core/models/test_runs.py",
    "core/cli/test_main.py",
    "core/probes/tune/test_natural_cost.py",
    "core/models/test_engines.py",
    "core/cli/test_pairs_files.py",
    "views/test_retrieval.py",
)


def pytest_collection_modifyitems(config, items):
    """The browser files first, then :data:`LONG_FILES`, then the rest (a stable sort: each file's tests keep their order).

    ``make test`` hands whole files to its workers in collection order (pytest-xdist's ``--dist loadfile`` with
    ``--no-loadscope-reorder``; without it xdist orders files by their number of tests, which left the one- to
    three-test browser files of 20-100 s to the end): the long files started last left one worker running the final
    one alone while the other sat idle; started first, the many short files fill the gaps at the end.
    """
    tests = Path(__file__).parent
    long_files = {tests / name for name in LONG_FILES}
    items.sort(key=lambda item: (item.get_closest_marker("browser") is None, item.path not in long_files))
