"""ui.widgets helpers that decide what a results table shows (pure parts)."""

from __future__ import annotations

import pytest

from ui import widgets


def test_lead_columns_puts_key_numbers_first_and_bookkeeping_last():
    columns = ["pair_id", "text_a", "text_b", "model", "suite", "cosine", "category", "verdict", "threshold", "model id"]
    order = widgets.lead_columns(columns, hide=("category",))
    assert order == ["model", "cosine", "threshold", "verdict", "text_a", "text_b", "model id", "pair_id", "suite"]


def test_lead_columns_keeps_every_column_once_and_refuses_duplicates():
    assert widgets.lead_columns(["b", "a"], lead=("a", "zz")) == ["a", "b"]
    with pytest.raises(ValueError, match="distinct"):
        widgets.lead_columns(["a", "a"])


def test_plain_note_drops_internal_paths_and_raw_words():
    note = "did not reproduce: the real model gives 0.947, published 0.92 (shared/notes/offline-models.md)"
    assert widgets.plain_note(note) == "did not reproduce: the real model gives 0.947, published 0.92"
    assert "garbled" not in widgets.plain_note("source row garbled: entity name missing")
    assert widgets.plain_note("") == "—" and widgets.plain_note(None) == "—" and widgets.plain_note(float("nan")) == "—"


def test_a_clicked_point_maps_back_to_its_pair_row():
    """Click a point, read the pair: the selection event's curve and point give the row through the trace's customdata."""
    import pandas as pd
    import plotly.graph_objects as go

    from ui.charts import pair_strip_figure
    from ui.widgets import selected_rows

    pairs = pd.DataFrame({"model": ["m/a", "m/b", "m/a"], "cosine": [0.9, 0.8, 0.7], "failure mode": ["Negation", "Negation", "Temporal"]})
    fig = pair_strip_figure(pairs, 0.7)
    # m/a's trace holds rows 0 and 2; m/b's row 1
    assert selected_rows({"selection": {"points": [{"curve_number": 0, "point_index": 1}]}}, fig) == [2]
    assert selected_rows({"selection": {"points": [{"curve_number": 1, "point_number": 0}]}}, fig) == [1]
    assert selected_rows({"selection": {"points": [{"curve_number": 5, "point_index": 0}]}}, fig) == []  # not a pair trace
    assert selected_rows(None, go.Figure()) == []


def test_a_finding_is_one_escaped_paragraph_and_nothing_when_there_is_none():
    """No empty element sits above a page's charts before it has results."""

    class Where:
        def __init__(self):
            self.written = []

        def markdown(self, body):
            self.written.append(body)

    where = Where()
    widgets.finding([], where)
    assert where.written == []
    widgets.finding(["MiniLM-L6 keeps 2 of 3 variants.", "It scores “A*B” closest."], where)
    assert where.written == ["MiniLM\\-L6 keeps 2 of 3 variants\\. It scores “A\\*B” closest\\."]


def test_a_config_labelled_with_its_raw_column_name_still_gets_a_readable_header():
    import streamlit as st

    from ui.widgets import _readable

    # NumberColumn(c, format=…) names the column by its snake_case self; the screen shows it readable.
    assert _readable("win_rate", st.column_config.NumberColumn("win_rate", format="percent"), {})["label"] == "win rate"
    assert _readable("win_rate", st.column_config.NumberColumn(format="percent"), {"win_rate": "share"})["label"] == "share"
    # A label the caller chose is kept, and so is a plain string config.
    assert _readable("win_rate", st.column_config.NumberColumn("Win rate (%)", format="percent"), {})["label"] == "Win rate (%)"
    assert _readable("win_rate", "rate", {}) == "rate"


def test_marked_text_highlights_changed_runs_and_escapes_everything():
    """The changed words are marked; typed Markdown in a sentence stays text."""
    from core.words import word_changes

    _, tokens = word_changes("The dose is **5** mg", "The dose is **50** mg [x](y)")
    marked = widgets.marked_text(tokens)
    assert ":orange-background[**50**]" in marked
    assert "\\*\\*" in marked and "\\[x\\]\\(y\\)" in marked  # the typed asterisks and link are escaped, not rendered
    assert widgets.marked_text([("plain", False)]) == "plain"


def _two_tabs_page():
    import streamlit as st

    from ui import widgets as w

    drawn = st.session_state.setdefault("drawn", [])
    w.lazy_tabs({"One": lambda: drawn.append("One") or st.write("first tab"), "Two": lambda: drawn.append("Two") or st.write("two")}, "t")


def test_lazy_tabs_draw_only_the_open_tab_and_keep_it_across_reruns():
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_function(_two_tabs_page).run()
    assert [t.label for t in app.tabs] == ["One", "Two"] and app.session_state["drawn"] == ["One"]
    assert [m.value for m in app.markdown] == ["first tab"]
    app.session_state["t"] = "Two"  # what a click on the second tab sets
    app.run()
    assert app.session_state["drawn"] == ["One", "Two"] and [m.value for m in app.markdown] == ["two"]
    app.run()  # a rerun (a slider moved) keeps the open tab and draws it alone
    assert app.session_state["drawn"] == ["One", "Two", "Two"]


def test_the_report_of_pairs_grouped_by_their_0_1_labels_names_the_groups_in_words():
    import pandas as pd

    from core import constants
    from core.models.registry import MINILM_L6

    texts = [("He is here", "He is not here", "0", 0.9), ("A cat sat", "A feline sat", "1", 0.8), ("It is safe", "It is unsafe", "0", 0.95)]
    results = pd.DataFrame(
        [
            {"model": MINILM_L6, "suite": "uploaded", "category": label, "label": label, "text_a": a, "text_b": b, "cosine": c}
            for a, b, label, c in texts
        ]
    )
    html = widgets.report_html_bytes(results, 0.7, "cosine-probe your data", {}).decode("utf-8")
    by_category = html[html.index("<h2>By category</h2>") : html.index("<h2>Models</h2>")]
    assert "no match (0)" in by_category and "match (1)" in by_category
    assert results[constants.COL_CATEGORY].tolist() == ["0", "1", "0"]  # the caller's results untouched
