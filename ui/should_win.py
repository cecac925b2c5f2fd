"""Compare's third box, "A passage that should win", and the ranking a retriever would give it.

Query = the sentence A Compare scored; passages = the sentence B it scored and
the passage typed here.  Each selected model scores (A, B) and (A, passage)
through ``ui.state.run`` (under its own result key, so Compare's table is
untouched); ``core.probes.retrieval.should_win`` says which ranks first.
The box's text survives page switches (``widgets.persistent_text_area``).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core import constants
from core.files.text_checks import check_text
from core.probes.retrieval.should_win import should_win_table
from core.scoring.runner import RunResult
from ui import state, widgets
from ui.retrieval_charts import should_win_figure

KEY_PASSAGE = "cmp_text_c"
RESULT_KEY = "compare_should_win"
KEY_SCORED = "cmp_should_win_scored"  # (query, B, passage, models, device) last sent to the models
LABEL = "A passage that should win (optional)"
SIDE = "The passage that should win"


def _pairs(query: str, sentence_b: str, passage: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            constants.COL_TEXT_A: [query, query],
            constants.COL_TEXT_B: [sentence_b, passage],
            constants.COL_SUITE: ["compare", "compare"],
            constants.COL_CATEGORY: ["sentence_b", "should_win"],
            constants.COL_PAIR_ID: ["typed-b", "typed-should-win"],
        }
    )


def section(selection: state.Selection, compared: RunResult | None) -> None:
    """Draw the third box and, once it holds a passage, the per-model ranking of B and that passage for query A.

    Args:
        selection: the sidebar's models and device.
        compared: Compare's stored result (its first row holds the scored A and B), or None before the first score.
    """
    st.divider()
    st.subheader("Would a retriever return the right passage?")
    st.caption(
        "Type a passage that answers sentence A as it should be answered. A retriever asked sentence A ranks sentence B and this "
        "passage by cosine; when B (say, A's negation) ranks first, **the contradiction wins**."
    )
    typed = widgets.persistent_text_area(LABEL, KEY_PASSAGE, "", height=90, placeholder="The patient has a penicillin allergy")
    if not typed.strip():
        return
    if compared is None or compared.results.empty:
        st.info("Press **Compare** first: the ranking uses the pair Compare scored.", icon="ℹ️")
        return
    check = check_text(typed, SIDE)
    for note in check.notes:
        st.info(note, icon="ℹ️")
    if not check.ok:
        st.warning(check.problem, icon="⚠️")
        return
    first = compared.results.iloc[0]
    query, sentence_b, passage = str(first[constants.COL_TEXT_A]), str(first[constants.COL_TEXT_B]), check.cleaned
    scored = (query, sentence_b, passage, tuple(sorted(selection.models)), selection.device)
    if st.session_state.get(KEY_SCORED) != scored:
        st.session_state[KEY_SCORED] = scored
        state.run(_pairs(query, sentence_b, passage), selection, key=RESULT_KEY, label="Ranking B and the passage")
    for reason in st.session_state.get(state.KEY_ERRORS, {}).get(RESULT_KEY, {}).values():
        st.error(widgets.md_escape(reason), icon="⛔")
    stored = state.stored(RESULT_KEY)
    table = should_win_table(stored.results, query, sentence_b, passage) if stored is not None else pd.DataFrame()
    if table.empty:
        st.info("No model ranked these passages yet: check the errors above or the models in the sidebar.", icon="ℹ️")
        return
    st.text(f"Query (A): {query}\nB: {sentence_b}\nShould win: {passage}")
    for row in table.to_dict("records"):
        line = (
            f"**{widgets.md_escape(state.short(row[constants.COL_MODEL]))}**: {row['verdict']} (B {row[constants.COL_COSINE_B]:.4f}, "
            f"passage {row[constants.COL_COSINE_SHOULD_WIN]:.4f})"
        )
        # A warning, not an error: the page works; the model is what fails here.
        if row["verdict"] == constants.VERDICT_CONTRADICTION_WINS:
            st.warning(line, icon="🚨")
        elif row["verdict"] == constants.VERDICT_RIGHT_PASSAGE_WINS:
            st.success(line, icon="✅")
        else:
            st.info(line, icon="⚖️")
    widgets.chart(should_win_figure(table), table, "compare should win")
    shown = table.assign(**{constants.COL_MODEL: table[constants.COL_MODEL].map(state.short), "model id": table[constants.COL_MODEL]})
    fmt = {c: st.column_config.NumberColumn(c, format="%.4f") for c in (constants.COL_COSINE_B, constants.COL_COSINE_SHOULD_WIN, "margin")}
    widgets.table(shown, "compare should win table", column_config=fmt)
