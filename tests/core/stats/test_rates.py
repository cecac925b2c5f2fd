"""Every failure rate goes through core.stats.rates: each caller's figure equals a hand count, strictly above the threshold."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core import constants
from core.history.report import report_html
from core.probes import calibration, labels
from core.stats.intervals import bootstrap_ci, failure_rate_ci
from core.stats.rates import above, failure_rate

# Hand count at 0.7: 0.7 itself is not above (strict), so 2 of 5 are: 0.71 and 0.95.
COSINES = [0.2, 0.69, 0.7, 0.71, 0.95]


def test_above_and_failure_rate_against_a_hand_count():
    assert above(COSINES, 0.7).tolist() == [False, False, False, True, True]
    assert failure_rate(COSINES, 0.7) == 2 / 5


def test_failure_rate_refuses_what_has_no_rate():
    with pytest.raises(ValueError):
        failure_rate([], 0.7)
    with pytest.raises(ValueError):
        failure_rate([0.5, float("nan")], 0.7)


def test_the_interval_is_the_bootstrap_of_the_same_indicators_and_holds_the_rate():
    low, high = failure_rate_ci(COSINES * 4, 0.7, n_resamples=200, seed=3)
    want = bootstrap_ci(np.array([0, 0, 0, 1, 1] * 4, dtype=float), "mean", n_resamples=200, seed=3)
    assert (low, high) == want
    assert low <= 0.4 <= high


def test_calibration_rates_are_the_one_rate():
    cut = calibration.rates_at([0.9, 0.8, 0.7, 0.6], COSINES, 0.7)
    assert (cut.tpr, cut.fpr) == (2 / 4, 2 / 5)
    results = pd.DataFrame({constants.COL_MODEL: "m", constants.COL_CATEGORY: constants.CAT_NEGATION, constants.COL_COSINE: COSINES})
    table = calibration.failure_rates(results, {"m": 0.9}, global_threshold=0.7, categories=[constants.CAT_NEGATION])
    assert table["failure_rate_global"].iloc[0] == 2 / 5
    assert table["failure_rate_calibrated"].iloc[0] == 1 / 5  # only 0.95 is above 0.9


def test_a_labels_share_above_is_the_one_rate():
    results = pd.DataFrame(
        {
            constants.COL_MODEL: "m",
            constants.COL_TEXT_A: [f"a{i}" for i in range(5)],
            constants.COL_TEXT_B: [f"b{i}" for i in range(5)],
            constants.COL_COSINE: COSINES,
            constants.COL_LABEL: ["no"] * 5,
        }
    )
    by_label = labels.label_report(results, 0.7)["by_label"]
    assert by_label["share_above"].tolist() == [2 / 5]


def test_the_reports_share_per_model_is_the_one_rate():
    results = pd.DataFrame(
        {
            constants.COL_MODEL: "m",
            constants.COL_SUITE: "custom",
            constants.COL_CATEGORY: "c",
            constants.COL_PAIR_ID: [f"p{i}" for i in range(5)],
            constants.COL_TEXT_A: [f"a{i}" for i in range(5)],
            constants.COL_TEXT_B: [f"b{i}" for i in range(5)],
            constants.COL_COSINE: COSINES,
        }
    )
    assert "40% above 0.70" in report_html(results, 0.7, "t")
