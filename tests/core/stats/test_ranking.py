"""Bootstrap intervals of the vulnerability ranking: points where nothing varies, ties where noise decides."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core import constants
from core.papers.failure_modes import VULNERABILITY_COLUMNS, vulnerability_ranking
from core.stats import vulnerability_bootstrap, vulnerability_scores


def _constant(values: list[float], n: int = 3) -> np.ndarray:
    return np.tile(np.asarray(values, float), (n, 1))


def test_without_variation_the_intervals_are_the_hand_computed_points():
    # m1: A .9, B .9, C .8 -> ranks 1, 1, 3; m2: A .5, B .6, C .7 -> ranks 3, 2, 1
    # scores A 2, B 1, C 2 -> ranks B 1, A 2, C 2 (as in test_stats' hand example)
    out = vulnerability_bootstrap({"m1": _constant([0.9, 0.9, 0.8]), "m2": _constant([0.5, 0.6, 0.7])}, ["A", "B", "C"], n_resamples=200)
    assert list(out.columns) == VULNERABILITY_COLUMNS
    assert list(out["model"]) == ["B", "A", "C"]
    assert list(out["score"]) == [1, 2, 2] and list(out["rank"]) == [1, 2, 2]
    assert list(out["score_ci_low"]) == list(out["score_ci_high"]) == [1, 2, 2]
    assert list(out["rank_ci_low"]) == list(out["rank_ci_high"]) == [1, 2, 2]
    # equal scores are a tie; B's point interval touches no one else's
    assert list(out["tied_with"]) == ["", "C", "A"]


@pytest.fixture(scope="module")
def noisy() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    modes = {}
    for mode in ("negation", "numerical", "temporal"):
        x = rng.uniform(0.5, 0.9, 30)
        # Y is X plus zero-mean noise a thousand times smaller than the spread of pairs; Z is far below both.
        modes[mode] = np.column_stack([x, x + rng.normal(0.0, 1e-4, 30), x - 0.3])
    return modes


def test_noise_decides_nothing_models_within_it_are_tied(noisy):
    out = vulnerability_bootstrap(noisy, ["X", "Y", "Z"]).set_index("model")
    assert out.at["X", "tied_with"] == "Y" and out.at["Y", "tied_with"] == "X"
    assert out.at["Z", "tied_with"] == ""
    # Z scores lowest in every mode of every resample: rank 3 in each of 3 modes -> score 2 * 3 = 6, rank 3, no doubt
    assert (out.at["Z", "score"], out.at["Z", "score_ci_low"], out.at["Z", "score_ci_high"]) == (6, 6, 6)
    assert (out.at["Z", "rank_ci_low"], out.at["Z", "rank_ci_high"]) == (3, 3)
    # X and Y trade places across resamples: their rank intervals span both places
    for model in ("X", "Y"):
        assert (out.at[model, "rank_ci_low"], out.at[model, "rank_ci_high"]) == (1, 2)
    # the point ranking is the paper's rule on the full-sample means
    means = pd.DataFrame({m: [noisy[k][:, j].mean() for k in noisy] for j, m in enumerate("XYZ")}, index=list(noisy))
    point = vulnerability_scores(means).set_index("model")
    assert out["score"].to_dict() == point["score"].to_dict() and out["rank"].to_dict() == point["rank"].to_dict()


def test_same_seed_same_table_and_intervals_hold_the_point(noisy):
    a = vulnerability_bootstrap(noisy, ["X", "Y", "Z"], seed=3)
    pd.testing.assert_frame_equal(a, vulnerability_bootstrap(noisy, ["X", "Y", "Z"], seed=3))
    assert ((a["score_ci_low"] <= a["score"]) & (a["score"] <= a["score_ci_high"])).all()
    assert ((a["rank_ci_low"] >= 1) & (a["rank_ci_high"] <= 3)).all()


@pytest.mark.parametrize(
    ("cosines", "models", "match"),
    [
        ({}, ["A", "B"], "no failure mode"),
        ({"m": _constant([0.5, 0.6])}, ["A"], "at least 2 distinct"),
        ({"m": _constant([0.5, 0.6])}, ["A", "A"], "at least 2 distinct"),
        ({"m": _constant([0.5, 0.6, 0.7])}, ["A", "B"], r"shape \(n_pairs >= 1, 2\)"),
        ({"m": np.array([[0.5, np.nan]])}, ["A", "B"], "NaN"),
    ],
)
def test_refusals(cosines, models, match):
    with pytest.raises(ValueError, match=match):
        vulnerability_bootstrap(cosines, models)


def test_failure_mode_results_are_ranked_on_shared_pairs(noisy):
    rows = []
    for mode, matrix in noisy.items():
        for i, row in enumerate(matrix):
            for model, cosine in zip("XYZ", row, strict=True):
                rows.append(
                    {
                        constants.COL_MODEL: model,
                        constants.COL_SUITE: constants.SUITE_FAILURE_MODES,
                        constants.COL_CATEGORY: mode,
                        constants.COL_PAIR_ID: f"{mode}-{i}",
                        constants.COL_COSINE: cosine,
                    }
                )
    results = pd.DataFrame(rows)
    pd.testing.assert_frame_equal(vulnerability_ranking(results), vulnerability_bootstrap(noisy, ["X", "Y", "Z"]))
    one_model = vulnerability_ranking(results[results[constants.COL_MODEL] == "X"])
    assert one_model.empty and list(one_model.columns) == VULNERABILITY_COLUMNS
