"""The OOV robustness page, driven through the real app with MiniLM.

One AppTest session runs the OOV + baseline suites once; the tests then read
the tables the page shows and compare them with ``core.analysis`` applied to
``core.runner.run_pairs`` output for the same pairs.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from apptest_support import show_tab
from streamlit.testing.v1 import AppTest

from core import constants
from core.models.cache import EmbeddingCache
from core.models.registry import short_name
from core.papers import oov, reference, reproduce
from core.papers.suites import load_suite
from core.scoring import tables
from core.scoring.runner import run_pairs

MINILM = reference.MODEL_MINILM
TABS = [
    "Summary",
    "Dynamic range",
    "Per entity",
    "Model vs model",
    "Token overlap",
    "Token counts",
    "Entity swap and categories",
    "Layer by layer",
]
PAGE = "views/oov.py"
APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(scope="module")
def at():
    app = AppTest.from_file(APP, default_timeout=240)
    app.switch_page(PAGE)
    app.run()
    assert not app.exception
    assert any("Run OOV suites" in i.value for i in app.info)  # nothing run yet
    assert not app.dataframe
    app.button(key="oov_run").click().run()
    assert not app.exception
    assert not app.error
    return app


@pytest.fixture(scope="module")
def core_results(at):
    """The same pairs scored by core (after the page ran, so the vector cache is warm)."""
    pairs = pd.concat([load_suite(constants.SUITE_OOV), load_suite(constants.SUITE_BASELINE)], ignore_index=True)
    result = run_pairs(pairs, [MINILM], cache=EmbeddingCache())
    assert not result.errors
    return result.results


def _table(app: AppTest, *columns: str) -> pd.DataFrame:
    """The first dataframe having all ``columns``, in the open tab or else in the first tab that has one (only
    the open tab is drawn)."""
    for label in [None, *TABS]:
        if label is not None:
            show_tab(app, "oov_tab", label)
        for frame in app.dataframe:
            value = frame.value
            if all(c in value.columns for c in columns):
                return value
    raise AssertionError(f"no table with columns {columns}; tables: {[list(f.value.columns) for f in app.dataframe]}")


def _row(frame: pd.DataFrame, **where) -> pd.Series:
    sel = frame
    for col, val in where.items():
        # tables show short model names, the _reading_box too
        sel = sel[sel[col].isin([val, short_name(val)])] if col == constants.COL_MODEL else sel[sel[col] == val]
    assert len(sel) == 1, f"expected one row for {where}, got {len(sel)}"
    return sel.iloc[0]


def _set_reading(app: AppTest, reading: str) -> None:
    app.radio(key="oov_reading").set_value(reading).run()
    assert not app.exception


def test_raw_delta_table_matches_core_both_sentences(at, core_results):
    # The page opens on the reading the paper's figures resemble, summary tab first, and says why
    assert at.radio(key="oov_reading").value == constants.VARIANT_REPLACED_B
    assert "paper" in at.radio(key="oov_reading").help
    assert [t.label for t in at.tabs][0] == "Summary" and len(at.tabs) >= 8
    _set_reading(at, constants.VARIANT_REPLACED_BOTH)
    dyn = oov.baseline_ranges(core_results)
    expected = oov.oov_summary(oov.oov_deltas(core_results, constants.VARIANT_REPLACED_BOTH, dyn), dyn).set_index(constants.COL_MODEL)
    table = _table(at, "mean_delta", "mean_delta (published)", "sd_delta")
    mine = _row(table, model=MINILM)
    assert mine["source"] == "recomputed"
    assert mine["mean_delta"] == pytest.approx(expected.at[MINILM, "mean_delta"], abs=1e-9)
    assert mine["ci_low"] == pytest.approx(expected.at[MINILM, "ci_low"], abs=1e-9)
    assert mine["mean_delta"] < 0  # a shared invented word pulls the pair together
    assert mine["mean_delta (published)"] == pytest.approx(0.1234)
    # the paper's other models are shown as published only
    for model in (reference.MODEL_BGE, reference.MODEL_NOMIC, reference.MODEL_GTE):
        row = _row(table, model=model)
        assert row["source"] == reproduce.STATUS_NOT_RUN
        assert math.isnan(row["mean_delta"]) and not math.isnan(row["mean_delta (published)"])
    # the info box explains the two readings
    assert any("second sentence only" in i.value and "both sentences" in i.value for i in at.info)


def test_toggling_the_reading_flips_the_mean_delta(at, core_results):
    _set_reading(at, constants.VARIANT_REPLACED_B)
    dyn = oov.baseline_ranges(core_results)
    expected = oov.oov_summary(oov.oov_deltas(core_results, constants.VARIANT_REPLACED_B, dyn), dyn).set_index(constants.COL_MODEL)
    mine = _row(_table(at, "mean_delta", "mean_delta (published)", "sd_delta"), model=MINILM)
    assert mine["mean_delta"] == pytest.approx(expected.at[MINILM, "mean_delta"], abs=1e-9)
    assert mine["mean_delta"] > 0
    normalized = _row(_table(at, "normalized_mean", "normalized_mean (published)"), model=MINILM)
    assert normalized["normalized_mean"] == pytest.approx(expected.at[MINILM, "normalized_mean"], abs=1e-9)
    assert normalized["normalized_mean (published)"] == pytest.approx(0.165)
    # both readings side by side in the explanation table
    readings = _table(at, "reading_label", "mean_delta")
    assert set(readings["reading_label"]) == set(constants.OOV_READINGS.values())
    _set_reading(at, constants.VARIANT_REPLACED_BOTH)


def test_dynamic_range_jaccard_swap_and_categories_match_core(at, core_results):
    dyn = oov.baseline_ranges(core_results).set_index(constants.COL_MODEL)
    row = _row(_table(at, "dynamic_range", "dynamic_range (published)"), model=MINILM)
    assert row["dynamic_range"] == pytest.approx(dyn.at[MINILM, "dynamic_range"], abs=1e-9)
    assert row["mean_negative (published)"] == pytest.approx(0.015)

    corr = oov.jaccard_correlation(tables.rows_of_suite(core_results, constants.SUITE_BASELINE)).set_index(constants.COL_MODEL)
    row = _row(_table(at, "pearson_r", "pearson_r (published)"), model=MINILM)
    assert row["pearson_r"] == pytest.approx(corr.at[MINILM, "pearson_r"], abs=1e-9)
    assert row["spearman_rho (published)"] == pytest.approx(0.832)

    swap = oov.entity_swap_check(tables.rows_of_suite(core_results, constants.SUITE_BASELINE)).set_index(constants.COL_MODEL)
    row = _row(_table(at, "mean", "mean (published)", "ci_low"), model=MINILM)
    assert row["mean"] == pytest.approx(swap.at[MINILM, "mean"], abs=1e-9)
    assert row["mean (published)"] == pytest.approx(0.9874)

    cats = tables.category_summary(tables.rows_of_suite(core_results, constants.SUITE_BASELINE), constants.DEFAULT_THRESHOLD)
    expected = _row(cats, model=MINILM, category=constants.CAT_NEGATIVE)
    row = _row(_table(at, "category", "mean (published)", "failure_rate"), model=MINILM, category=constants.CAT_NEGATIVE)
    assert row["mean"] == pytest.approx(expected["mean"], abs=1e-9)
    assert row["mean (published)"] == pytest.approx(0.015)


def test_one_model_cohens_d_needs_two(at):
    show_tab(at, "oov_tab", "Model vs model")
    assert any("at least two models" in i.value for i in at.info)
    table7 = _table(at, "model_b", "published", "recomputed", "status")
    assert set(table7["status"]) == {reproduce.STATUS_NOT_RUN}  # every Table 7 pair involves a model not run here


def test_token_groups_from_tokenizer_and_table2(at, core_results):
    deltas = oov.oov_deltas(core_results, constants.VARIANT_REPLACED_BOTH)
    table2 = reproduce.table2_token_counts()
    expected = oov.oov_token_groups(deltas, {MINILM: table2}).set_index(constants.COL_MODEL)
    row = _row(_table(at, "single_token_mean_delta", "n_multi"), model=MINILM)
    # MiniLM's own WordPiece splits the originals exactly as Table 2 prints them: 17 single, 3 multi
    assert (row["n_single"], row["n_multi"]) == (17, 3)
    assert row["multi_token_mean_delta"] == pytest.approx(expected.at[MINILM, "multi_token_mean_delta"], abs=1e-9)
    show_tab(at, "oov_tab", "Token counts")
    at.radio(key="oov_token_source").set_value("the paper's Table 2").run()
    assert not at.exception
    row = _row(_table(at, "single_token_mean_delta", "n_multi"), model=MINILM)
    assert row["single_token_mean_delta"] == pytest.approx(expected.at[MINILM, "single_token_mean_delta"], abs=1e-9)
    assert row["single_token_mean_delta (published)"] == pytest.approx(0.121)


def test_entity_heatmap_switches_to_normalized(at):
    show_tab(at, "oov_tab", "Per entity")
    at.radio(key="oov_entity_values").set_value("Normalized delta (% of dynamic range)").run()
    assert not at.exception
    specs = [c.proto.spec for c in at.get("plotly_chart")]
    assert any("Normalized delta" in s and "Table C1" in s for s in specs)
    at.radio(key="oov_entity_values").set_value("Raw delta").run()
    assert any("Raw delta" in s and "Table A1" in s for s in (c.proto.spec for c in at.get("plotly_chart")))


def test_choices_survive_a_page_switch(at):
    _set_reading(at, constants.VARIANT_REPLACED_B)
    at.switch_page("views/home.py").run()
    assert not at.exception
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.radio(key="oov_reading").value == constants.VARIANT_REPLACED_B
    assert _row(_table(at, "mean_delta", "mean_delta (published)", "sd_delta"), model=MINILM)["mean_delta"] > 0  # results kept too


def test_a_tab_click_draws_one_tab_and_recomputes_nothing(at, monkeypatch):
    """A tab click on OOV robustness reran every tab's statistics (8-20 s); now it draws the open tab only,
    from analyses cached by content, and scores no pair again."""
    from ui import state

    for label in TABS[:-1]:
        show_tab(at, "oov_tab", label)  # every tab drawn once (the layer tab loads weights only when switched on)
    calls: list[str] = []
    for module, names in (
        (oov, ("dynamic_ranges", "oov_deltas", "oov_summary", "oov_readings", "jaccard_correlation", "entity_swap_check")),
        (reproduce, ("compare_to_published",)),
        (tables, ("category_summary",)),
        (state, ("run_pairs",)),
    ):
        for name in names:
            real = getattr(module, name)
            monkeypatch.setattr(module, name, lambda *a, _n=name, _r=real, **k: calls.append(_n) or _r(*a, **k))
    shown = {}
    for label in TABS[:-1]:
        show_tab(at, "oov_tab", label)
        shown[label] = [h.value for h in at.main.subheader]
    assert calls == []
    assert shown["Dynamic range"] == ["Dynamic range"] and shown["Token overlap"] == ["Token overlap vs cosine"]  # one tab, no other


def test_tables_show_short_model_names_and_downloads_keep_the_ids(at):
    """Full Hugging Face ids in the OOV tables; now the short names, the downloads unchanged."""
    for label in TABS[:-1]:
        show_tab(at, "oov_tab", label)
        for frame in at.dataframe:
            for column in ("model", "model_b"):
                if column in frame.value.columns:
                    ids = [m for m in frame.value[column] if isinstance(m, str) and "/" in m]
                    assert not ids, (label, column, ids[:3])
