"""Compare: two sentences scored by every selected model at once.

Cosines, the threshold verdict, token counts and truncation per model; the
failure paper's example pairs one click away, with the published cosine next
to ours; and a sentence × sentence similarity heatmap per model.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core import constants, lexicon
from core.files.text_checks import TextCheck, check_lines, check_text, unknown_token_note
from core.models.loading import ModelUnavailable, max_seq_length
from core.models.runs import model_runs
from core.models.tokens import Tokenization, tokenize
from core.scoring import findings, tables
from core.scoring.runner import RunResult, similarity_matrix
from ui import calibration_controls, resources, should_win
from ui.charts import ABOVE_MARK, marked_cells, zoomed_range
from ui.explain import why_this_score
from ui.state import Selection, current, model_error, reset_shown_errors, run, short, show_errors, show_notes, stored
from ui.widgets import chart, md_escape, persistent_text_area, results_table, set_text, table, vega_chart

RESULT_KEY = "compare"
KEY_MARKER = "cmp_marker"
KEY_A, KEY_B = "cmp_text_a", "cmp_text_b"
KEY_EXAMPLE = "cmp_example"
KEY_PENDING = "cmp_pending"
KEY_LAST_MODELS = "cmp_last_models"
KEY_HEAT_TEXT = "cmp_heat_text"
KEY_HEATMAP = "cmp_heatmap"
KEY_HEAT_MODELS = "cmp_heat_models"
DEFAULT_A, DEFAULT_B = constants.EXAMPLE_SENTENCE_A, constants.EXAMPLE_SENTENCE_B  # warmed at set-up (core/probes/warmup.py)
DEFAULT_HEAT = "\n".join(constants.EXAMPLE_HEATMAP_SENTENCES)
MAX_HEAT_SENTENCES = 12
SIDES = ("Sentence A", "Sentence B")
COLOR_ABOVE, COLOR_BELOW = "#d62728", "#1f77b4"

ss = st.session_state
sel = current()

st.title("Compare two sentences")
st.caption(
    "Every selected model scores the same pair. A cosine above the sidebar threshold means a retrieval system "
    "using that threshold would treat the two sentences as the same."
)


# ------------------------------------------------------------------ examples
def _examples() -> dict[str, dict[str, str]]:
    """Example pairs by id: the paper's section 4.6 pairs, then quantifier and hedging from the suite."""
    out: dict[str, dict[str, Any]] = {}
    counts: dict[str, int] = {}
    paper = resources.failure_examples().drop_duplicates(constants.COL_PAIR_ID)
    suite_rows = resources.suite_rows(constants.SUITE_FAILURE_MODES)
    extra = suite_rows[
        (suite_rows[constants.COL_SOURCE] == "paper")
        & suite_rows[constants.COL_CATEGORY].isin([constants.CAT_QUANTIFIER, constants.CAT_HEDGING])
    ]
    for row in [*paper.to_dict("records"), *extra.drop_duplicates(constants.COL_CATEGORY).to_dict("records")]:
        cat = row[constants.COL_CATEGORY]
        counts[cat] = counts.get(cat, 0) + 1
        out[row[constants.COL_PAIR_ID]] = {
            "category": cat,
            "a": row[constants.COL_TEXT_A],
            "b": row[constants.COL_TEXT_B],
            "n": counts[cat],
        }
    for ex in out.values():
        name = lexicon.CATEGORY_LABELS.get(ex["category"], ex["category"])
        ex["label"] = f"{name} {ex['n']}" if counts[ex["category"]] > 1 else name
    return out


def _choose_example(examples: dict[str, dict[str, str]]) -> None:
    pid = ss.get(KEY_EXAMPLE)
    if pid in examples:
        set_text(KEY_A, examples[pid]["a"])
        set_text(KEY_B, examples[pid]["b"])
        ss[KEY_PENDING] = True
    ss[KEY_EXAMPLE] = None  # act like buttons: the same example can be picked again after editing


