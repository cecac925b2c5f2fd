"""Compare's third box: which of sentence B and the passage that should win ranks first, checked by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from core import constants
from core.probes.retrieval.should_win import COLUMNS, rank_two_passages, should_win_table

A = "The patient is allergic to penicillin"
B = "The patient is not allergic to penicillin"
C = "The patient has a penicillin allergy"


@pytest.mark.parametrize(
    ("cos_b", "cos_c", "first", "verdict"),
    [
        (0.92, 0.81, constants.RANKED_B, constants.VERDICT_CONTRADICTION_WINS),
        (0.40, 0.75, constants.RANKED_SHOULD_WIN, constants.VERDICT_RIGHT_PASSAGE_WINS),
        (0.5, 0.5, constants.RANKED_TIE, constants.VERDICT_TIE),
        (-0.2, -0.3, constants.RANKED_B, constants.VERDICT_CONTRADICTION_WINS),
        (1.00004, 0.99, constants.RANKED_B, constants.VERDICT_CONTRADICTION_WINS),  # float32 overshoot of 1 is still a cosine
    ],
)
def test_rank_two_passages_by_hand(cos_b, cos_c, first, verdict):
    r = rank_two_passages(cos_b, cos_c)
    assert (r.ranked_first, r.verdict) == (first, verdict)
    assert r.margin == pytest.approx(cos_b - cos_c, abs=1e-12)
    assert (r.cosine_b, r.cosine_should_win) == (cos_b, cos_c)


@pytest.mark.parametrize("bad", [math.nan, math.inf, 1.5, -1.01, "high", None])
def test_rank_two_passages_refuses_what_is_not_a_cosine(bad):
    with pytest.raises(ValueError, match="cosine_b"):
        rank_two_passages(bad, 0.5)
    with pytest.raises(ValueError, match="cosine_should_win"):
        rank_two_passages(0.5, bad)


def _rows(model: str, cos_b: float, cos_c: float, query: str = A) -> list[dict]:
    return [
        {constants.COL_MODEL: model, constants.COL_TEXT_A: query, constants.COL_TEXT_B: B, constants.COL_COSINE: cos_b},
        {constants.COL_MODEL: model, constants.COL_TEXT_A: query, constants.COL_TEXT_B: C, constants.COL_COSINE: cos_c},
    ]


def test_table_one_row_per_model_in_order():
    results = pd.DataFrame([*_rows("m2", 0.3, 0.8), *_rows("m1", 0.9, 0.7), *_rows("other-query", 0.9, 0.1, query="Something else")])
    table = should_win_table(results, A, B, C)
    assert list(table.columns) == COLUMNS
    assert list(table[constants.COL_MODEL]) == ["m2", "m1"]  # order of appearance; another query's rows are not read
    m2, m1 = table.to_dict("records")
    assert (m2[constants.COL_RANKED_FIRST], m2["verdict"], m2["margin"]) == (
        constants.RANKED_SHOULD_WIN,
        constants.VERDICT_RIGHT_PASSAGE_WINS,
        pytest.approx(0.3 - 0.8),
    )
    assert (m1[constants.COL_RANKED_FIRST], m1["verdict"], m1["margin"]) == (
        constants.RANKED_B,
        constants.VERDICT_CONTRADICTION_WINS,
        pytest.approx(0.9 - 0.7),
    )
    assert (m1[constants.COL_COSINE_B], m1[constants.COL_COSINE_SHOULD_WIN]) == (0.9, 0.7)


def test_a_model_missing_one_pair_is_left_out():
    results = pd.DataFrame([*_rows("both", 0.5, 0.6), _rows("half", 0.5, 0.6)[0]])
    assert list(should_win_table(results, A, B, C)[constants.COL_MODEL]) == ["both"]


def test_the_same_text_twice_ties():
    results = pd.DataFrame([{constants.COL_MODEL: "m", constants.COL_TEXT_A: A, constants.COL_TEXT_B: B, constants.COL_COSINE: 0.9}] * 2)
    row = should_win_table(results, A, B, B).iloc[0]
    assert (row["verdict"], row["margin"]) == (constants.VERDICT_TIE, 0.0)


def test_table_needs_its_columns():
    with pytest.raises(ValueError, match="cosine"):
        should_win_table(pd.DataFrame({constants.COL_MODEL: [], constants.COL_TEXT_A: [], constants.COL_TEXT_B: []}), A, B, C)
