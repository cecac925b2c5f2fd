"""Worst cases of a retrieval run: filters, search and order, on tables built by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from core import constants
from core.probes.retrieval.worst import worst_corpus_pairs, worst_variants


def _score(model, mitigation, gid, mode, variant, para_score, var_score):
    return {
        constants.COL_MODEL: model,
        constants.COL_MITIGATION: mitigation,
        constants.COL_GROUP_ID: gid,
        constants.COL_MODE: mode,
        constants.COL_ANCHOR: f"anchor {gid}",
        constants.COL_PARAPHRASE: f"paraphrase {gid}",
        constants.COL_VARIANT: variant,
        "margin": var_score - para_score if math.isfinite(var_score) and math.isfinite(para_score) else math.nan,
        constants.COL_WIN: var_score > para_score,
    }


@pytest.fixture
def scores() -> pd.DataFrame:
    return pd.DataFrame(
        [
            # Scores in eighths, so the margins are exact and g1's and g3's tie exactly.
            _score("m", "none", "g1", "negation", "Not A", 0.5, 0.75),  # margin +0.25
            _score("m", "none", "g1", "numerical", "A 50", 0.5, 0.25),  # -0.25
            _score("m", "none", "g2", "negation", "Never B", 0.375, 0.875),  # +0.5
            _score("m", "none", "g3", "hedging", "Maybe C", 0.25, 0.5),  # +0.25, ties g1
            _score("m", "guard", "g2", "negation", "Never B", 0.60, 0.40),
            _score("m", "calibrated", "g2", "negation", "Never B", 0.60, -math.inf),
            _score("m", "calibrated", "g1", "negation", "Not A", 0.80, 0.90),
            _score("other", "none", "g1", "negation", "Not A", 0.10, 0.99),
        ]
    )


def test_worst_first_then_group(scores):
    rows = worst_variants(scores, "m")
    assert list(rows[constants.COL_VARIANT]) == ["Never B", "Not A", "Maybe C", "A 50"]
    assert list(rows["margin"]) == [0.5, 0.25, 0.25, -0.25]


def test_filters_and_search(scores):
    assert list(worst_variants(scores, "m", modes=["negation"])[constants.COL_VARIANT]) == ["Never B", "Not A"]
    assert list(worst_variants(scores, "m", search="never")[constants.COL_VARIANT]) == ["Never B"]  # case-insensitive, variant text
    assert list(worst_variants(scores, "m", search="ANCHOR G3")[constants.COL_VARIANT]) == ["Maybe C"]  # anchor text
    assert list(worst_variants(scores, "m", search="(")[constants.COL_VARIANT]) == []  # literal, not a regex
    assert list(worst_variants(scores, "m", "guard")[constants.COL_VARIANT]) == ["Never B"]


def test_an_undefined_margin_sorts_last(scores):
    rows = worst_variants(scores, "m", "calibrated")
    assert list(rows[constants.COL_VARIANT]) == ["Not A", "Never B"]
    assert math.isnan(rows["margin"].iloc[1])


def test_worst_variants_needs_its_columns(scores):
    with pytest.raises(ValueError, match="margin"):
        worst_variants(scores.drop(columns=["margin"]), "m")


def _pair(mitigation, query, variant, original_score, variant_score):
    return {
        constants.COL_MODEL: "m",
        constants.COL_MITIGATION: mitigation,
        constants.COL_QUERY: query,
        "original": f"top of {query}",
        constants.COL_MODE: "negation",
        constants.COL_VARIANT: variant,
        "score_original": original_score,
        "score_variant": variant_score,
    }


def test_worst_corpus_pairs_by_hand():
    pairs = pd.DataFrame(
        [
            _pair("none", "q1", "v1", 0.70, 0.65),
            _pair("none", "q2", "v2", 0.50, 0.62),
            _pair("none", "q3", "v3", -math.inf, 0.30),
            _pair("guard", "q2", "v2", 0.50, 0.42),
        ]
    )
    rows = worst_corpus_pairs(pairs, "m")
    assert list(rows[constants.COL_VARIANT]) == ["v2", "v1", "v3"]
    assert rows["margin"].iloc[:2].tolist() == pytest.approx([0.12, -0.05])
    assert math.isnan(rows["margin"].iloc[2])
    assert list(worst_corpus_pairs(pairs, "m", search="TOP OF Q1")[constants.COL_VARIANT]) == ["v1"]
    assert worst_corpus_pairs(pairs, "m", "guard")["margin"].tolist() == pytest.approx([-0.08])
    with pytest.raises(ValueError, match="score_variant"):
        worst_corpus_pairs(pairs.drop(columns=["score_variant"]), "m")
