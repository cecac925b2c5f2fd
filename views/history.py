"""History: every stored run (CLI and app), and what changed between two of them.

The runs come from ``core.history.store``, which also picks the default
comparison (the two latest runs of the same pairs, a pinned run first) and
names, pins and deletes runs; the comparison (per model and
category: change in mean cosine and failure rate with paired bootstrap
intervals, and the pairs that crossed the threshold) from
``core.history.diff`` through ``ui.resources.history_diff``.  This page lays
them out.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core import constants
from core.history import store
from core.history.diff import CROSSED_UP, diff_findings
from ui import charts, resources, state, widgets
from ui.pages import PAGES

BEFORE_KEY = "hist_before"
AFTER_KEY = "hist_after"
SHARED_THRESHOLD_KEY = "hist_shared_threshold"
MANAGE_KEY = "hist_manage"
NAME_KEY = "hist_name"
PIN = "📌"


def _run_label(runs: pd.DataFrame):
    by_id = runs.set_index(constants.COL_RUN_ID)

    def label(run_id: int) -> str:
        row = by_id.loc[run_id]
        source = f" · {row['source']}" if row["source"] else ""
        name = f" “{row['name']}”" if isinstance(row["name"], str) and row["name"] else ""
        pin = f" {PIN}" if row["pinned"] else ""
        return f"#{run_id}{pin}{name} · {row['command']} ({row['origin']}){source} · {row[constants.COL_CREATED_AT]:%Y-%m-%d %H:%M}"

    return label


def _picked(key: str) -> None:
    widgets.persist(key)
    st.session_state[f"{key}_chosen"] = True


def _pick(label: str, key: str, ids: list[int], default: int, format_func) -> int:
    """A run picker that follows the default comparison until the user picks a run; their choice survives page
    switches while that run exists."""
    chosen = widgets.saved(key, default) if st.session_state.get(f"{key}_chosen") else default
    st.session_state[key] = chosen if chosen in ids else default
    return st.selectbox(label, ids, key=key, format_func=format_func, on_change=_picked, args=(key,))


def _change(action, run_id: int, *args) -> None:
    """A button callback that names, pins or deletes a run; a refusal (a pinned run) is kept for the next run of the page."""
    try:
        action(run_id, *args)
        st.session_state.pop("hist_problem", None)
    except (store.HistoryError, ValueError) as exc:
        st.session_state["hist_problem"] = str(exc)


def _manage(runs: pd.DataFrame, label) -> None:
    """Name, pin or delete one run."""
    with st.expander("Name, pin or delete a run"):
        ids = [int(i) for i in runs[constants.COL_RUN_ID]]
        if st.session_state.get(MANAGE_KEY) not in ids:
            st.session_state.pop(MANAGE_KEY, None)  # the run it named was deleted
        run_id = st.selectbox("Run", ids, key=MANAGE_KEY, format_func=label)
        row = runs.set_index(constants.COL_RUN_ID).loc[run_id]
        current = row["name"] if isinstance(row["name"], str) else ""
        name = st.text_input(
            "Name", value=current, key=f"{NAME_KEY}_{run_id}", max_chars=store.NAME_MAX_CHARS, placeholder="e.g. before the upgrade"
        )
        left, middle, right = st.columns(3)
        left.button("Save name", key="hist_save_name", on_click=_change, args=(store.name_run, run_id, name))
        pinned = bool(row["pinned"])
        middle.button(
            "Unpin" if pinned else f"{PIN} Pin",
            key="hist_pin",
            on_click=_change,
            args=(store.pin_run, run_id, not pinned),
            help="A pinned run cannot be deleted, and the comparison below starts from it for runs of the same pairs.",
        )
        right.button(
            "Delete",
            key="hist_delete",
            on_click=_change,
            args=(store.delete_run, run_id),
            disabled=pinned,
            help="Unpin it first." if pinned else "Deletes the run and its results from the history.",
        )
        if st.session_state.get("hist_problem"):
            st.error(widgets.md_escape(st.session_state["hist_problem"]), icon="⛔")


# The pages whose runs land here, named from the one page list so a page that starts recording is named with no edit here.
_recording = [f"**{p.title}**" for p in PAGES if p.records_history]


def _recording_pages(conjunction: str) -> str:
    return f"{', '.join(_recording[:-1])} {conjunction} {_recording[-1]}" if len(_recording) > 1 else "".join(_recording)


st.title("🗂️ History")
st.markdown(
    "Every run is stored here: `cosine-probe run`, `check`, `compare`, `audit`, `retrieval`, `index-settings` and `tune` on the "
    f"command line, and the {_recording_pages('and')} pages in this app. Pick two runs to see what changed for each model and category "
    "(the same pairs in both runs are compared, after − before) and which pairs crossed the threshold."
)

path = store.history_path()
if path is None:
    st.info(f"Run history is off in this process ({constants.HISTORY_ENV_VAR} is set to off).")
    st.stop()
try:
    runs = store.list_runs()
except (store.HistoryError, ValueError) as exc:
    st.error(f"The run history cannot be read: {widgets.md_escape(exc)}", icon="⛔")
    st.stop()

st.caption(f"Stored in {widgets.md_escape(path)} · {len(runs)} run(s). Command line: `cosine-probe history list`.")
if runs.empty:
    st.info(f"No run stored yet. Run the {_recording_pages('or')} page (or `cosine-probe run`), and it appears here.")
    st.stop()

lead = st.container()  # What changed between the compared runs, in words, above every table
shown = runs.assign(models=runs["models"].map(lambda text: ", ".join(state.short(m) for m in text.split(", ")) if text else ""))
st.header("Runs")
shown = shown.assign(
    pinned=shown["pinned"].map(lambda p: PIN if p else ""),
    pairs=shown["pairs_digest"].map(lambda d: str(d)[:8] if isinstance(d, str) else ""),
)
widgets.table(
    shown.drop(columns="pairs_digest"),
    "history-runs",
    column_config={
        constants.COL_CREATED_AT: st.column_config.DatetimeColumn("created (UTC)", format="YYYY-MM-DD HH:mm:ss"),
        "threshold": st.column_config.NumberColumn(format="%.3f"),
        "pairs": st.column_config.TextColumn(
            "pairs", help="Runs with the same value scored the same pairs, whatever their source is called"
        ),
    },
)
label = _run_label(runs)
_manage(runs, label)

st.header("Compare two runs")
if len(runs) < 2:
    st.info("Only one run so far: run a suite again (another model, threshold or release) to compare.")
    st.stop()
ids = [int(i) for i in runs[constants.COL_RUN_ID]]
pair = store.comparable(runs)
if pair is None:
    st.info("No two runs scored the same pairs yet: the two latest are picked, and only pairs both scored are compared.")
default_before, default_after = pair if pair is not None else (ids[1], ids[0])
left, right = st.columns(2)
with left:
    before = _pick("Before (run A)", BEFORE_KEY, ids, default_before, label)
with right:
    after = _pick("After (run B)", AFTER_KEY, ids, default_after, label)
shared = st.toggle(
    f"Judge both runs at the sidebar threshold ({state.current().threshold:.2f})",
    key=SHARED_THRESHOLD_KEY,
    value=widgets.saved(SHARED_THRESHOLD_KEY, False),
    on_change=widgets.persist,
    args=(SHARED_THRESHOLD_KEY,),
    help="Off: each run is judged at the threshold it ran with (a check run's calibrated thresholds included).",
)
if before == after:
    st.warning("Pick two different runs.")
    st.stop()

stamp = f"{path}|" + "|".join(str(runs.set_index(constants.COL_RUN_ID).loc[i, constants.COL_CREATED_AT]) for i in (before, after))
try:
    diff = resources.history_diff(before, after, stamp, state.current().threshold if shared else None)
except (store.HistoryError, ValueError) as exc:
    st.error(f"These runs cannot be compared: {widgets.md_escape(exc)}", icon="⛔")
    st.stop()

widgets.finding(diff_findings(diff, before, after), lead)
st.caption(
    f"Run #{after} against run #{before}: {diff.n_matched} pair score(s) in both, {diff.n_only_before} only in #{before}, "
    f"{diff.n_only_after} only in #{after}."
)
for run_id, models in ((before, diff.models_only_before), (after, diff.models_only_after)):
    if models:
        st.caption(f"Only run #{run_id} scored {widgets.md_escape(', '.join(state.short(m) for m in models))}.")
if diff.categories.empty:
    st.info("These two runs share no pair (same model, suite and sentences), so there is nothing to compare.")
    st.stop()

cats = diff.categories.assign(model=diff.categories[constants.COL_MODEL].map(state.short))
cats.insert(2, "category label", cats[constants.COL_CATEGORY].map(charts.category_label))
st.subheader("Change per model and category")
st.caption(
    "After − before over the pairs both runs scored, with 95% paired bootstrap intervals (the same pair in both runs is one unit). "
    "Share above threshold: the share of pairs scoring above it; for pairs that should not match this is the failure "
    "rate, for paraphrases the share a search finds."
)
widgets.chart(charts.run_diff_figure(diff.categories), cats, "history-mean-change")
widgets.chart(
    charts.run_diff_figure(
        diff.categories,
        "rate_change",
        "rate_ci_low",
        "rate_ci_high",
        "Change in share above threshold (after − before), 95% paired bootstrap CI",
    ),
    cats,
    "history-rate-change",
)
rates = ("rate_before", "rate_after", "rate_change", "rate_ci_low", "rate_ci_high")
config = {c: st.column_config.NumberColumn(c, format="percent") for c in rates} | {
    c: st.column_config.NumberColumn(c, format="%+.4f" if "change" in c or "ci" in c else "%.4f")
    for c in ("mean_before", "mean_after", "mean_change", "mean_ci_low", "mean_ci_high")
}
widgets.table(cats, "history-category-change", column_config=config)

st.subheader("Pairs that crossed the threshold")
crossed = diff.crossed.assign(model=diff.crossed[constants.COL_MODEL].map(state.short))
up = int((crossed["direction"] == CROSSED_UP).sum())
st.caption(
    f"{len(crossed)} pair score(s) changed side: {up} now above the threshold (would now be retrieved as the same), "
    f"{len(crossed) - up} now below."
)
if crossed.empty:
    st.info("No pair crossed the threshold between these runs.")
else:
    # Sentences wrapped, a selected row in full
    widgets.results_table(
        crossed,
        "history-crossed-pairs",
        lead=("model", "direction", "cosine_before", "cosine_after", "text_a", "text_b"),
        column_config={
            c: st.column_config.NumberColumn(format="%.4f")
            for c in ("cosine_before", "cosine_after", "threshold_before", "threshold_after")
        },
    )

with st.expander("Models of the two runs (revision, backend)"):
    for run_id in (before, after):
        try:
            run_models = store.run_models(run_id)
        except (store.HistoryError, ValueError) as exc:
            st.error(widgets.md_escape(exc), icon="⛔")
            continue
        st.caption(f"Run #{run_id}")
        widgets.table(run_models, f"history run {run_id} models")
