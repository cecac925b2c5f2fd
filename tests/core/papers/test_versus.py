"""core.papers.versus: the failure paper's per-mode figures beside ours, checked against a hand computation."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from paper_results_support import pair_rows

from core import constants
from core.papers import reference
from core.papers.versus import FAILURE_MODE_TABLES, VERSUS_COLUMNS, published_vs_ours

MINILM = reference.MODEL_MINILM
EXTRA = "acme/tiny-embedder"  # a model the paper did not test
FAILURE = constants.SUITE_FAILURE_MODES
NEGATION = [0.65, 0.72, 0.81, 0.70]  # one exactly at 0.70: not above it
POSITIVE = [0.9, 0.6]


@pytest.fixture(scope="module")
def versus() -> pd.DataFrame:
    results = pd.DataFrame(
        pair_rows(MINILM, FAILURE, constants.CAT_NEGATION, NEGATION)
        + pair_rows(MINILM, FAILURE, constants.CAT_POSITIVE, POSITIVE)
        + pair_rows(EXTRA, FAILURE, constants.CAT_NEGATION, [0.99, 0.98])
        + pair_rows(MINILM, constants.SUITE_BASELINE, constants.CAT_NEGATION, [0.0, 0.0])  # another suite: not read
    )
    return published_vs_ours(results)


def _cell(frame: pd.DataFrame, table: str, category: str, metric: str, model: str = MINILM) -> pd.Series:
    rows = frame[(frame["table"] == table) & (frame["model"] == model) & (frame["category"] == category) & (frame["metric"] == metric)]
    assert len(rows) == 1, rows
    return rows.iloc[0]


def test_ours_is_the_hand_computed_figure_beside_the_published_one(versus):
    assert list(versus.columns) == list(VERSUS_COLUMNS)
    mean = sum(NEGATION) / 4  # 0.72
    sd = math.sqrt(sum((c - mean) ** 2 for c in NEGATION) / 3)  # sample SD
    cell = _cell(versus, "Table 1", constants.CAT_NEGATION, "mean_cosine")
    assert cell["published"] == pytest.approx(0.898) and cell["ours"] == pytest.approx(0.72)  # failure paper, Table 1
    assert _cell(versus, "Table 1", constants.CAT_NEGATION, "sd_cosine")["ours"] == pytest.approx(sd)
    at_07 = _cell(versus, "Table 2", constants.CAT_NEGATION, "failure_rate")
    assert at_07["threshold"] == pytest.approx(0.7) and at_07["ours"] == pytest.approx(2 / 4)  # 0.72, 0.81; 0.70 is not above
    at_08 = _cell(versus, "Appendix B", constants.CAT_NEGATION, "failure_rate")
    assert at_08["threshold"] == pytest.approx(0.8) and at_08["ours"] == pytest.approx(1 / 4)
    assert math.isnan(_cell(versus, "Table 1", constants.CAT_NEGATION, "mean_cosine")["threshold"])
    assert _cell(versus, "Table 1", constants.CAT_POSITIVE, "mean_cosine")["ours"] == pytest.approx(0.75)


def test_every_published_cell_once_tables_in_order_and_no_row_for_models_the_paper_did_not_test(versus):
    assert list(dict.fromkeys(versus["table"])) == list(FAILURE_MODE_TABLES)
    assert EXTRA not in set(versus["model"]) and "" not in set(versus["model"])
    published = reference.load_reference(reference.PAPER_FAILURE)
    published = published[published["table"].isin(FAILURE_MODE_TABLES) & (published["model"] != "")]
    assert len(versus) == len(published)
    # A model the paper tested but this run did not: the paper's value, no figure of ours, and the status says why.
    bge = versus[versus["model"] == reference.MODEL_BGE]
    assert not bge.empty and bge["ours"].isna().all() and bge["published"].notna().any()
    assert set(bge["status"]) == {"published (model not run here)"}


def test_no_run_gives_the_published_cells_only_and_a_bad_table_is_refused():
    empty = published_vs_ours(pd.DataFrame(columns=list(constants.RESULT_COLUMNS)))
    assert not empty.empty and empty["ours"].isna().all()
    with pytest.raises(ValueError, match="Table 99"):
        published_vs_ours(pd.DataFrame(), tables=("Table 1", "Table 99"))
    with pytest.raises(ValueError, match="at least one"):
        published_vs_ours(pd.DataFrame(), tables=())