# ------------------------------------------------------------------- results
def _bar_chart(frame: pd.DataFrame, threshold: float | None) -> alt.LayerChart:
    """Cosine bars per model; one dashed line at a global threshold, or a tick at each model's own (None).

    Vega-Lite, not Plotly: this chart is in Compare's first view, and Plotly's 4.6 MB of JavaScript held that view
    for 0.8-1.3 s in Chromium here (Vega-Lite's ~0.4 s).
    """
    data = frame[["label", constants.COL_COSINE, constants.COL_THRESHOLD, "verdict", "published"]].copy()
    pub = data.dropna(subset=["published"])
    start, end = zoomed_range(
        [
            *data[constants.COL_COSINE],
            *pub["published"],
            *([threshold] if threshold is not None else data[constants.COL_THRESHOLD].dropna()),
        ]
    )
    # On a 0-1 axis 0.96 and 0.98 looked equal; the axis spans the scores (and the threshold), with room right of the
    # longest bar for its value, and says where it starts. The models keep the sidebar's order whatever their verdict.
    title = "cosine similarity" if start <= 0 else f"cosine similarity · axis zoomed to the scores: it starts at {start:.2f}, not 0"
    line = f"threshold {threshold:.2f}" if threshold is not None else "model's calibrated threshold"
    # One colour scale over every layer, so one legend names the verdicts, the published value and the threshold
    # (named there, not written on its line, where it sat on the bars' labels).
    keys = {tables.ABOVE_THRESHOLD: COLOR_ABOVE, tables.BELOW_THRESHOLD: COLOR_BELOW, tables.NO_THRESHOLD: "#9e9e9e"}
    shown = [k for k in keys if (data["verdict"] == k).any()]
    domain = [*shown, *(["published"] if not pub.empty else []), line]
    colors = alt.Scale(domain=domain, range=[*(keys[k] for k in shown), *(["black"] if not pub.empty else []), "gray"])
    color = alt.Color("what:N", scale=colors, legend=alt.Legend(title=None, orient="top"))
    x = alt.X(f"{constants.COL_COSINE}:Q", title=title, scale=alt.Scale(domain=[start, end], nice=False, zero=start <= 0))
    y = alt.Y("label:N", sort=list(data["label"]), title=None, axis=alt.Axis(labelLimit=260, labelFontSize=12))
    tooltip = [alt.Tooltip("label:N", title="model"), alt.Tooltip(f"{constants.COL_COSINE}:Q", format=".4f"), "verdict:N"]
    bars = alt.Chart(data.assign(what=data["verdict"]))
    layers: list[alt.Chart] = [
        bars.mark_bar(clip=True).encode(x=x, y=y, color=color, tooltip=tooltip),
        bars.mark_text(align="left", dx=3).encode(x=x, y=y, text=alt.Text(f"{constants.COL_COSINE}:Q", format=".4f")),
    ]
    if not pub.empty:
        marker = alt.Chart(pub.assign(what="published")).mark_point(shape="diamond", filled=True, size=140, opacity=1)
        layers.append(marker.encode(x=alt.X("published:Q"), y=y, color=color, tooltip=[alt.Tooltip("published:Q", format=".2f")]))
    if threshold is not None:
        rule = alt.Chart(pd.DataFrame({"at": [threshold], "what": [line]})).mark_rule(strokeDash=[6, 4], size=2)
        layers.append(rule.encode(x=alt.X("at:Q"), color=color))
    else:
        own = data.dropna(subset=[constants.COL_THRESHOLD]).assign(what=line)
        tick = alt.Chart(own).mark_tick(thickness=3, size=26)
        own_tip = [alt.Tooltip(f"{constants.COL_THRESHOLD}:Q", format=".3f")]
        layers.append(tick.encode(x=alt.X(f"{constants.COL_THRESHOLD}:Q"), y=y, color=color, tooltip=own_tip))
    # Streamlit fits the whole chart (legend, axis and its title included: ~110 px) in this height; the rest is the bars'.
    return alt.LayerChart(layer=layers, height=120 + 40 * len(data))


