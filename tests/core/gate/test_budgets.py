"""Budgets on tidy results, each value checked against a hand count or scipy."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core import constants
from core.gate import budgets as B
from core.gate.config import Budgets


def _results() -> pd.DataFrame:
    """Two models; negation cosines chosen so the counts above 0.8 are easy to see."""
    rows = []
    cos = {
        "m1": {"negation": [0.95, 0.85, 0.80, 0.60], "positive": [0.9, 0.7, 0.65], "negative": [0.1, 0.72, 0.3]},
        "m2": {"negation": [0.81, 0.79, 0.5, 0.4], "positive": [0.9, 0.8, 0.85], "negative": [0.1, 0.2, 0.3]},
    }
    for model, cats in cos.items():
        for cat, values in cats.items():
            rows += [{"model": model, "category": cat, "cosine": v} for v in values]
    return pd.DataFrame(rows)


def test_failure_rate_counts_pairs_strictly_above_each_models_threshold():
    out = B.failure_rate_outcomes(_results(), {"negation": 0.5}, {"m1": 0.8, "m2": 0.45}, "global")
    by_model = {o.model: o for o in out}
    # m1 at 0.8: 0.95 and 0.85 are above, 0.80 is not (strict) -> 2/4.
    assert by_model["m1"].measured == pytest.approx(2 / 4)
    assert by_model["m1"].status == B.STATUS_PASS  # 0.5 <= 0.5: a budget met exactly holds
    # m2 at 0.45: 0.81, 0.79, 0.5 -> 3/4.
    assert by_model["m2"].measured == pytest.approx(3 / 4)
    assert by_model["m2"].status == B.STATUS_FAIL
    assert by_model["m2"].n == 4
    assert "3/4 pairs above global threshold 0.450" in by_model["m2"].message
    assert "0.750 BREACHES budget max 0.500" in by_model["m2"].message


def test_missing_category_or_threshold_is_an_error_not_a_pass():
    out = B.failure_rate_outcomes(_results(), {"hedging": 1.0, "negation": 1.0}, {"m1": 0.8}, "calibrated (youden)")
    statuses = {(o.model, o.key): o.status for o in out}
    assert statuses[("m1", "hedging")] == B.STATUS_ERROR
    assert statuses[("m1", "negation")] == B.STATUS_PASS
    assert statuses[("m2", "negation")] == B.STATUS_ERROR  # no threshold for m2
    assert B.exit_code(out) == B.EXIT_BREACH
    assert "not measured" in next(o for o in out if o.key == "hedging").message


def test_control_auc_is_the_mann_whitney_probability():
    results = _results()
    out = {o.model: o for o in B.control_auc_outcomes(results, 0.9, (constants.CAT_NEGATIVE,))}
    for model, outcome in out.items():
        rows = results[results.model == model]
        pos = rows.loc[rows.category == "positive", "cosine"].to_numpy()
        neg = rows.loc[rows.category == "negative", "cosine"].to_numpy()
        u = stats.mannwhitneyu(pos, neg).statistic
        assert outcome.measured == pytest.approx(u / (pos.size * neg.size))
    # m1: negatives 0.72 outranks positives 0.7 and 0.65 -> 7 of 9 pairs ordered right.
    assert out["m1"].measured == pytest.approx(7 / 9) and out["m1"].status == B.STATUS_FAIL
    assert out["m2"].measured == 1.0 and out["m2"].status == B.STATUS_PASS


def test_auc_without_controls_is_an_error():
    only = _results().query("category == 'negation'")
    [outcome, _] = B.control_auc_outcomes(only, 0.9, (constants.CAT_NEGATIVE,))
    assert outcome.status == B.STATUS_ERROR and "needs positive" in outcome.error


def _win_rates() -> pd.DataFrame:
    rows = [
        ("m1", "none", "negation", 10, 3, 0.3, 0.1, 0.6),
        ("m1", "none", "all", 40, 8, 0.2, 0.1, 0.3),
        ("m1", "rerank", "negation", 10, 0, 0.0, 0.0, 0.0),  # a mitigation's rows are not the model's budget
    ]
    return pd.DataFrame(rows, columns=["model", "mitigation", "mode", "n", "wins", "win_rate", "ci_low", "ci_high"])


def test_win_rate_budgets_read_the_dense_rows():
    out = B.win_rate_outcomes(_win_rates(), {"negation": 0.25, "all": 0.25, "hedging": 0.5}, ["m1"])
    by_key = {o.key: o for o in out}
    assert by_key["negation"].measured == 0.3 and by_key["negation"].status == B.STATUS_FAIL
    assert by_key["all"].measured == 0.2 and by_key["all"].status == B.STATUS_PASS
    assert by_key["hedging"].status == B.STATUS_ERROR
    assert "95% CI 0.100-0.600" in by_key["negation"].detail


def test_paired_accuracy_is_a_minimum():
    table = pd.DataFrame(
        [("m1", "none", "all", 20, 9, 0.45, 0.25, 0.65, 0.25)],
        columns=["model", "mitigation", "mode", "n", "paired_correct", "paired_accuracy", "ci_low", "ci_high", "random"],
    )
    [held] = B.paired_accuracy_outcomes(table, {"all": 0.45}, ["m1"])
    [breached] = B.paired_accuracy_outcomes(table, {"all": 0.5}, ["m1"])
    assert held.status == B.STATUS_PASS and breached.status == B.STATUS_FAIL
    assert "min 0.500" in breached.message


def test_unmeasured_outcomes_cover_every_budget_of_a_model():
    budgets = Budgets(
        max_failure_rate={"negation": 0.5, "hedging": 0.5},
        min_control_auc=0.9,
        max_adversarial_win_rate={"all": 0.3},
        min_paired_accuracy={"all": 0.3},
    )
    out = B.unmeasured_outcomes("m9", budgets, "did not load")
    assert [o.name for o in out] == [
        "max_failure_rate[negation]",
        "max_failure_rate[hedging]",
        "min_control_auc",
        "max_adversarial_win_rate[all]",
        "min_paired_accuracy[all]",
    ]
    assert all(o.status == B.STATUS_ERROR and "did not load" in o.message for o in out)
    assert len(B.unmeasured_outcomes("m9", budgets, "x", pairs=False)) == 2


def test_exit_code_and_frame():
    ok = B.Outcome("m", "min_control_auc", "", 0.99, 0.9)
    bad = B.Outcome("m", "max_failure_rate", "negation", 0.6, 0.5)
    assert B.exit_code([ok]) == 0 and B.exit_code([ok, bad]) == 1 and B.exit_code([]) == 0
    frame = B.outcomes_frame([ok, bad])
    assert list(frame["status"]) == ["pass", "fail"]
    assert frame.loc[1, "name"] == "max_failure_rate[negation]"
    nan = B.Outcome("m", "max_failure_rate", "negation", math.nan, 0.5)
    assert nan.status == B.STATUS_ERROR and nan.as_dict()["measured"] is None


def test_float_noise_at_the_budget_still_holds():
    rate = float(np.mean(np.array([0.9, 0.9, 0.1]) > 0.5))  # 0.666…
    assert B.Outcome("m", "max_failure_rate", "x", rate, 2 / 3).passed


def test_results_without_columns_are_refused():
    with pytest.raises(ValueError, match="lack columns"):
        B.failure_rate_outcomes(pd.DataFrame({"model": ["m"]}), {"x": 0.5}, {"m": 0.5}, "global")
