"""The papers' analyses on a small synthetic results table with hand-worked numbers.

Two models, m1 and m2, three suites.  All expected values below are worked
out by hand in the comments; SD is the sample SD (ddof=1) throughout, and a
failure is a cosine strictly above the threshold (0.7).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from core import constants
from core.papers import failure_modes, oov, summary
from core.scoring import tables

FM, BL, OOV = constants.SUITE_FAILURE_MODES, constants.SUITE_BASELINE, constants.SUITE_OOV
BOTH = constants.VARIANT_REPLACED_BOTH
# An analysis takes exactly the rows it scores; the tests pick one suite's rows, as the callers do.


def _fm(results):
    return tables.rows_of_suite(results, FM)


def _bl(results):
    return tables.rows_of_suite(results, BL)  # the tables below were worked by hand for this reading


# (model, category, cosines) for the failure-modes suite.
FAILURE_ROWS = [
    ("m1", constants.CAT_POSITIVE, [0.8, 0.9, 1.0]),
    ("m1", constants.CAT_NEGATION, [0.6, 0.7, 0.8]),
    ("m1", constants.CAT_TEMPORAL, [0.95, 0.95]),
    ("m2", constants.CAT_POSITIVE, [0.7, 0.8]),
    ("m2", constants.CAT_NEGATION, [0.5, 0.9]),
    ("m2", constants.CAT_TEMPORAL, [0.6, 0.7, 0.8]),
]
# (model, category, cosines, token jaccards) for the baseline suite.
BASELINE_ROWS = [
    ("m1", constants.CAT_POSITIVE, [0.8, 0.9], [0.5, 0.75]),
    ("m1", constants.CAT_NEGATIVE, [0.1, 0.3], [0.0, 0.25]),
    ("m2", constants.CAT_POSITIVE, [0.9, 0.9], [0.5, 0.6]),
    ("m2", constants.CAT_NEGATIVE, [0.4, 0.4], [0.1, 0.2]),
]
# (model, pair_id, entity, original, replaced_both, replaced_b)
OOV_ROWS = [
    ("m1", "o1", "Google", 0.9, 0.7, 0.8),
    ("m1", "o2", "penicillin", 0.8, 0.7, 0.75),
    ("m1", "o3", "Mars", 0.85, 0.55, 0.85),
    ("m2", "o1", "Google", 0.9, 0.85, 0.9),
    ("m2", "o2", "penicillin", 0.9, 0.8, 0.85),
    ("m2", "o3", "Mars", 0.9, 0.75, 0.9),
]


def _results() -> pd.DataFrame:
    rows = []
    for model, cat, cosines in FAILURE_ROWS:
        for i, cos in enumerate(cosines):
            rows.append(
                {
                    constants.COL_MODEL: model,
                    constants.COL_SUITE: FM,
                    constants.COL_CATEGORY: cat,
                    constants.COL_PAIR_ID: f"{cat}-{i}",
                    constants.COL_COSINE: cos,
                }
            )
    for model, cat, cosines, jaccards in BASELINE_ROWS:
        for i, (cos, jac) in enumerate(zip(cosines, jaccards, strict=True)):
            rows.append(
                {
                    constants.COL_MODEL: model,
                    constants.COL_SUITE: BL,
                    constants.COL_CATEGORY: cat,
                    constants.COL_PAIR_ID: f"bl-{cat}-{i}",
                    constants.COL_COSINE: cos,
                    constants.COL_TOKEN_JACCARD: jac,
                }
            )
    for model, pid, entity, orig, both, b_only in OOV_ROWS:
        for variant, cos in zip(constants.OOV_VARIANTS, (orig, both, b_only), strict=True):
            rows.append(
                {
                    constants.COL_MODEL: model,
                    constants.COL_SUITE: OOV,
                    constants.COL_CATEGORY: constants.CAT_OOV,
                    constants.COL_PAIR_ID: pid,
                    constants.COL_ENTITY: entity,
                    constants.COL_REPLACEMENT: f"Zz{entity.lower()}",
                    constants.COL_VARIANT: variant,
                    constants.COL_COSINE: cos,
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture
def results() -> pd.DataFrame:
    return _results()


def _row(frame: pd.DataFrame, **where) -> pd.Series:
    mask = np.ones(len(frame), dtype=bool)
    for col, value in where.items():
        mask &= frame[col].to_numpy() == value
    assert mask.sum() == 1, where
    return frame[mask].iloc[0]


# ----------------------------------------------------------- category tables


def test_category_summary(results):
    table = tables.category_summary(results, threshold=0.7)
    # OOV rows carry a variant and are left out; 6 failure-mode + 4 baseline groups.
    assert len(table) == 10
    assert constants.SUITE_OOV not in set(table[constants.COL_SUITE])

    # m1 negation [0.6, 0.7, 0.8]: mean 0.7; deviations ±0.1, 0 -> var 0.02/2 = 0.01, sd 0.1;
    # only 0.8 > 0.7 (0.7 itself is not a failure) -> rate 1/3.
    r = _row(table, model="m1", suite=FM, category=constants.CAT_NEGATION)
    assert r["n"] == 3
    assert r["mean"] == pytest.approx(0.7)
    assert r["sd"] == pytest.approx(0.1)
    assert r["failure_rate"] == pytest.approx(1 / 3)
    assert 0.6 - 1e-12 <= r["ci_low"] <= r["mean"] <= r["ci_high"] <= 0.8 + 1e-12
    assert 0.0 <= r["fr_ci_low"] <= r["failure_rate"] <= r["fr_ci_high"] <= 1.0

    # m2 negation [0.5, 0.9]: mean 0.7, sd = sqrt((0.04 + 0.04) / 1) = 0.282843; rate 1/2.
    r = _row(table, model="m2", suite=FM, category=constants.CAT_NEGATION)
    assert (r["n"], r["mean"], r["sd"], r["failure_rate"]) == (2, pytest.approx(0.7), pytest.approx(math.sqrt(0.08)), 0.5)

    # m1 temporal [0.95, 0.95]: sd 0, both above -> rate 1, CI collapses to the value.
    r = _row(table, model="m1", suite=FM, category=constants.CAT_TEMPORAL)
    assert (r["sd"], r["failure_rate"]) == (0.0, 1.0)
    assert r["ci_low"] == pytest.approx(0.95) and r["ci_high"] == pytest.approx(0.95)

    # m1 baseline negatives [0.1, 0.3]: mean 0.2, rate 0.
    r = _row(table, model="m1", suite=BL, category=constants.CAT_NEGATIVE)
    assert (r["mean"], r["failure_rate"]) == (pytest.approx(0.2), 0.0)

    only_fm = tables.category_summary(_fm(results), threshold=0.7)
    assert set(only_fm[constants.COL_SUITE]) == {FM} and len(only_fm) == 6
    assert tables.category_summary(results.iloc[0:0]).empty


def test_failure_mode_table(results):
    table = failure_modes.failure_mode_table(_fm(results), threshold=0.7)
    assert list(table.columns) == [
        constants.COL_MODEL,
        constants.COL_CATEGORY,
        "n",
        "mean",
        "sd",
        "failure_rate",
        "severity_ratio",
        "cohens_d",
    ]
    # Only failure modes present in the data, in FAILURE_MODES order, per model.
    assert list(zip(table[constants.COL_MODEL], table[constants.COL_CATEGORY], strict=True)) == [
        ("m1", constants.CAT_NEGATION),
        ("m1", constants.CAT_TEMPORAL),
        ("m2", constants.CAT_NEGATION),
        ("m2", constants.CAT_TEMPORAL),
    ]
    expected = {
        # m1 positive [0.8, 0.9, 1.0]: mean 0.9, var 0.01.
        # negation: severity 0.7 / 0.9 = 0.777778;
        #   d = (0.9 - 0.7) / sqrt((2*0.01 + 2*0.01) / 4) = 0.2 / 0.1 = 2.0
        ("m1", constants.CAT_NEGATION): (3, 0.7, 0.1, 1 / 3, 0.7 / 0.9, 2.0),
        # temporal [0.95, 0.95]: var 0; severity 0.95 / 0.9 = 1.055556;
        #   d = (0.9 - 0.95) / sqrt((2*0.01 + 1*0) / 3) = -0.05 / 0.0816497 = -0.612372
        ("m1", constants.CAT_TEMPORAL): (2, 0.95, 0.0, 1.0, 0.95 / 0.9, -0.05 / math.sqrt(0.02 / 3)),
        # m2 positive [0.7, 0.8]: mean 0.75, var 0.005.
        # negation [0.5, 0.9]: var 0.08; severity 0.7 / 0.75 = 0.933333;
        #   d = 0.05 / sqrt((0.005 + 0.08) / 2) = 0.05 / 0.206155 = 0.242536
        ("m2", constants.CAT_NEGATION): (2, 0.7, math.sqrt(0.08), 0.5, 0.7 / 0.75, 0.05 / math.sqrt(0.0425)),
        # temporal [0.6, 0.7, 0.8]: var 0.01; only 0.8 > 0.7 -> 1/3;
        #   d = 0.05 / sqrt((0.005 + 2*0.01) / 3) = 0.05 / 0.0912871 = 0.547723
        ("m2", constants.CAT_TEMPORAL): (3, 0.7, 0.1, 1 / 3, 0.7 / 0.75, 0.05 / math.sqrt(0.025 / 3)),
    }
    for (model, cat), (n, mean, sd, rate, severity, d) in expected.items():
        r = _row(table, model=model, category=cat)
        assert r["n"] == n
        assert r["mean"] == pytest.approx(mean)
        assert r["sd"] == pytest.approx(sd, abs=1e-12)
        assert r["failure_rate"] == pytest.approx(rate)
        assert r["severity_ratio"] == pytest.approx(severity)
        assert r["cohens_d"] == pytest.approx(d)
    assert _row(table, model="m1", category=constants.CAT_TEMPORAL)["cohens_d"] == pytest.approx(-0.612372, abs=1e-6)


def test_failure_mode_table_without_positives(results):
    no_pos = results[results[constants.COL_CATEGORY] != constants.CAT_POSITIVE]
    table = failure_modes.failure_mode_table(_fm(no_pos))
    assert table["severity_ratio"].isna().all() and table["cohens_d"].isna().all()
    assert table["mean"].notna().all()


def test_severity_ranking(results):
    table = failure_modes.severity_ranking(_fm(results))
    # Averages over the two models: temporal (0.95 + 0.7) / 2 = 0.825,
    # negation (0.7 + 0.7) / 2 = 0.7, positive (0.9 + 0.75) / 2 = 0.825.
    assert table[constants.COL_CATEGORY].tolist() == [constants.CAT_TEMPORAL, constants.CAT_NEGATION]
    assert table["avg_similarity"].tolist() == pytest.approx([0.825, 0.7])
    assert table["severity_ratio"].tolist() == pytest.approx([1.0, 0.7 / 0.825])
    assert table["rank"].tolist() == [1, 2]


def test_failure_rate_curves(results):
    curves = tables.failure_rate_curves(_fm(results), thresholds=[0.5, 0.7, 0.9])
    neg = curves[(curves[constants.COL_MODEL] == "m1") & (curves[constants.COL_CATEGORY] == constants.CAT_NEGATION)]
    # [0.6, 0.7, 0.8]: all > 0.5; only 0.8 > 0.7; none > 0.9.
    assert neg["failure_rate"].tolist() == pytest.approx([1.0, 1 / 3, 0.0])
    assert len(curves) == 6 * 3


def test_kruskal_by_category(results):
    table = failure_modes.kruskal_by_category(_fm(results))
    assert table[constants.COL_CATEGORY].tolist() == [constants.CAT_NEGATION, constants.CAT_TEMPORAL]
    # negation: pooled ranks 0.5->1, 0.6->2, 0.7->3, 0.8->4, 0.9->5; m1 sum 9 (n 3), m2 sum 6 (n 2).
    #   H = 12 / (5*6) * (9²/3 + 6²/2) - 3*6 = 0.4 * 45 - 18 = 0  ->  p = 1.
    neg = _row(table, category=constants.CAT_NEGATION)
    assert neg["h"] == pytest.approx(0.0, abs=1e-12) and neg["p"] == pytest.approx(1.0)
    assert neg["n_models"] == 2
    # temporal: 0.6->1, 0.7->2, 0.8->3, 0.95,0.95->4.5 each; m1 sum 9 (n 2), m2 sum 6 (n 3).
    #   H = 0.4 * (81/2 + 36/3) - 18 = 3; tie correction 1 - (2³-2)/(5³-5) = 0.95 -> H = 3/0.95.
    #   1 degree of freedom: p = P(chi2_1 > H) = erfc(sqrt(H/2)).
    tem = _row(table, category=constants.CAT_TEMPORAL)
    h = 3 / 0.95
    assert tem["h"] == pytest.approx(h)
    assert tem["p"] == pytest.approx(math.erfc(math.sqrt(h / 2)))
    # One model only: no test.
    assert failure_modes.kruskal_by_category(_fm(results[results[constants.COL_MODEL] == "m1"])).empty


def test_jaccard_correlation(results):
    table = oov.jaccard_correlation(_bl(results))
    assert table[constants.COL_MODEL].tolist() == ["m1", "m2"]
    # m1: x = [0.5, 0.75, 0, 0.25], y = [0.8, 0.9, 0.1, 0.3]; means 0.375, 0.525;
    #   Σdxdy = 0.3625, Σdx² = 0.3125, Σdy² = 0.4475 -> r = 0.3625 / sqrt(0.13984375) = 0.969363.
    #   Ranks agree exactly -> rho = 1.
    m1 = _row(table, model="m1")
    assert m1["pearson_r"] == pytest.approx(0.3625 / math.sqrt(0.3125 * 0.4475))
    assert m1["spearman_rho"] == pytest.approx(1.0)
    assert m1["n"] == 4
    # m2: x = [0.5, 0.6, 0.1, 0.2], y = [0.9, 0.9, 0.4, 0.4]; Σdxdy = 0.2, Σdx² = 0.17, Σdy² = 0.25
    #   -> r = 0.2 / sqrt(0.0425) = 0.970143.  Ranks x [3, 4, 1, 2], y [3.5, 3.5, 1.5, 1.5]
    #   -> rho = 4 / sqrt(5 * 4) = 0.894427.
    m2 = _row(table, model="m2")
    assert m2["pearson_r"] == pytest.approx(0.2 / math.sqrt(0.0425))
    assert m2["spearman_rho"] == pytest.approx(4 / math.sqrt(20))


# ---------------------------------------------------------------------- OOV


def test_dynamic_ranges(results):
    table = oov.dynamic_ranges(_bl(results))
    assert oov.baseline_ranges(results).equals(table)  # the paper's range, from the baseline suite
    assert list(table.columns) == [constants.COL_MODEL, "mean_positive", "mean_negative", "dynamic_range"]
    # m1: (0.8 + 0.9)/2 - (0.1 + 0.3)/2 = 0.85 - 0.2 = 0.65; m2: 0.9 - 0.4 = 0.5.
    assert table[constants.COL_MODEL].tolist() == ["m1", "m2"]
    assert table["mean_positive"].tolist() == pytest.approx([0.85, 0.9])
    assert table["mean_negative"].tolist() == pytest.approx([0.2, 0.4])
    assert table["dynamic_range"].tolist() == pytest.approx([0.65, 0.5])
    assert oov.dynamic_ranges(_fm(results)).empty  # no negative controls there


def test_oov_deltas(results):
    # Core's one default is the paper's reading (the invented word in the second sentence only)
    assert set(oov.oov_deltas(results)["reading"]) == {constants.OOV_DEFAULT_READING} == {constants.VARIANT_REPLACED_B}
    table = oov.oov_deltas(results, BOTH).sort_values([constants.COL_MODEL, constants.COL_PAIR_ID]).reset_index(drop=True)
    assert len(table) == 6
    assert set(table["reading"]) == {constants.VARIANT_REPLACED_BOTH}
    # delta = original - replaced_both: m1 0.9-0.7, 0.8-0.7, 0.85-0.55; m2 0.9-0.85, 0.9-0.8, 0.9-0.75.
    assert table["delta"].tolist() == pytest.approx([0.2, 0.1, 0.3, 0.05, 0.1, 0.15])
    # normalized by the baseline dynamic range (m1 0.65, m2 0.5).
    assert table["normalized_delta"].tolist() == pytest.approx([0.2 / 0.65, 0.1 / 0.65, 0.3 / 0.65, 0.1, 0.2, 0.3])
    assert table[constants.COL_ENTITY].tolist()[:3] == ["Google", "penicillin", "Mars"]

    b_only = oov.oov_deltas(results, reading=constants.VARIANT_REPLACED_B).sort_values([constants.COL_MODEL, constants.COL_PAIR_ID])
    # m1: 0.9-0.8, 0.8-0.75, 0.85-0.85; m2: 0.9-0.9, 0.9-0.85, 0.9-0.9.
    assert b_only["delta"].tolist() == pytest.approx([0.1, 0.05, 0.0, 0.0, 0.05, 0.0], abs=1e-12)

    no_dyn = oov.oov_deltas(results[results[constants.COL_SUITE] == OOV])
    assert no_dyn["normalized_delta"].isna().all()
    assert oov.oov_deltas(results[results[constants.COL_SUITE] == FM]).empty


def test_oov_summary(results):
    dyn = oov.baseline_ranges(results)
    deltas = oov.oov_deltas(results, BOTH, dynamic=dyn)
    table = oov.oov_summary(deltas, dyn)
    m1, m2 = _row(table, model="m1"), _row(table, model="m2")
    # m1 deltas [0.2, 0.1, 0.3]: mean 0.2, sd 0.1, min 0.1, max 0.3; DR 0.65.
    assert (m1["n"], m1["mean_delta"], m1["sd_delta"]) == (3, pytest.approx(0.2), pytest.approx(0.1))
    assert (m1["min_delta"], m1["max_delta"]) == (pytest.approx(0.1), pytest.approx(0.3))
    assert m1["dynamic_range"] == pytest.approx(0.65)
    assert m1["normalized_mean"] == pytest.approx(0.2 / 0.65)  # 0.307692
    assert m1["normalized_max"] == pytest.approx(0.3 / 0.65)  # 0.461538
    assert 0.1 - 1e-12 <= m1["ci_low"] <= 0.2 <= m1["ci_high"] <= 0.3 + 1e-12
    assert m1["norm_ci_low"] == pytest.approx(m1["ci_low"] / 0.65)
    # m2 deltas [0.05, 0.1, 0.15]: mean 0.1, sd 0.05; DR 0.5 -> 0.2 and 0.3.
    assert (m2["mean_delta"], m2["sd_delta"]) == (pytest.approx(0.1), pytest.approx(0.05))
    assert (m2["normalized_mean"], m2["normalized_max"]) == (pytest.approx(0.2), pytest.approx(0.3))

    without = oov.oov_summary(deltas)
    assert without["normalized_mean"].isna().all() and without["dynamic_range"].isna().all()


def test_oov_summary_with_non_positive_dynamic_range(results):
    dyn = pd.DataFrame({constants.COL_MODEL: ["m1", "m2"], "dynamic_range": [0.0, -0.1]})
    table = oov.oov_summary(oov.oov_deltas(results, BOTH, dynamic=dyn), dyn)
    assert table["normalized_mean"].isna().all()


def test_cohens_d_matrix(results):
    matrix = oov.cohens_d_matrix(oov.oov_deltas(results, BOTH))
    assert list(matrix.index) == list(matrix.columns) == ["m1", "m2"]
    # m1 [0.2, 0.1, 0.3] (var 0.01), m2 [0.05, 0.1, 0.15] (var 0.0025):
    #   d = (0.2 - 0.1) / sqrt((2*0.01 + 2*0.0025) / 4) = 0.1 / 0.0790569 = 1.264911.
    d = 0.1 / math.sqrt(0.025 / 4)
    assert matrix.loc["m1", "m2"] == pytest.approx(d)
    assert matrix.loc["m2", "m1"] == pytest.approx(-d)
    assert matrix.loc["m1", "m1"] == 0.0 and matrix.loc["m2", "m2"] == 0.0
    assert matrix.loc["m1", "m2"] == pytest.approx(1.264911, abs=1e-6)


def test_oov_by_original_tokens(results):
    table = oov.oov_by_original_tokens(oov.oov_deltas(results, BOTH), {"Google": 1, "penicillin": 3, "Mars": 1})
    m1_single = _row(table, model="m1", group="single-token")
    # m1 single-token entities Google (0.2) and Mars (0.3) -> mean 0.25; multi-token penicillin 0.1.
    assert (m1_single["n"], m1_single["mean_delta"]) == (2, pytest.approx(0.25))
    assert _row(table, model="m1", group="multi-token")["mean_delta"] == pytest.approx(0.1)


def test_summarize_has_every_table(results):
    tables = summary.summarize(results, threshold=0.7)
    assert {
        "categories",
        "failure_modes",
        "severity",
        "kruskal_wallis",
        "vulnerability",
        "dynamic_range",
        "jaccard_correlation",
        "oov_deltas_replaced_both",
        "oov_summary_replaced_both",
        "oov_deltas_replaced_b",
        "oov_summary_replaced_b",
    } == set(tables)
    assert summary.summarize(pd.DataFrame()).keys() == {"categories"}


def test_analyses_score_every_row_given_whatever_its_suite(results):
    """No hidden suite filter; a user's file (any suite name) gets the same tables as the shipped suite."""
    fm, bl = _fm(results), _bl(results)
    mine, my_bl = fm.assign(**{constants.COL_SUITE: "my-pairs.csv"}), bl.assign(**{constants.COL_SUITE: "my-pairs.csv"})
    for analysis in (
        lambda r: failure_modes.failure_mode_table(r, 0.7),
        failure_modes.severity_ranking,
        failure_modes.kruskal_by_category,
        lambda r: tables.failure_rate_curves(r, thresholds=[0.5, 0.7]),
    ):
        expected = analysis(fm)
        assert not expected.empty
        pd.testing.assert_frame_equal(analysis(mine).reset_index(drop=True), expected.reset_index(drop=True))
    for analysis in (oov.dynamic_ranges, oov.jaccard_correlation):
        expected = analysis(bl)
        assert not expected.empty
        pd.testing.assert_frame_equal(analysis(my_bl), expected)
