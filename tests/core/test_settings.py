"""Knobs read at call time (core/settings.py): a setting reaches every function built on it, and none is bound at import."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from core import constants, settings
from core.stats import bootstrap_ci
from core.stats.ranking import vulnerability_bootstrap

CORE = Path(__file__).resolve().parents[2] / "core"
SAMPLE = np.linspace(0.1, 0.9, 17) ** 2


def test_explicit_count_wins_and_none_reads_the_environment(monkeypatch):
    monkeypatch.setenv(settings.BOOTSTRAP_RESAMPLES_ENV_VAR, "37")
    assert settings.bootstrap_resamples(5) == 5
    assert settings.bootstrap_resamples() == 37
    monkeypatch.delenv(settings.BOOTSTRAP_RESAMPLES_ENV_VAR)
    assert settings.bootstrap_resamples() == settings.BOOTSTRAP_RESAMPLES == 2000


@pytest.mark.parametrize("raw", ["many", "0", "-3", "2.5"])
def test_a_bad_environment_value_names_the_variable(monkeypatch, raw):
    monkeypatch.setenv(settings.BOOTSTRAP_RESAMPLES_ENV_VAR, raw)
    with pytest.raises(ValueError, match=settings.BOOTSTRAP_RESAMPLES_ENV_VAR):
        bootstrap_ci(SAMPLE)


def test_the_setting_is_read_when_the_interval_is_computed(monkeypatch):
    monkeypatch.setenv(settings.BOOTSTRAP_RESAMPLES_ENV_VAR, "50")
    assert bootstrap_ci(SAMPLE) == bootstrap_ci(SAMPLE, n_resamples=50)
    monkeypatch.setenv(settings.BOOTSTRAP_RESAMPLES_ENV_VAR, "400")
    assert bootstrap_ci(SAMPLE) == bootstrap_ci(SAMPLE, n_resamples=400) != bootstrap_ci(SAMPLE, n_resamples=50)
    rng = np.random.default_rng(0)
    cosines = {"a": rng.random((6, 2)), "b": rng.random((5, 2))}
    table = vulnerability_bootstrap(cosines, ["m1", "m2"])
    assert table.equals(vulnerability_bootstrap(cosines, ["m1", "m2"], n_resamples=400))


def _resample_defaults() -> list[str]:
    """``file:line function`` for every core parameter named n_resamples whose default is not None."""
    bound = []
    for path in sorted(CORE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            args = node.args
            positional = args.posonlyargs + args.args
            pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True))
            pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
            for arg, default in pairs:
                if arg.arg == "n_resamples" and not (isinstance(default, ast.Constant) and default.value is None):
                    bound.append(f"{path.relative_to(CORE.parent)}:{node.lineno} {node.name}")
    return bound


def test_no_core_signature_binds_the_resamples_at_import():
    assert not _resample_defaults(), "default n_resamples to None (core.settings resolves it at call time)"
    assert not hasattr(constants, "BOOTSTRAP_RESAMPLES"), "the resamples are a setting (core/settings.py), not a constant"
