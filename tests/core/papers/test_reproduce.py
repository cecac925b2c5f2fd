"""core.reproduce: published cells matched to recomputed ones, on a hand-made results table."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from paper_results_support import EXTRA, PENICILLIN, hand_results

from core import constants
from core.papers import reference, reproduce

MINILM = reference.MODEL_MINILM
BGE = reference.MODEL_BGE


@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    return hand_results()


def _cell(frame: pd.DataFrame, **where) -> pd.Series:
    sel = frame
    for col, val in where.items():
        sel = sel[sel[col] == val]
    assert len(sel) == 1, f"expected one row for {where}, got {len(sel)}"
    return sel.iloc[0]


def test_failure_table1_minilm_positive(results):
    out = reproduce.compare_to_published(results, reference.PAPER_FAILURE, "Table 1")
    assert list(out.columns) == list(reproduce.REPRODUCTION_COLUMNS)
    mean = _cell(out, model=MINILM, category=constants.CAT_POSITIVE, metric="mean_cosine")
    assert mean["published"] == pytest.approx(0.755)
    assert mean["recomputed"] == pytest.approx(0.8)
    assert mean["difference"] == pytest.approx(0.045)
    assert mean["differs"] and mean["status"] == reproduce.STATUS_COMPARED
    sd = _cell(out, model=MINILM, category=constants.CAT_POSITIVE, metric="sd_cosine")
    assert sd["recomputed"] == pytest.approx(0.1)
    assert sd["difference"] == pytest.approx(-0.002)
    assert not sd["differs"]


def test_tolerance_controls_differs(results):
    out = reproduce.compare_to_published(results, reference.PAPER_FAILURE, "Table 1", tolerance=0.05)
    assert not _cell(out, model=MINILM, category=constants.CAT_POSITIVE, metric="mean_cosine")["differs"]


def test_models_not_run_are_published_only(results):
    out = reproduce.compare_to_published(results, reference.PAPER_FAILURE, "Table 1")
    bge = out[out["model"] == BGE]
    assert len(bge) == 18  # 9 categories x mean, SD
    assert set(bge["status"]) == {reproduce.STATUS_NOT_RUN}
    assert bge["recomputed"].isna().all()
    assert _cell(out, model=BGE, category=constants.CAT_POSITIVE, metric="mean_cosine")["published"] == pytest.approx(0.906)
    # a category the run lacks (temporal) is "not recomputed" for MiniLM, with a reason
    temporal = _cell(out, model=MINILM, category=constants.CAT_TEMPORAL, metric="mean_cosine")
    assert temporal["status"] == reproduce.STATUS_NOT_RECOMPUTED and temporal["remark"]


def test_extra_model_rows_are_recomputed_only(results):
    out = reproduce.compare_to_published(results, reference.PAPER_FAILURE, "Table 1")
    extra = out[out["model"] == EXTRA]
    assert set(extra["status"]) == {reproduce.STATUS_EXTRA}
    assert extra["published"].isna().all()
    assert _cell(extra, category=constants.CAT_POSITIVE, metric="mean_cosine")["recomputed"] == pytest.approx(0.8)
    # extra rows come after every published row
    assert out.index[out["status"] == reproduce.STATUS_EXTRA].min() > out.index[out["status"] != reproduce.STATUS_EXTRA].max()


def test_section_46_penicillin(results):
    out = reproduce.compare_to_published(results, reference.PAPER_FAILURE, reproduce.SECTION_EXAMPLES)
    row = _cell(out, model=MINILM, item=reproduce.example_item(*PENICILLIN))
    assert row["published"] == pytest.approx(0.92)
    assert row["recomputed"] == pytest.approx(0.947)
    assert row["difference"] == pytest.approx(0.027)
    assert row["differs"]
    # the other examples are not in this run
    other = out[(out["model"] == MINILM) & (out["item"] != reproduce.example_item(*PENICILLIN))]
    assert other["recomputed"].isna().all() and set(other["status"]) == {reproduce.STATUS_NOT_RECOMPUTED}


def test_oov_table4_both_readings(results):
    both = reproduce.compare_to_published(results, reference.PAPER_OOV, "Table 4", reading=constants.VARIANT_REPLACED_BOTH)
    assert _cell(both, model=MINILM, metric="mean_delta")["recomputed"] == pytest.approx(-0.075)
    assert _cell(both, model=MINILM, metric="range_delta")["recomputed"] == pytest.approx(0.05)
    assert _cell(both, model=MINILM, metric="mean_delta")["published"] == pytest.approx(0.1234)
    assert "both sentences" in _cell(both, model=MINILM, metric="mean_delta")["remark"]
    second = reproduce.compare_to_published(results, reference.PAPER_OOV, "Table 4", reading=constants.VARIANT_REPLACED_B)
    row = _cell(second, model=MINILM, metric="mean_delta")
    assert row["recomputed"] == pytest.approx(0.25)
    assert row["difference"] == pytest.approx(0.25 - 0.1234)
    assert "second sentence only" in row["remark"]


def test_oov_table5_dynamic_range(results):
    out = reproduce.compare_to_published(results, reference.PAPER_OOV, "Table 5", reading=constants.VARIANT_REPLACED_B)
    assert _cell(out, model=MINILM, metric="mean_positive")["recomputed"] == pytest.approx(0.7)
    assert _cell(out, model=MINILM, metric="mean_negative")["recomputed"] == pytest.approx(0.05)
    assert _cell(out, model=MINILM, metric="dynamic_range")["recomputed"] == pytest.approx(0.65)
    assert _cell(out, model=MINILM, metric="normalized_mean_delta")["recomputed"] == pytest.approx(0.25 / 0.65)
    # the reading does not concern the controls
    assert _cell(out, model=MINILM, metric="dynamic_range")["remark"] == ""


def test_oov_table7_orientation_and_extra_pairs(results):
    both_run = pd.concat([results, results[results[constants.COL_MODEL] == MINILM].assign(model=BGE)], ignore_index=True)
    # BGE deltas (second only) must differ from MiniLM's: make them 0.1, 0.1
    mask = (both_run[constants.COL_MODEL] == BGE) & (both_run[constants.COL_VARIANT] == constants.VARIANT_REPLACED_B)
    both_run.loc[mask, constants.COL_COSINE] = both_run.loc[mask, constants.COL_ENTITY].map({"Google": 0.7, "Microsoft": 0.6})
    out = reproduce.compare_to_published(both_run, reference.PAPER_OOV, "Table 7", reading=constants.VARIANT_REPLACED_B)
    row = _cell(out, model=MINILM, model_b=BGE, metric="cohens_d")
    # x = [0.2, 0.3], y = [0.1, 0.1]: pooled SD = sqrt(0.005 / 2) = 0.05, d = 0.15 / 0.05
    assert row["recomputed"] == pytest.approx(3.0)
    assert row["published"] == pytest.approx(1.450)
    assert row["status"] == reproduce.STATUS_COMPARED
    # pairs with a model the paper did not test are recomputed-only
    extra = out[out["status"] == reproduce.STATUS_EXTRA]
    assert {frozenset((a, b)) for a, b in zip(extra["model"], extra["model_b"], strict=True)} == {
        frozenset((EXTRA, MINILM)),
        frozenset((EXTRA, BGE)),
    }
    # a pair with an unrun model stays published
    assert _cell(out, model=MINILM, model_b=reference.MODEL_GTE, metric="cohens_d")["status"] == reproduce.STATUS_NOT_RUN


def test_one_model_needs_two_for_rankings(results):
    minilm_only = results[results[constants.COL_MODEL] == MINILM]
    out = reproduce.compare_to_published(minilm_only, reference.PAPER_FAILURE, "Appendix A")
    assert set(out["status"]) == {reproduce.STATUS_NOT_RECOMPUTED}
    assert set(out["remark"]) == {"needs at least two models run"}


def test_empty_results_are_all_published():
    out = reproduce.compare_to_published(pd.DataFrame(), reference.PAPER_OOV, "Table 12")
    assert len(out) == 32
    assert out["recomputed"].isna().all()
    assert not out["differs"].any()


def test_table10_token_counts_source(results):
    table2 = reproduce.compare_to_published(results, reference.PAPER_OOV, "Table 10", reading=constants.VARIANT_REPLACED_B)
    # Table 2: Google and Microsoft are single-token, so the multi-token group is empty
    assert _cell(table2, model=MINILM, metric="single_token_mean_delta")["recomputed"] == pytest.approx(0.25)
    assert math.isnan(_cell(table2, model=MINILM, metric="multi_token_mean_delta")["recomputed"])
    assert "Table 2" in _cell(table2, model=MINILM, metric="single_token_mean_delta")["remark"]
    mine = reproduce.compare_to_published(
        results, reference.PAPER_OOV, "Table 10", reading=constants.VARIANT_REPLACED_B, token_counts={"Google": 1, "Microsoft": 2}
    )
    assert _cell(mine, model=MINILM, metric="multi_token_mean_delta")["recomputed"] == pytest.approx(0.3)


def test_unknown_table_and_reading(results):
    with pytest.raises(ValueError, match="unknown table"):
        reproduce.compare_to_published(results, reference.PAPER_OOV, "Table 99")
    with pytest.raises(ValueError, match="reading"):
        reproduce.compare_to_published(results, reference.PAPER_OOV, "Table 4", reading="original")


def test_comparison_counts(results):
    out = reproduce.compare_to_published(results, reference.PAPER_FAILURE, reproduce.SECTION_EXAMPLES)
    counts = reproduce.comparison_counts(out)
    assert counts[reproduce.STATUS_COMPARED] == 1
    assert counts[reproduce.STATUS_NOT_RUN] == 24
    assert counts["differs"] == 1


def test_published_alongside():
    ours = pd.DataFrame({constants.COL_MODEL: [MINILM, EXTRA], "mean_delta": [0.2, 0.1], "sd_delta": [0.05, 0.02]})
    out = reproduce.published_alongside(ours, reference.PAPER_OOV, {"mean_delta": ("Table 4", "mean_delta")})
    assert list(out.columns) == [constants.COL_MODEL, "source", "mean_delta", "mean_delta (published)", "sd_delta"]
    minilm = _cell(out, model=MINILM)
    assert minilm["source"] == "recomputed" and minilm["mean_delta (published)"] == pytest.approx(0.1234)
    assert math.isnan(_cell(out, model=EXTRA)["mean_delta (published)"])
    published = out[out["source"] == reproduce.STATUS_NOT_RUN]
    assert list(published[constants.COL_MODEL]) == [BGE, reference.MODEL_NOMIC, reference.MODEL_GTE]  # the paper's order
    assert published["mean_delta"].isna().all()
    assert _cell(out, model=reference.MODEL_GTE)["mean_delta (published)"] == pytest.approx(0.0355)


def test_published_alongside_with_category_key():
    ours = pd.DataFrame({constants.COL_MODEL: [MINILM], constants.COL_CATEGORY: [constants.CAT_NEGATIVE], "mean": [0.02]})
    out = reproduce.published_alongside(
        ours, reference.PAPER_OOV, {"mean": ("Table 12", "mean_cosine")}, keys=(constants.COL_MODEL, constants.COL_CATEGORY)
    )
    assert _cell(out, model=MINILM)["mean (published)"] == pytest.approx(0.015)
    assert len(out) == 1 + 3 * 8  # our row + the other three models' eight categories


def test_table2_token_counts():
    counts = reproduce.table2_token_counts()
    assert counts["Bitcoin"] == 3 and counts["Google"] == 1 and counts["Xylophrix"] == 5
