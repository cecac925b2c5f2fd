"""Index settings: the failure-mode or retrieval suite scored with vectors as a store keeps them (issue 36.3).

float32, float16, int8 (per-dimension or global calibration), binary
(Hamming, or a Hamming shortlist rescored in float) and truncated
dimensions, each failure rate, win rate and recall with its 95% interval and
its change against float32.  The arithmetic is ``core.probes.compression``
(through ``ui.resources.index_settings_run``); this page lays it out.
"""

from __future__ import annotations

import streamlit as st

from core import constants
from core.files.export import safe_frame
from core.probes.compression import DEFAULT_SETTINGS, wide_table
from ui import history, resources, state
from ui.index_settings import settings_figure

RESULT_KEY = "is_result"
PROBES = {
    constants.SUITE_FAILURE_MODES: "Failure-mode suite (failure rate per mode)",
    constants.SUITE_RETRIEVAL: "Retrieval suite (win rate, paired accuracy, recall)",
}
YOUR_DATA = "your data"
YOUR_DATA_RUN = "your_data"  # where the Your data page keeps its scored pairs (views/your_data.py RUN_KEY)
YOUR_DATA_SOURCE, YOUR_DATA_BYTES = "yd_source", "yd_upload_bytes"  # its file's name and bytes (views/your_data.py)
RUN_LABEL = "Score index settings"

st.title("Index settings")
st.caption(
    "Vector stores rarely compare the float32 vectors a model returns: they keep half precision, int8 codes, sign bits "
    "or fewer dimensions. Here the same suites are scored under each setting, so you can choose a compression knowing "
    "what it costs on the failures that matter. int8 calibrates per dimension (`int8`) or on one range (`int8-global`); "
    "binary scores by Hamming distance (`binary`) or rescoring a Hamming shortlist in float (`binary-rescore`); "
    "`dims:D` keeps the first D dimensions. Binary scores sit below cosines: read them at their own threshold, "
    "or by win rate and recall. The CLI: `cosine-probe index-settings`."
)
selection = state.current()
scored = state.stored(YOUR_DATA_RUN)
yours = None if scored is None or scored.results.empty else scored.results
options = {**PROBES, **({YOUR_DATA: "Your data (the pairs scored on the Your data page)"} if yours is not None else {})}
probe = st.radio("Probe", list(options), format_func=options.get, horizontal=True, key="is_probe")
if yours is None:
    st.caption(
        "Score a pairs file on the Your data page to probe it here too; the CLI reads pairs and triples files: `--pairs`, `--triples`."
    )
chosen = st.multiselect("Index settings", list(DEFAULT_SETTINGS), default=list(DEFAULT_SETTINGS), key="is_settings")
if st.button(RUN_LABEL, type="primary", key="is_run", disabled=not selection.models or not chosen):
    with st.spinner("Encoding once per model, then scoring every setting…"):
        pairs = None
        if probe == YOUR_DATA and yours is not None:  # each pair once: the page scored it once per model
            pairs = yours.drop_duplicates(constants.COL_PAIR_ID)[[constants.COL_TEXT_A, constants.COL_TEXT_B, constants.COL_CATEGORY]]
        ran = st.session_state[RESULT_KEY] = resources.index_settings_run(
            probe, tuple(selection.models), selection.options, tuple(chosen), selection.threshold, pairs
        )
    sources = (
        history.suite_sources(probe)
        if probe != YOUR_DATA
        else history.upload_source(st.session_state.get(YOUR_DATA_SOURCE, YOUR_DATA), st.session_state.get(YOUR_DATA_BYTES))
    )
    history.record_index_settings(ran, selection, sources)
if not selection.models:
    st.info("Pick at least one model in the sidebar.")

result = st.session_state.get(RESULT_KEY)
if result is not None:
    for name, reason in result.errors.items():
        state.model_error(name, reason)
    for note in result.notes:
        st.caption(note)
    table = result.table
    for model in state.sidebar_order(list(dict.fromkeys(table[constants.COL_MODEL]))):
        rows = table[table[constants.COL_MODEL] == model]
        st.subheader(state.short(model))
        metrics = list(dict.fromkeys(rows["metric"]))
        metric = st.selectbox("Metric", metrics, key=f"is_metric::{model}")
        probe_name = rows["probe"].iloc[0]
        st.plotly_chart(
            settings_figure(rows, metric, f"{state.short(model)} · {probe_name} · {metric.replace('_', ' ')}"), key=f"is_chart::{model}"
        )
        st.dataframe(wide_table(rows, state.short), hide_index=True)
    st.download_button(
        "Table (CSV)",
        safe_frame(table).to_csv(index=False),
        file_name="index-settings.csv",
        key="is_csv",
        help="setting, model, probe, metric, mode, value, ci_low, ci_high, n, change against float32",
    )
