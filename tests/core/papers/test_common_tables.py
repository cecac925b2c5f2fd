"""Every published table's record (``reproduce.PAPER_TABLES``) through the same checks, as scikit-learn's test_common."""

from __future__ import annotations

import pandas as pd
import pytest
from paper_results_support import MINILM, hand_results

from core import constants
from core.papers import reference, reproduce

RECORDS = reproduce.PAPER_TABLES
IDS = [f"{t.paper}-{t.name}" for t in RECORDS]
PUBLISHED_ONLY = {reproduce.STATUS_NOT_RUN, reproduce.STATUS_NOT_RECOMPUTED}


@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    return hand_results()


def test_every_published_table_has_one_record():
    named = [(t.paper, t.name) for t in RECORDS]
    assert len(named) == len(set(named))
    for paper in reference.PAPER_FILES:
        assert set(reference.published_tables(paper)) <= set(reproduce.TABLES[paper])
    assert set(reproduce.TABLES) == set(reference.PAPER_FILES)


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_the_record_names_its_paper_and_title(record):
    assert record.paper in reference.PAPER_FILES
    assert record.title.strip() and record.label == f"{record.name} — {record.title}"
    assert reproduce.table_title(record.paper, record.name) == record.label
    assert reproduce.paper_table(record.paper, record.name) is record
    assert record.suite in (None, *constants.SUITES)
    if record.threshold is not None:
        assert f"{record.threshold}" in record.title  # the title says the threshold the paper used


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_its_published_rows_are_its_own(record):
    rows = record.published(record.paper, record.name)
    assert len(rows) > 0
    assert set(rows["paper"]) == {record.paper} and set(rows["table"]) == {record.name}
    assert set(reproduce.KEYS) <= set(rows.columns)
    if record.threshold is not None:
        assert set(rows["threshold"].dropna()) == {record.threshold}


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_with_nothing_run_every_cell_is_published_only(record):
    out = reproduce.compare_to_published(pd.DataFrame(), record.paper, record.name)
    assert list(out.columns) == list(reproduce.REPRODUCTION_COLUMNS)
    assert len(out) == len(record.published(record.paper, record.name))
    assert set(out["status"]) <= PUBLISHED_ONLY
    assert out["recomputed"].isna().all() and not out["differs"].any()


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_a_run_fills_cells_or_says_why_not(record, results):
    out = reproduce.compare_to_published(results, record.paper, record.name, reading=constants.VARIANT_REPLACED_B)
    assert list(out.columns) == list(reproduce.REPRODUCTION_COLUMNS)
    assert (out["table"] == record.name).all()
    compared = out[out["status"] == reproduce.STATUS_COMPARED]
    assert (compared["recomputed"].notna() | compared["recomputed_text"].ne("")).all()
    unrecomputed = out[out["status"] == reproduce.STATUS_NOT_RECOMPUTED]
    assert unrecomputed["remark"].str.len().gt(0).all(), "a cell left published only says why"
    if record.oov_deltas and len(compared):
        oov_rows = compared[compared["category"] == constants.CAT_OOV]
        assert oov_rows["remark"].str.contains(constants.OOV_READINGS[constants.VARIANT_REPLACED_B], regex=False).all()
    if record.needs_two_models:
        one = reproduce.compare_to_published(results[results[constants.COL_MODEL] == MINILM], record.paper, record.name)
        assert reproduce.STATUS_COMPARED not in set(one["status"])
        waiting = one[one["status"] == reproduce.STATUS_NOT_RECOMPUTED]
        assert set(waiting["remark"]) <= {"needs at least two models run"}


def test_an_unknown_table_names_the_papers_tables():
    with pytest.raises(ValueError, match="Table 12"):
        reproduce.paper_table(reference.PAPER_OOV, "Table 99")