def _tokenizations(model: str, texts: tuple[str, str]) -> dict[str, Tokenization] | str:
    """Side label -> Tokenization of the scored texts, or why the tokenizer is unavailable."""
    try:
        tok = resources.tokenizer(model)
    except (ModelUnavailable, ValueError) as exc:
        return str(exc)
    limit = max_seq_length(model)
    return {side: tokenize(tok, text, limit) for side, text in zip(SIDES, texts, strict=True)}


def _token_expander(model: str, splits: dict[str, Tokenization] | str) -> None:
    with st.expander(f"Tokens: {md_escape(short(model))}"):
        if isinstance(splits, str):
            if not model_error(model, splits):  # said once above; here only where the tokens would be
                st.caption("Tokenizer unavailable: see the message above.")
            return
        for side, t in splits.items():
            st.text(f"{side}: {t.n_tokens} subword tokens, {t.n_with_special} with special tokens (model keeps {t.max_tokens})")
            st.text(" ".join(t.tokens))  # not st.code: its highlighter (1.5 MB of JS) held Compare's first view


# ------------------------------------------------------ the pair: examples, inputs, results
@st.fragment
def _pair_area() -> None:
    """The example pills, the two boxes, the scores and the third box.

    A fragment, so an example pill, the Compare button, an edited box or the threshold marker reruns this
    area alone, not the page: the sidebar and the heatmap are not run or redrawn. A sidebar change still reruns the page.
    """
    sel = current()
    reset_shown_errors()  # a rerun of this area alone skips the sidebar, which starts each full run's "shown once" set
    checks = _inputs(sel)
    result = _results(sel, checks)
    # A passage that should win: the ranking a retriever gives query A, from the pair scored here.
    should_win.section(sel, result)


def _inputs(sel: Selection) -> tuple[TextCheck, TextCheck]:
    """The example pills and the two boxes; scores the pair on Compare, a pill or a new model selection. Returns the boxes' checks."""
    examples = _examples()
    st.pills(
        "Example pairs",
        options=list(examples),
        format_func=lambda pid: examples[pid]["label"],
        selection_mode="single",
        key=KEY_EXAMPLE,
        on_change=_choose_example,
        args=(examples,),
        help="One click fills both boxes with a pair from the failure-modes paper and scores it.",
    )

    # -------------------------------------------------------------------- inputs
    left, right = st.columns(2)
    with left:
        text_a = persistent_text_area("Sentence A", KEY_A, DEFAULT_A, height=68)
    with right:
        text_b = persistent_text_area("Sentence B", KEY_B, DEFAULT_B, height=68)
    clicked = st.button("Compare", type="primary", key="cmp_compare")
    # What gets scored is the cleaned text (control characters removed); the boxes keep what was typed.
    checks = (check_text(text_a, SIDES[0]), check_text(text_b, SIDES[1]))
    for check in checks:
        for note in check.notes:
            st.info(note, icon="ℹ️")

    pending = ss.pop(KEY_PENDING, False)
    models_changed = sorted(sel.models) != ss.get(KEY_LAST_MODELS)
    if clicked or pending or models_changed:
        ss[KEY_LAST_MODELS] = sorted(sel.models)
        problems = [check.problem for check in checks if not check.ok]
        for problem in problems:
            st.warning(problem, icon="⚠️")
        if not problems:
            clean_a, clean_b = checks[0].cleaned, checks[1].cleaned
            pairs = pd.DataFrame(
                {
                    constants.COL_TEXT_A: [clean_a],
                    constants.COL_TEXT_B: [clean_b],
                    constants.COL_SUITE: ["compare"],
                    constants.COL_CATEGORY: ["typed"],
                    constants.COL_PAIR_ID: ["typed-1"],
                }
            )
            run(pairs, sel, key=RESULT_KEY, label="Comparing")
    return checks


