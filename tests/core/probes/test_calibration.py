"""Calibrated thresholds against a hand-computed ROC on a small fixed set.

Positive cosines 0.9, 0.8, 0.6 and negative cosines 0.7, 0.5, 0.2, sorted:
0.9P 0.8P 0.7N 0.6P 0.5N 0.2N.  With "same" meaning strictly above the
threshold, the strict thresholds halfway between neighbours give:

    threshold  tpr  fpr   J
    0.90       0    0     0
    0.85       1/3  0     1/3
    0.75       2/3  0     2/3   <- Youden (ties with 0.55; the higher wins)
    0.65       2/3  1/3   1/3
    0.55       1    1/3   2/3
    0.35       1    2/3   1/3
    0.2-1e-6   1    1     0

AUC = pairs where the positive outscores the negative / 9 = (3 + 3 + 2) / 9.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import mannwhitneyu

from core import constants
from core.probes import calibration

POS = [0.9, 0.8, 0.6]
NEG = [0.7, 0.5, 0.2]


def test_roc_curve_matches_hand_table():
    roc = calibration.roc_curve(POS, NEG)
    expected = [
        (0.90, 0, 0),
        (0.85, 1 / 3, 0),
        (0.75, 2 / 3, 0),
        (0.65, 2 / 3, 1 / 3),
        (0.55, 1, 1 / 3),
        (0.35, 1, 2 / 3),
        (0.2 - 1e-6, 1, 1),
    ]
    assert len(roc) == len(expected)
    for (t, tpr, fpr), row in zip(expected, roc.itertuples(), strict=True):
        assert row.threshold == pytest.approx(t)
        assert row.tpr == pytest.approx(tpr)
        assert row.fpr == pytest.approx(fpr)


def test_every_roc_point_is_what_failure_rate_gives_at_its_threshold():
    rng = np.random.default_rng(3)
    pos, neg = rng.uniform(0.3, 1, 40).round(2), rng.uniform(0, 0.8, 35).round(2)  # rounding makes ties
    for row in calibration.roc_curve(pos, neg).itertuples():
        assert row.tpr == pytest.approx(np.mean(pos > row.threshold))
        assert row.fpr == pytest.approx(np.mean(neg > row.threshold))


def test_auc_hand_and_mann_whitney():
    assert calibration.auc(POS, NEG) == pytest.approx(8 / 9)
    rng = np.random.default_rng(0)
    pos, neg = rng.normal(0.7, 0.1, 30).round(2), rng.normal(0.5, 0.15, 25).round(2)
    u = mannwhitneyu(pos, neg).statistic
    assert calibration.auc(pos, neg) == pytest.approx(u / (pos.size * neg.size))


def test_youden_picks_highest_of_tied_best():
    cut = calibration.youden_threshold(POS, NEG)
    assert cut.threshold == pytest.approx(0.75)
    assert (cut.tpr, cut.fpr) == pytest.approx((2 / 3, 0))
    assert cut.youden_j == pytest.approx(2 / 3)


def test_threshold_at_fpr():
    assert calibration.threshold_at_fpr(POS, NEG, 0.0).threshold == pytest.approx(0.75)
    cut = calibration.threshold_at_fpr(POS, NEG, 0.34)
    assert cut.threshold == pytest.approx(0.55)
    assert (cut.tpr, cut.fpr) == pytest.approx((1, 1 / 3))
    assert calibration.threshold_at_fpr(POS, NEG, 1.0).fpr == pytest.approx(1)


def test_separable_controls_give_auc_one_and_a_threshold_between():
    cut = calibration.youden_threshold([0.8, 0.9], [0.1, 0.3])
    assert 0.3 < cut.threshold < 0.8 and cut.youden_j == 1
    assert calibration.auc([0.8, 0.9], [0.1, 0.3]) == 1


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: calibration.threshold_at_fpr(POS, NEG, 1.5), "max_fpr"),
        (lambda: calibration.threshold_at_fpr(POS, NEG, float("nan")), "max_fpr"),
        (lambda: calibration.youden_threshold([], NEG), "positive is empty"),
        (lambda: calibration.auc(POS, ["x"]), "negative must be numeric"),
        (lambda: calibration.calibrate(_results(), negatives=("positive",)), "negatives"),
        (lambda: calibration.thresholds_by_model(pd.DataFrame(), "best"), "method"),
    ],
)
def test_bad_input_is_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def _results() -> pd.DataFrame:
    rows = []
    for model, shift in (("m1", 0.0), ("m2", 0.5)):
        # m2 scores everything 0.5 higher: same ranking, a threshold 0.5 higher
        for cat, values in (
            (constants.CAT_POSITIVE, POS),
            (constants.CAT_NEGATIVE, NEG),
            (constants.CAT_NEAR_MISS, [0.85]),
            (constants.CAT_NEGATION, [0.8, 0.7, 0.4]),
        ):
            rows += [{constants.COL_MODEL: model, constants.COL_CATEGORY: cat, constants.COL_COSINE: v + shift * (v > 0)} for v in values]
    return pd.DataFrame(rows)


def test_calibrate_per_model_and_global_rates():
    table = calibration.calibrate(_results(), max_fpr=0.34, global_threshold=0.7).set_index(constants.COL_MODEL)
    assert table.loc["m1", "youden_threshold"] == pytest.approx(0.75)
    assert table.loc["m2", "youden_threshold"] == pytest.approx(1.25)
    assert table.loc["m1", "fpr_threshold"] == pytest.approx(0.55)
    assert table.loc["m1", "auc"] == table.loc["m2", "auc"] == pytest.approx(8 / 9)
    # At 0.7, m2's positives all pass and its negatives 1.2 and 1.0 do (0.7 is not strictly above)
    assert (table.loc["m2", "global_tpr"], table.loc["m2", "global_fpr"]) == pytest.approx((1, 2 / 3))
    assert (table.loc["m1", "global_tpr"], table.loc["m1", "global_fpr"]) == pytest.approx((2 / 3, 0))
    assert table.loc["m1", "n_negative"] == 3


def test_near_miss_joins_the_negatives_when_chosen():
    table = calibration.calibrate(_results(), negatives=(constants.CAT_NEGATIVE, constants.CAT_NEAR_MISS)).set_index(constants.COL_MODEL)
    assert table.loc["m1", "n_negative"] == 4
    # the near-miss at 0.85 outscores positives 0.8 and 0.6: AUC = (8 + 1) / 12
    assert table.loc["m1", "auc"] == pytest.approx(9 / 12)


def test_failure_rates_global_vs_calibrated():
    results = _results()
    thresholds = calibration.thresholds_by_model(calibration.calibrate(results))
    rates = calibration.failure_rates(results, thresholds, global_threshold=0.7).set_index(constants.COL_MODEL)
    # m1 negation 0.8, 0.7, 0.4: above 0.7 -> 1/3; above 0.75 -> 1/3
    assert rates.loc["m1", "failure_rate_global"] == pytest.approx(1 / 3)
    assert rates.loc["m1", "failure_rate_calibrated"] == pytest.approx(1 / 3)
    # m2 negation 1.3, 1.2, 0.9: all above 0.7, only 1.3 above its own 1.25
    assert rates.loc["m2", "failure_rate_global"] == pytest.approx(1)
    assert rates.loc["m2", "failure_rate_calibrated"] == pytest.approx(1 / 3)
    assert rates.loc["m2", "change"] == pytest.approx(-2 / 3)
    assert set(rates[constants.COL_CATEGORY]) == {constants.CAT_NEGATION}


def test_roc_table_long_per_model():
    roc = calibration.roc_table(_results())
    assert set(roc[constants.COL_MODEL]) == {"m1", "m2"}
    assert list(roc.columns) == [constants.COL_MODEL, "threshold", "fpr", "tpr"]
    assert roc.groupby(constants.COL_MODEL).size().tolist() == [7, 7]


def test_calibration_on_real_minilm_controls(minilm, fresh_cache):
    from core.papers.suites import load_suite
    from core.scoring.runner import run_pairs

    suite = load_suite(constants.SUITE_FAILURE_MODES)
    controls = suite[suite[constants.COL_CATEGORY].isin(constants.CONTROLS)]
    result = run_pairs(controls, [minilm.meta.name], cache=fresh_cache)
    table = calibration.calibrate(result.results)
    assert len(table) == 1
    row = table.iloc[0]
    assert row["n_positive"] == 35 and row["n_negative"] == 35
    assert 0.5 < row["auc"] <= 1
    assert row["youden_j"] == pytest.approx(row["youden_tpr"] - row["youden_fpr"])


# ---------------------------------------------------------------- A 100% failure rate is said, not left silent


def _rates(values: dict[str, float], threshold: float = 0.29) -> pd.DataFrame:
    return pd.DataFrame(
        {
            constants.COL_MODEL: "m",
            constants.COL_CATEGORY: list(values),
            "calibrated_threshold": threshold,
            "failure_rate_calibrated": list(values.values()),
        }
    )


def test_calibration_findings_say_when_every_failure_rate_is_100_percent():
    said = calibration.calibration_findings(_rates({constants.CAT_NEGATION: 1.0, constants.CAT_NUMERICAL: 1.0}), (constants.CAT_NEGATIVE,))
    assert said[0] == "m's calibrated threshold (0.29) lies below every pair of every failure mode: at it, every failure rate is 100%."
    assert "every failure mode" in said[0] and "100%" in said[0] and "0.29" in said[0]
    assert "count the near-miss controls as negatives" in said[1]
    some = calibration.calibration_findings(
        _rates({constants.CAT_NEGATION: 1.0, constants.CAT_NUMERICAL: 0.4}), (constants.CAT_NEGATIVE, constants.CAT_NEAR_MISS)
    )
    assert "1 of 2 failure modes" in some[0] and "already count the near-miss" in some[1]
    assert calibration.calibration_findings(_rates({constants.CAT_NEGATION: 0.9}), (constants.CAT_NEGATIVE,)) == []
    with pytest.raises(ValueError, match="lacks columns"):
        calibration.calibration_findings(pd.DataFrame({"model": ["m"]}), (constants.CAT_NEGATIVE,))


def test_calibration_findings_say_every_rate_is_100_percent_once_for_every_model_it_holds_for():
    every = {constants.CAT_NEGATION: 1.0, constants.CAT_NUMERICAL: 1.0}
    rates = pd.concat(
        [
            _rates(every, 0.31).assign(**{constants.COL_MODEL: "a"}),
            _rates(every, 0.26).assign(**{constants.COL_MODEL: "b"}),
            _rates({constants.CAT_NEGATION: 1.0, constants.CAT_NUMERICAL: 0.5}, 0.4).assign(**{constants.COL_MODEL: "c"}),
        ]
    )
    said = calibration.calibration_findings(rates, (constants.CAT_NEGATIVE,))
    assert said[0] == (
        "The calibrated thresholds of a (0.31) and b (0.26) lie below every pair of every failure mode: "
        "at them, every failure rate is 100%."
    )
    assert said[1] == "c's calibrated threshold (0.40) lies below every pair of 1 of 2 failure modes: at it, its failure rate is 100%."
    assert len(said) == 3 and sum("every failure rate is 100%" in s for s in said) == 1
