"""Run diffs: matched pairs, hand-computed changes, scipy's paired bootstrap, crossed pairs, a run at a glance."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core.history.diff import CROSSED_DOWN, CROSSED_UP, diff_runs, run_overview


def _run(cosines: dict[tuple[str, str], list[float]]) -> pd.DataFrame:
    rows = []
    for (model, category), values in cosines.items():
        for i, c in enumerate(values):
            rows.append(
                {
                    "model": model,
                    "suite": "s",
                    "category": category,
                    "pair_id": f"{category}-{i}",
                    "text_a": f"{category} a {i}",
                    "text_b": f"{category} b {i}",
                    "cosine": c,
                }
            )
    return pd.DataFrame(rows)


BEFORE = _run({("m", "negation"): [0.60, 0.75, 0.90, 0.65], ("m", "positive"): [0.8, 0.9], ("old", "negation"): [0.5]})
AFTER = _run({("m", "negation"): [0.72, 0.68, 0.95, 0.66], ("m", "positive"): [0.8, 0.9], ("new", "negation"): [0.5]})


def test_changes_are_after_minus_before_over_matched_pairs():
    d = diff_runs(BEFORE, AFTER, 0.7, 0.7, n_resamples=999)
    neg = d.categories.set_index(["model", "category"]).loc[("m", "negation")]
    assert neg["n"] == 4
    assert neg["mean_before"] == pytest.approx(np.mean([0.60, 0.75, 0.90, 0.65]))
    assert neg["mean_change"] == pytest.approx(np.mean([0.12, -0.07, 0.05, 0.01]))
    # Above 0.7: before 0.75, 0.90 (2/4); after 0.72, 0.95 (2/4).
    assert (neg["rate_before"], neg["rate_after"], neg["rate_change"]) == (0.5, 0.5, 0.0)
    assert (neg["n_now_above"], neg["n_now_below"]) == (1, 1)
    pos = d.categories.set_index(["model", "category"]).loc[("m", "positive")]
    assert pos["mean_change"] == 0 and (pos["mean_ci_low"], pos["mean_ci_high"]) == (0, 0)
    assert (d.n_matched, d.n_only_before, d.n_only_after) == (6, 1, 1)
    assert (d.models_only_before, d.models_only_after) == (("old",), ("new",))


def test_interval_is_scipys_paired_percentile_bootstrap():
    d = diff_runs(BEFORE, AFTER, 0.7, 0.7, n_resamples=999, seed=3)
    neg = d.categories.set_index(["model", "category"]).loc[("m", "negation")]
    before = np.array([0.60, 0.75, 0.90, 0.65])
    after = np.array([0.72, 0.68, 0.95, 0.66])
    ref = stats.bootstrap(
        (after, before),
        lambda x, y, axis=-1: x.mean(axis=axis) - y.mean(axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=999,
        method="percentile",
        rng=np.random.default_rng(3),
    ).confidence_interval
    assert (neg["mean_ci_low"], neg["mean_ci_high"]) == pytest.approx((ref.low, ref.high))


def test_crossed_pairs_name_the_direction_and_both_scores():
    d = diff_runs(BEFORE, AFTER, 0.7, 0.7, n_resamples=99)
    crossed = d.crossed.set_index("pair_id")
    assert set(crossed.index) == {"negation-0", "negation-1"}
    assert crossed.loc["negation-0", "direction"] == CROSSED_UP
    assert (crossed.loc["negation-0", "cosine_before"], crossed.loc["negation-0", "cosine_after"]) == (0.60, 0.72)
    assert crossed.loc["negation-1", "direction"] == CROSSED_DOWN


def test_each_run_is_judged_at_its_own_threshold_per_model():
    d = diff_runs(BEFORE, AFTER, {"m": 0.7}, {"m": 0.93}, n_resamples=99)
    neg = d.categories.set_index(["model", "category"]).loc[("m", "negation")]
    # After at 0.93: only 0.95 above -> 1/4.
    assert (neg["threshold_before"], neg["threshold_after"], neg["rate_after"]) == (0.7, 0.93, 0.25)
    # 0.75 -> 0.68 and both positives (0.8, 0.9) fall below 0.93; 0.90 -> 0.95 stays above.
    assert sorted(d.crossed["pair_id"]) == ["negation-1", "positive-0", "positive-1"]


def test_edited_sentences_are_not_matched():
    edited = AFTER.copy()
    edited.loc[0, "text_b"] = "an edited sentence"
    d = diff_runs(BEFORE, edited, 0.7, 0.7, n_resamples=99)
    assert d.n_matched == 5
    assert d.categories.set_index(["model", "category"]).loc[("m", "negation"), "n"] == 3


def test_duplicate_keys_are_matched_in_order():
    twice = pd.concat([BEFORE.head(1), BEFORE.head(1).assign(cosine=0.1)], ignore_index=True)
    later = pd.concat([AFTER.head(1), AFTER.head(1).assign(cosine=0.2)], ignore_index=True)
    d = diff_runs(twice, later, 0.7, 0.7, n_resamples=99)
    assert d.n_matched == 2
    assert d.categories.loc[0, "mean_change"] == pytest.approx(np.mean([0.72 - 0.60, 0.2 - 0.1]))


def test_no_shared_pair_gives_empty_tables_and_bad_input_is_refused():
    d = diff_runs(BEFORE[BEFORE.model == "old"], AFTER[AFTER.model == "new"], 0.7, 0.7)
    assert d.categories.empty and d.crossed.empty and d.n_matched == 0
    with pytest.raises(ValueError, match="lacks columns"):
        diff_runs(BEFORE.drop(columns="cosine"), AFTER)


def test_run_overview_by_hand():
    out = run_overview(BEFORE, {"m": 0.7}).set_index(["model", "category"])
    assert out.loc[("m", "negation"), "n"] == 4
    assert out.loc[("m", "negation"), "mean_cosine"] == pytest.approx(0.725)
    assert out.loc[("m", "negation"), "share_above"] == 0.5
    assert out.loc[("old", "negation"), "threshold"] == 0.7  # the default for a model without its own
    assert run_overview(BEFORE.iloc[0:0], {}).empty


def test_runs_of_the_same_pairs_under_other_names_match_by_content():
    texts = {"model": "m", "text_a": ["a", "b", "a"], "text_b": ["x", "y", "x"], "category": "negation"}
    cli_run = pd.DataFrame({**texts, "suite": "mine", "pair_id": ["mine-1", "mine-2", "mine-3"], "cosine": [0.5, 0.6, 0.7]})
    page_run = pd.DataFrame({**texts, "suite": "uploaded", "pair_id": ["1", "2", "3"], "cosine": [0.8, 0.6, 0.75]})
    assert diff_runs(cli_run, page_run).n_matched == 0  # by name nothing matches
    got = diff_runs(cli_run, page_run, 0.7, 0.7, by_content=True)
    assert (got.n_matched, got.n_only_before, got.n_only_after) == (3, 0, 0)
    [row] = got.categories.to_dict("records")
    assert row["mean_change"] == pytest.approx((0.3 + 0.0 + 0.05) / 3)
    # The repeated pair (a, x) is matched in order: 0.5 -> 0.8 crosses, 0.7 -> 0.75 crosses too (0.7 is not above 0.7).
    assert sorted(got.crossed["pair_id"]) == ["1", "3"] and set(got.crossed["suite"]) == {"uploaded"}