def _token_warnings(result: RunResult, scored_a: str, scored_b: str) -> dict[str, dict[str, Tokenization] | str]:
    """Warn of each side a model cut short or read with unknown tokens; returns each model's tokenization of the two sides."""
    for model, report in result.reports.items():
        for cut in report.truncated:
            side = SIDES[0] if cut.text == scored_a else SIDES[1]
            st.warning(
                f"{md_escape(short(model))}: {side} is {cut.n_tokens} tokens but the model keeps {cut.max_tokens}; "
                "every token past that was cut before encoding and does not affect the cosine.",
                icon="✂️",
            )
    splits = {model: _tokenizations(model, (scored_a, scored_b)) for model in result.models}
    for model, per_side in splits.items():
        if isinstance(per_side, str):
            continue
        for side, t in per_side.items():
            unknown = unknown_token_note(md_escape(short(model)), side, t.n_unk, t.n_tokens)
            if unknown:
                st.warning(unknown, icon="❓")
    return splits


def _results(sel: Selection, checks: tuple[TextCheck, TextCheck]) -> RunResult | None:
    """The scores of the last compared pair: finding, table, chart, tokens and why; returns that result (None before any)."""
    show_errors(RESULT_KEY, notes=False)
    # The finding and the table come first on screen (in the first 800 px), the threshold marker under them;
    # the marker is drawn (and read) before the table is filled in, so the table's verdicts follow it.
    top = st.container()
    # None while "calibrated" is chosen but not computed yet: the table then keeps the global threshold.
    marked = calibration_controls.marked_thresholds("Threshold marker", KEY_MARKER, "cmp_calibrate", sel)
    result = stored(RESULT_KEY)
    if result is not None:
        frame = tables.compare_table(result.results, marked if isinstance(marked, dict) else sel.threshold, resources.failure_examples())
        scored_a, scored_b = str(frame[constants.COL_TEXT_A].iloc[0]), str(frame[constants.COL_TEXT_B].iloc[0])
        with top:
            st.subheader("Cosine per model")
            if (scored_a, scored_b) != (checks[0].cleaned, checks[1].cleaned):
                st.info("The boxes changed since this pair was scored: press Compare to score what you typed.", icon="ℹ️")
            # The finding in words, then the table, in the first screen; the chart, the texts and the notes after.
            st.markdown(" ".join(md_escape(sentence) for sentence in findings.compare_findings(frame)))
            frame["label"] = frame[constants.COL_MODEL].map(short)
            shown = frame.rename(columns={constants.COL_TOKENS_A: "tokens A", constants.COL_TOKENS_B: "tokens B"})
            shown = shown[
                [
                    "label",
                    constants.COL_COSINE,
                    constants.COL_THRESHOLD,
                    "verdict",
                    "tokens A",
                    "tokens B",
                    constants.COL_TRUNCATED,
                    "published",
                    "note",
                    constants.COL_MODEL,
                ]
            ]
            shown = shown.rename(columns={"label": "model", constants.COL_MODEL: "model id"})
            results_table(  # "—" where the paper printed nothing; notes without internal paths
                shown,
                "compare table",
                column_config={
                    constants.COL_COSINE: st.column_config.NumberColumn(format="%.4f"),
                    constants.COL_THRESHOLD: st.column_config.NumberColumn(
                        format="%.3f", help="The threshold this verdict uses: the sidebar's, or the model's calibrated one."
                    ),
                    "published": st.column_config.NumberColumn(
                        format="%.2f", help="The failure paper's published cosine for this pair and model (section 4.6)."
                    ),
                    "tokens A": st.column_config.NumberColumn(help="Tokens the model receives, special tokens and prompt included."),
                    "tokens B": st.column_config.NumberColumn(help="Tokens the model receives, special tokens and prompt included."),
                },
            )
        splits = _token_warnings(result, scored_a, scored_b)
        vega_chart(
            _bar_chart(frame, None if isinstance(marked, dict) else sel.threshold),
            frame[[constants.COL_MODEL, "label", constants.COL_COSINE, constants.COL_THRESHOLD, "verdict", "published"]],
            "compare cosines",
        )
        st.text(f"A: {scored_a}\nB: {scored_b}")
        if frame["published"].notna().any():
            st.caption(
                "**published**: the failure-modes paper's section 4.6 figure for this exact pair, shown next to what the model computes "
                "here."
            )
        for model, per_side in splits.items():
            _token_expander(model, per_side)
        why_this_score(result.models, scored_a, scored_b, sel)
        show_notes(RESULT_KEY)
    return result


_pair_area()

