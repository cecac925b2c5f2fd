"""core.reproduce: published cells matched to recomputed ones, on a hand-made results table."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from core import constants as C
from core import reference as R
from core import reproduce as P

MINILM = R.MODEL_MINILM
BGE = R.MODEL_BGE
EXTRA = "acme/tiny-embedder"  # a model neither paper tested
PENICILLIN = ("The patient is allergic to penicillin", "The patient is not allergic to penicillin")


def _rows(model: str, suite: str, category: str, cosines, **extra) -> list[dict]:
    return [
        {C.COL_MODEL: model, C.COL_SUITE: suite, C.COL_CATEGORY: category, C.COL_PAIR_ID: f"{suite}-{category}-{i}", C.COL_TEXT_A: f"{category} a{i}", C.COL_TEXT_B: f"{category} b{i}", C.COL_COSINE: c, C.COL_TOKEN_JACCARD: 0.5, **extra}
        for i, c in enumerate(cosines)
    ]


def _oov(model: str, entity: str, replacement: str, original: float, both: float, second: float) -> list[dict]:
    out = []
    for variant, cos in ((C.VARIANT_ORIGINAL, original), (C.VARIANT_REPLACED_BOTH, both), (C.VARIANT_REPLACED_B, second)):
        out.append(
            {C.COL_MODEL: model, C.COL_SUITE: C.SUITE_OOV, C.COL_CATEGORY: C.CAT_OOV, C.COL_PAIR_ID: f"oov-{entity}", C.COL_TEXT_A: f"{entity} {variant} a", C.COL_TEXT_B: f"{entity} {variant} b", C.COL_COSINE: cos, C.COL_ENTITY: entity, C.COL_REPLACEMENT: replacement, C.COL_VARIANT: variant, C.COL_TOKEN_JACCARD: 0.5}
        )
    return out


@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    rows: list[dict] = []
    for model in (EXTRA, MINILM):  # the extra model first: orientation must follow the paper, not result order
        # failure-modes suite: positives mean 0.8, sample SD 0.1
        rows += _rows(model, C.SUITE_FAILURE_MODES, C.CAT_POSITIVE, [0.8, 0.7, 0.9])
        rows += _rows(model, C.SUITE_FAILURE_MODES, C.CAT_NEGATION, [0.9, 0.95])
        rows.append({**_rows(model, C.SUITE_FAILURE_MODES, C.CAT_NEGATION, [0.947])[0], C.COL_PAIR_ID: "neg-002", C.COL_TEXT_A: PENICILLIN[0], C.COL_TEXT_B: PENICILLIN[1]})
        # baseline: positive mean 0.7, negative mean 0.05 -> dynamic range 0.65
        rows += _rows(model, C.SUITE_BASELINE, C.CAT_POSITIVE, [0.8, 0.6])
        rows += _rows(model, C.SUITE_BASELINE, C.CAT_NEGATIVE, [0.1, 0.0])
        rows += _rows(model, C.SUITE_BASELINE, C.CAT_ENTITY_SWAP, [0.99, 0.97])
    # OOV: MiniLM deltas (both) = -0.1, -0.05; (second only) = 0.2, 0.3
    rows += _oov(MINILM, "Google", "Xylophrix", 0.8, 0.9, 0.6)
    rows += _oov(MINILM, "Microsoft", "Quarbitone", 0.7, 0.75, 0.4)
    # extra model: deltas (second only) = 0.1, 0.1
    rows += _oov(EXTRA, "Google", "Xylophrix", 0.8, 0.8, 0.7)
    rows += _oov(EXTRA, "Microsoft", "Quarbitone", 0.7, 0.7, 0.6)
    return pd.DataFrame(rows)


def _cell(frame: pd.DataFrame, **where) -> pd.Series:
    sel = frame
    for col, val in where.items():
        sel = sel[sel[col] == val]
    assert len(sel) == 1, f"expected one row for {where}, got {len(sel)}"
    return sel.iloc[0]


def test_failure_table1_minilm_positive(results):
    out = P.compare_to_published(results, R.PAPER_FAILURE, "Table 1")
    assert list(out.columns) == list(P.COMPARE_COLUMNS)
    mean = _cell(out, model=MINILM, category=C.CAT_POSITIVE, metric="mean_cosine")
    assert mean["published"] == pytest.approx(0.755)
    assert mean["recomputed"] == pytest.approx(0.8)
    assert mean["difference"] == pytest.approx(0.045)
    assert mean["differs"] and mean["status"] == P.STATUS_COMPARED
    sd = _cell(out, model=MINILM, category=C.CAT_POSITIVE, metric="sd_cosine")
    assert sd["recomputed"] == pytest.approx(0.1)
    assert sd["difference"] == pytest.approx(-0.002)
    assert not sd["differs"]


def test_tolerance_controls_differs(results):
    out = P.compare_to_published(results, R.PAPER_FAILURE, "Table 1", tolerance=0.05)
    assert not _cell(out, model=MINILM, category=C.CAT_POSITIVE, metric="mean_cosine")["differs"]


def test_models_not_run_are_published_only(results):
    out = P.compare_to_published(results, R.PAPER_FAILURE, "Table 1")
    bge = out[out["model"] == BGE]
    assert len(bge) == 18  # 9 categories x mean, SD
    assert set(bge["status"]) == {P.STATUS_NOT_RUN}
    assert bge["recomputed"].isna().all()
    assert _cell(out, model=BGE, category=C.CAT_POSITIVE, metric="mean_cosine")["published"] == pytest.approx(0.906)
    # a category the run lacks (temporal) is "not recomputed" for MiniLM, with a reason
    temporal = _cell(out, model=MINILM, category=C.CAT_TEMPORAL, metric="mean_cosine")
    assert temporal["status"] == P.STATUS_NOT_RECOMPUTED and temporal["remark"]


def test_extra_model_rows_are_recomputed_only(results):
    out = P.compare_to_published(results, R.PAPER_FAILURE, "Table 1")
    extra = out[out["model"] == EXTRA]
    assert set(extra["status"]) == {P.STATUS_EXTRA}
    assert extra["published"].isna().all()
    assert _cell(extra, category=C.CAT_POSITIVE, metric="mean_cosine")["recomputed"] == pytest.approx(0.8)
    # extra rows come after every published row
    assert out.index[out["status"] == P.STATUS_EXTRA].min() > out.index[out["status"] != P.STATUS_EXTRA].max()


def test_section_46_penicillin(results):
    out = P.compare_to_published(results, R.PAPER_FAILURE, P.SECTION_EXAMPLES)
    row = _cell(out, model=MINILM, item=P.example_item(*PENICILLIN))
    assert row["published"] == pytest.approx(0.92)
    assert row["recomputed"] == pytest.approx(0.947)
    assert row["difference"] == pytest.approx(0.027)
    assert row["differs"]
    # the other examples are not in this run
    other = out[(out["model"] == MINILM) & (out["item"] != P.example_item(*PENICILLIN))]
    assert other["recomputed"].isna().all() and set(other["status"]) == {P.STATUS_NOT_RECOMPUTED}


def test_oov_table4_both_readings(results):
    both = P.compare_to_published(results, R.PAPER_OOV, "Table 4", reading=C.VARIANT_REPLACED_BOTH)
    assert _cell(both, model=MINILM, metric="mean_delta")["recomputed"] == pytest.approx(-0.075)
    assert _cell(both, model=MINILM, metric="range_delta")["recomputed"] == pytest.approx(0.05)
    assert _cell(both, model=MINILM, metric="mean_delta")["published"] == pytest.approx(0.1234)
    assert "both sentences" in _cell(both, model=MINILM, metric="mean_delta")["remark"]
    second = P.compare_to_published(results, R.PAPER_OOV, "Table 4", reading=C.VARIANT_REPLACED_B)
    row = _cell(second, model=MINILM, metric="mean_delta")
    assert row["recomputed"] == pytest.approx(0.25)
    assert row["difference"] == pytest.approx(0.25 - 0.1234)
    assert "second sentence only" in row["remark"]


def test_oov_table5_dynamic_range(results):
    out = P.compare_to_published(results, R.PAPER_OOV, "Table 5", reading=C.VARIANT_REPLACED_B)
    assert _cell(out, model=MINILM, metric="mean_positive")["recomputed"] == pytest.approx(0.7)
    assert _cell(out, model=MINILM, metric="mean_negative")["recomputed"] == pytest.approx(0.05)
    assert _cell(out, model=MINILM, metric="dynamic_range")["recomputed"] == pytest.approx(0.65)
    assert _cell(out, model=MINILM, metric="normalized_mean_delta")["recomputed"] == pytest.approx(0.25 / 0.65)
    # the reading does not concern the controls
    assert _cell(out, model=MINILM, metric="dynamic_range")["remark"] == ""


def test_oov_table7_orientation_and_extra_pairs(results):
    both_run = pd.concat([results, results[results[C.COL_MODEL] == MINILM].assign(model=BGE)], ignore_index=True)
    # BGE deltas (second only) must differ from MiniLM's: make them 0.1, 0.1
    mask = (both_run[C.COL_MODEL] == BGE) & (both_run[C.COL_VARIANT] == C.VARIANT_REPLACED_B)
    both_run.loc[mask, C.COL_COSINE] = both_run.loc[mask, C.COL_ENTITY].map({"Google": 0.7, "Microsoft": 0.6})
    out = P.compare_to_published(both_run, R.PAPER_OOV, "Table 7", reading=C.VARIANT_REPLACED_B)
    row = _cell(out, model=MINILM, model_b=BGE, metric="cohens_d")
    # x = [0.2, 0.3], y = [0.1, 0.1]: pooled SD = sqrt(0.005 / 2) = 0.05, d = 0.15 / 0.05
    assert row["recomputed"] == pytest.approx(3.0)
    assert row["published"] == pytest.approx(1.450)
    assert row["status"] == P.STATUS_COMPARED
    # pairs with a model the paper did not test are recomputed-only
    extra = out[out["status"] == P.STATUS_EXTRA]
    assert {frozenset((a, b)) for a, b in zip(extra["model"], extra["model_b"], strict=True)} == {frozenset((EXTRA, MINILM)), frozenset((EXTRA, BGE))}
    # a pair with an unrun model stays published
    assert _cell(out, model=MINILM, model_b=R.MODEL_GTE, metric="cohens_d")["status"] == P.STATUS_NOT_RUN


def test_one_model_needs_two_for_rankings(results):
    minilm_only = results[results[C.COL_MODEL] == MINILM]
    out = P.compare_to_published(minilm_only, R.PAPER_FAILURE, "Appendix A")
    assert set(out["status"]) == {P.STATUS_NOT_RECOMPUTED}
    assert set(out["remark"]) == {"needs at least two models run"}


def test_empty_results_are_all_published():
    out = P.compare_to_published(pd.DataFrame(), R.PAPER_OOV, "Table 12")
    assert len(out) == 32
    assert out["recomputed"].isna().all()
    assert not out["differs"].any()


def test_table10_token_counts_source(results):
    table2 = P.compare_to_published(results, R.PAPER_OOV, "Table 10", reading=C.VARIANT_REPLACED_B)
    # Table 2: Google and Microsoft are single-token, so the multi-token group is empty
    assert _cell(table2, model=MINILM, metric="single_token_mean_delta")["recomputed"] == pytest.approx(0.25)
    assert math.isnan(_cell(table2, model=MINILM, metric="multi_token_mean_delta")["recomputed"])
    assert "Table 2" in _cell(table2, model=MINILM, metric="single_token_mean_delta")["remark"]
    mine = P.compare_to_published(results, R.PAPER_OOV, "Table 10", reading=C.VARIANT_REPLACED_B, token_counts={"Google": 1, "Microsoft": 2})
    assert _cell(mine, model=MINILM, metric="multi_token_mean_delta")["recomputed"] == pytest.approx(0.3)


def test_unknown_table_and_reading(results):
    with pytest.raises(ValueError, match="unknown table"):
        P.compare_to_published(results, R.PAPER_OOV, "Table 99")
    with pytest.raises(ValueError, match="reading"):
        P.compare_to_published(results, R.PAPER_OOV, "Table 4", reading="original")


def test_comparison_counts(results):
    out = P.compare_to_published(results, R.PAPER_FAILURE, P.SECTION_EXAMPLES)
    counts = P.comparison_counts(out)
    assert counts[P.STATUS_COMPARED] == 1
    assert counts[P.STATUS_NOT_RUN] == 24
    assert counts["differs"] == 1


def test_published_alongside():
    ours = pd.DataFrame({C.COL_MODEL: [MINILM, EXTRA], "mean_delta": [0.2, 0.1], "sd_delta": [0.05, 0.02]})
    out = P.published_alongside(ours, R.PAPER_OOV, {"mean_delta": ("Table 4", "mean_delta")})
    assert list(out.columns) == [C.COL_MODEL, "source", "mean_delta", "mean_delta (published)", "sd_delta"]
    minilm = _cell(out, model=MINILM)
    assert minilm["source"] == "recomputed" and minilm["mean_delta (published)"] == pytest.approx(0.1234)
    assert math.isnan(_cell(out, model=EXTRA)["mean_delta (published)"])
    published = out[out["source"] == P.STATUS_NOT_RUN]
    assert list(published[C.COL_MODEL]) == [BGE, R.MODEL_NOMIC, R.MODEL_GTE]  # the paper's order
    assert published["mean_delta"].isna().all()
    assert _cell(out, model=R.MODEL_GTE)["mean_delta (published)"] == pytest.approx(0.0355)


def test_published_alongside_with_category_key():
    ours = pd.DataFrame({C.COL_MODEL: [MINILM], C.COL_CATEGORY: [C.CAT_NEGATIVE], "mean": [0.02]})
    out = P.published_alongside(ours, R.PAPER_OOV, {"mean": ("Table 12", "mean_cosine")}, keys=(C.COL_MODEL, C.COL_CATEGORY))
    assert _cell(out, model=MINILM)["mean (published)"] == pytest.approx(0.015)
    assert len(out) == 1 + 3 * 8  # our row + the other three models' eight categories


def test_table2_token_counts():
    counts = P.table2_token_counts()
    assert counts["Bitcoin"] == 3 and counts["Google"] == 1 and counts["Xylophrix"] == 5
