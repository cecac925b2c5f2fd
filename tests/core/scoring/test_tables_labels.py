"""Numeric gold labels of user pairs: the one label-type rule (``core.probes.labels.results_label_kind``), label_correlation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from core import constants
from core.probes import labels as label_rules
from core.scoring import tables


def _results(labels, cosines, model="m1"):
    return pd.DataFrame({constants.COL_MODEL: model, constants.COL_COSINE: cosines, constants.COL_LABEL: labels})


def test_numeric_labels_are_graded_and_empty_ones_ignored():
    kind = label_rules.results_label_kind(_results(["1", " 0.5", "", "3e-1", "-2"], [0.1, 0.2, 0.3, 0.4, 0.5]))
    assert kind == label_rules.KIND_GRADED


@pytest.mark.parametrize(
    "labels",
    [
        ["1", "2", "yes"],  # one text label spoils it
        ["1", "", ""],  # fewer than 3 given labels
        ["inf", "1", "2"],  # not finite
        ["", "", ""],
    ],
)
def test_labels_that_are_not_all_finite_numbers_are_not_graded(labels):
    assert label_rules.results_label_kind(_results(labels, [0.1, 0.2, 0.3])) != label_rules.KIND_GRADED


def test_no_label_column_is_no_label():
    frame = pd.DataFrame({constants.COL_MODEL: ["m"] * 3, constants.COL_COSINE: [0.1, 0.2, 0.3]})
    assert label_rules.results_label_kind(frame) == label_rules.KIND_NONE
    assert tables.label_correlation(frame).empty


def test_label_correlation_matches_scipy_per_model():
    rng = np.random.default_rng(0)
    labels = rng.uniform(0, 5, 12)
    cos_a = labels / 5 + rng.normal(0, 0.1, 12)
    cos_b = rng.uniform(0, 1, 12)
    frame = pd.concat(
        [_results([f"{v:.6f}" for v in labels], cos_a, "a"), _results([f"{v:.6f}" for v in labels], cos_b, "b")],
        ignore_index=True,
    )
    out = tables.label_correlation(frame).set_index(constants.COL_MODEL)
    assert list(out.index) == ["a", "b"]
    parsed = np.array([float(f"{v:.6f}") for v in labels])
    for model, cos in (("a", cos_a), ("b", cos_b)):
        r, p = sps.pearsonr(parsed, cos)
        rho, _ = sps.spearmanr(parsed, cos)
        assert out.loc[model, "pearson_r"] == pytest.approx(r, abs=1e-12)
        assert out.loc[model, "pearson_p"] == pytest.approx(p, rel=1e-9)
        assert out.loc[model, "spearman_rho"] == pytest.approx(rho, abs=1e-12)
        assert out.loc[model, "n"] == 12
    assert out.loc["a", "pearson_r"] > 0.8


def test_label_correlation_skips_empty_and_text_labels_and_small_models():
    frame = pd.concat(
        [
            _results(["1", "2", "", "x", "4"], [0.1, 0.2, 0.9, 0.9, 0.4], "big"),
            _results(["1", "2", ""], [0.1, 0.2, 0.3], "small"),  # only 2 numeric labels: left out
        ],
        ignore_index=True,
    )
    out = tables.label_correlation(frame)
    assert list(out[constants.COL_MODEL]) == ["big"]
    assert out["n"].iloc[0] == 3
    assert out["pearson_r"].iloc[0] == pytest.approx(1.0)


def test_label_correlation_constant_label_is_nan():
    out = tables.label_correlation(_results(["1", "1", "1"], [0.1, 0.5, 0.9]))
    assert math.isnan(out["pearson_r"].iloc[0]) and out["n"].iloc[0] == 3