# ------------------------------------------------------------------- heatmap
st.divider()
st.subheader("Similarity heatmap")
heat_text = persistent_text_area("Sentences for the heatmap (one per line)", KEY_HEAT_TEXT, DEFAULT_HEAT, height=160)
build = st.button("Build heatmap", key="cmp_build_heatmap")
# Built on the click, then again when the models change; not on arrival: four heatmaps under the fold (and Plotly's
# 4.6 MB of JS) held Compare's first view by a second.
if build or (KEY_HEAT_MODELS in ss and sorted(sel.models) != ss[KEY_HEAT_MODELS]):
    ss[KEY_HEAT_MODELS] = sorted(sel.models)
    sentences, line_notes = check_lines(heat_text)
    for note in line_notes:
        st.info(note, icon="ℹ️")
    if len(sentences) > MAX_HEAT_SENTENCES:
        st.warning(f"{len(sentences)} sentences typed; the heatmap uses the first {MAX_HEAT_SENTENCES}.", icon="⚠️")
        sentences = sentences[:MAX_HEAT_SENTENCES]
    if len(sentences) < 2:
        st.warning("Type at least two sentences, one per line.", icon="⚠️")
    elif not sel.models:
        st.warning("Select at least one model in the sidebar.")
    else:
        matrices: dict[str, Any] = {}
        errors: dict[str, str] = {}
        with st.status(f"Heatmap: {len(sentences)} sentences × {len(sel.models)} models", expanded=False) as status:
            bar = st.progress(0.0)
            cache = resources.embedding_cache()

            def progress(fraction: float, message: str) -> None:
                bar.progress(fraction, text=md_escape(message))  # messages name the models, which users type

            # Sentences already cached need no weights (core.models.runs); a failure is one line per model.
            for turn in model_runs(sel.models, sel.options, cache=cache, errors=errors, progress=progress):
                loaded = turn.model_for(sentences)
                if loaded is None:
                    continue
                try:
                    matrices[turn.label] = similarity_matrix(loaded, sentences, cache)  # keyed as its errors are
                except Exception as exc:  # noqa: BLE001 - one model's failure must not stop the others
                    turn.fail(exc)
            bar.progress(1.0, text="done")
            status.update(
                label="Heatmap: done" if matrices else "Heatmap: no model produced results", state="complete" if matrices else "error"
            )
        if matrices:
            ss[KEY_HEATMAP] = {"sentences": sentences, "matrices": matrices, "errors": errors}
        else:
            for name, reason in errors.items():
                model_error(name, reason)

heat = ss.get(KEY_HEATMAP)
if heat:
    for name, reason in heat["errors"].items():
        model_error(name, reason)
    labels = [f"S{i + 1}" for i in range(len(heat["sentences"]))]
    table(pd.DataFrame({"label": labels, "sentence": heat["sentences"]}), "heatmap sentences")
    cols = st.columns(2)
    for i, (name, matrix) in enumerate(heat["matrices"].items()):
        fig = go.Figure(
            go.Heatmap(
                z=matrix,
                x=labels,
                y=labels,
                zmin=-1.0,
                zmax=1.0,
                zmid=0.0,
                colorscale="RdBu_r",
                text=marked_cells(matrix, sel.threshold),
                texttemplate="%{text}",
                hovertemplate="%{y} × %{x}: %{z:.4f}<extra></extra>",
                colorbar={"title": "cosine (fixed −1…1)"},
            )
        )
        fig.update_layout(
            title=short(name), yaxis={"autorange": "reversed"}, height=140 + 38 * len(labels), margin={"l": 10, "r": 10, "t": 40, "b": 10}
        )
        data = pd.DataFrame(matrix, columns=labels).assign(model=name, label=labels, sentence=heat["sentences"])
        with cols[i % 2]:
            chart(fig, data[["model", "label", "sentence", *labels]], f"heatmap {short(name)}")
    st.caption(
        f"Cells marked {ABOVE_MARK} score above the sidebar threshold ({sel.threshold:.2f}): pairs a retrieval system would treat as the "
        "same. "
        "The colour scale is fixed at −1…1 for every model."
    )
