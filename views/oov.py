"""OOV robustness: the OOV paper's analyses recomputed on the selected models.

Runs the OOV suite (20 entities, each pair scored as original, with the
invented word in both sentences, and in the second sentence only) and the
100-pair baseline suite, then shows every figure the paper reports next to
its published value.  Statistics come from ``core.scoring.tables``; the matching of
published rows to ours from ``core.papers.reproduce``.
"""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from core import constants
from core.models.tokens import load_tokenizers, piece_counts
from core.papers import oov, reference, reproduce
from core.scoring import findings, tables
from ui import charts, history, progress, resources, widgets
from ui.explain import oov_layer_section
from ui.state import current, run, short, show_errors, show_notes, stored

KEY = "oov"
PAPER = reference.PAPER_OOV
READING_KEY = "oov_reading"
TAB_KEY = "oov_tab"
ENTITY_VALUES_KEY = "oov_entity_values"
TOKEN_SOURCE_KEY = "oov_token_source"
# The one-sided reading first: it is the one the paper's figures resemble, so the page opens on it.
READING_LABELS = {
    constants.VARIANT_REPLACED_B: "second sentence only (as the paper's figures)",
    constants.VARIANT_REPLACED_BOTH: "both sentences",
}
READING_HELP = (
    "The paper does not say whether the other sentence keeps the real name. Only the second-sentence reading gives deltas "
    "like the published ones, so the page opens on it; the both-sentences reading is one click away."
)
DELTA_SCALE = 0.5  # fixed colour scale of the delta heatmap: ±0.5 cosine
RAW, NORMALIZED = "Raw delta", "Normalized delta (% of dynamic range)"
FROM_TOKENIZER, FROM_TABLE2 = "each model's tokenizer", "the paper's Table 2"
PUBLISHED_COLOR = "#9e9e9e"
PERCENT = st.column_config.NumberColumn(format="percent")


# ------------------------------------------------- widget values that survive page switches


# --------------------------------------------------------------------- tables


def _results_table(frame: pd.DataFrame, name: str, **kwargs) -> None:
    """A results table with short model names on screen (full Hugging Face ids pushed the numbers off it);
    the downloads keep the full ids."""
    shown = frame.assign(
        **{
            c: [short(m) if isinstance(m, str) and m else m for m in frame[c]]
            for c in (constants.COL_MODEL, "model_b")
            if c in frame.columns
        }
    )
    widgets.results_table(shown, name, download=frame, **kwargs)


# --------------------------------------------------------------------- charts


def _label(frame: pd.DataFrame) -> list[str]:
    return [short(m) for m in frame[constants.COL_MODEL]]


def _bars_with_published(
    frame: pd.DataFrame, value: str, low: str | None, high: str | None, title: str, reading: str | None, percent: bool = False
) -> go.Figure:
    """Our value per model (with CI whiskers) beside the paper's value."""
    ours = frame[frame["source"] == "recomputed"]
    fig = go.Figure()
    name = f"recomputed ({READING_LABELS[reading]})" if reading else "recomputed"
    error = charts.ci_error(ours[value], ours[low], ours[high]) if low and high else None
    fig.add_trace(go.Bar(name=name, x=_label(ours), y=ours[value], error_y=error))
    pub_col = f"{value} (published)"
    if pub_col in frame.columns:
        fig.add_trace(go.Bar(name="published", x=_label(frame), y=frame[pub_col], marker_color=PUBLISHED_COLOR))
    fig.update_layout(barmode="group", title=title, margin={"l": 10, "r": 10, "t": 50, "b": 10}, legend={"orientation": "h", "y": -0.15})
    if percent:
        fig.update_yaxes(tickformat=".0%")
    fig.add_hline(y=0, line_color="black", line_width=1)
    return fig


def _range_bars(frame: pd.DataFrame) -> go.Figure:
    """Each model's span from mean negative to mean positive cosine, ours and published."""
    fig = go.Figure()
    ours = frame[frame["source"] == "recomputed"]
    fig.add_trace(
        go.Bar(
            name="recomputed",
            x=_label(ours),
            y=ours["dynamic_range"],
            base=ours["mean_negative"],
            hovertemplate="%{x}: %{base:.3f} → %{y:.3f} wide<extra>recomputed</extra>",
        )
    )
    pub = frame.dropna(subset=["dynamic_range (published)"])
    fig.add_trace(
        go.Bar(
            name="published",
            x=_label(pub),
            y=pub["dynamic_range (published)"],
            base=pub["mean_negative (published)"],
            marker_color=PUBLISHED_COLOR,
            hovertemplate="%{x}: %{base:.3f} → %{y:.3f} wide<extra>published</extra>",
        )
    )
    fig.update_layout(
        barmode="group",
        title="Dynamic range: bar from mean negative-control to mean positive-control cosine",
        yaxis={
            "title": "cosine",
            "range": [min(0.0, float(frame[["mean_negative", "mean_negative (published)"]].min().min()) - 0.05), 1.0],
        },
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
    )
    return fig


def _entity_heatmap(wide: pd.DataFrame, title: str, percent: bool) -> go.Figure:
    fmt = ".1%" if percent else ".3f"
    fig = go.Figure(
        go.Heatmap(
            z=wide.to_numpy(float),
            x=list(wide.columns),
            y=list(wide.index),
            texttemplate="%{z:" + fmt + "}",
            colorscale="RdBu_r",
            zmin=-1.0 if percent else -DELTA_SCALE,
            zmax=1.0 if percent else DELTA_SCALE,
            colorbar={
                "title": "% of range (fixed −100…100%)" if percent else f"delta (fixed −{DELTA_SCALE}…{DELTA_SCALE})",
                "tickformat": ".0%" if percent else ".2f",
            },
            hovertemplate="%{y} · %{x}: %{z:" + fmt + "}<extra></extra>",
        )
    )
    fig.update_layout(
        title=title, yaxis={"autorange": "reversed"}, height=max(360, 26 * len(wide) + 140), margin={"l": 10, "r": 10, "t": 50, "b": 10}
    )
    return fig


def _d_heatmap(matrix: pd.DataFrame) -> go.Figure:
    # Diverging around d = 0, model × model; charts.category_heatmap is a mean-cosine scale by category: alike in plotly calls only.
    labels = [short(m) for m in matrix.index]
    fig = go.Figure(
        go.Heatmap(
            z=matrix.to_numpy(float),
            x=labels,
            y=labels,
            texttemplate="%{z:.2f}",
            colorscale="RdBu_r",
            zmin=-3.0,
            zmax=3.0,
            colorbar={"title": "Cohen's d (fixed −3…3)"},
            hovertemplate="row %{y} vs column %{x}: d = %{z:.3f}<extra></extra>",
        )
    )
    fig.update_layout(
        title="Cohen's d of the row model's deltas vs the column model's",
        yaxis={"autorange": "reversed"},
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
    )
    return fig


def _jaccard_scatter(baseline: pd.DataFrame, corr: pd.DataFrame) -> go.Figure:
    stats = corr.set_index(constants.COL_MODEL)
    r, rho = stats["pearson_r"].astype(float).to_dict(), stats["spearman_rho"].astype(float).to_dict()
    data = baseline.assign(
        panel=[f"{short(m)} (r = {r[m]:.3f}, ρ = {rho[m]:.3f})" if m in r else short(m) for m in baseline[constants.COL_MODEL]],
        category_label=baseline[constants.COL_CATEGORY].map(charts.category_label),
    )
    fig = px.scatter(
        data,
        x=constants.COL_TOKEN_JACCARD,
        y=constants.COL_COSINE,
        color="category_label",
        facet_col="panel",
        facet_col_wrap=2,
        hover_data={constants.COL_TEXT_A: True, constants.COL_TEXT_B: True, "panel": False},
        labels={constants.COL_TOKEN_JACCARD: "token Jaccard", constants.COL_COSINE: "cosine", "category_label": "category"},
        title="Token Jaccard vs cosine on the 100 baseline pairs (Pearson r, Spearman ρ per model)",
    )
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
    rows = -(-data["panel"].nunique() // 2)
    fig.update_layout(height=max(380, 340 * rows + 80), margin={"l": 10, "r": 10, "t": 60, "b": 10})
    return fig


def _token_group_bars(frame: pd.DataFrame) -> go.Figure:
    ours = frame[frame["source"] == "recomputed"]
    fig = go.Figure()
    for col, name in (("single_token_mean_delta", "single-token originals"), ("multi_token_mean_delta", "multi-token originals")):
        fig.add_trace(go.Bar(name=f"{name} (recomputed)", x=_label(ours), y=ours[col]))
        fig.add_trace(
            go.Bar(name=f"{name} (published)", x=_label(frame), y=frame[f"{col} (published)"], marker_pattern_shape="/", opacity=0.6)
        )
    fig.update_layout(
        barmode="group", title="Mean OOV delta by the original entity's token count", margin={"l": 10, "r": 10, "t": 50, "b": 10}
    )
    fig.add_hline(y=0, line_color="black", line_width=1)
    return fig


# ----------------------------------------------------------------- tokenizers


def _counts_by_model(models: list[str], entities: list[str]) -> tuple[dict[str, dict[str, int]], list[str]]:
    """Each model's own split of the original entities; failures fall back to Table 2."""
    table2 = reproduce.table2_token_counts()
    loaded, errors = load_tokenizers(models, loader=resources.tokenizer)
    counts = {name: piece_counts(tok, entities) for name, tok in loaded}
    for name in errors:
        counts[name] = {e: table2.get(e, 1) for e in entities}
    problems = [f"{short(name)}: tokenizer unavailable, Table 2 counts used ({reason})" for name, reason in errors.items()]
    return counts, problems


# ----------------------------------------------------------------------- page


def _intro() -> None:
    st.title("OOV robustness")
    st.markdown(
        "How much similarity does a sentence pair lose when a well-known entity (*Google*, *Einstein*, *penicillin*) "
        "is replaced by an invented word (*Xylophrix*, *Wompelfritz*, *flobnaxitol*)? This page reruns the design of "
        "*Out-of-Vocabulary Robustness in Sentence Embeddings*: 20 OOV pairs plus 100 baseline pairs, "
        "with every figure next to the value the paper published."
    )
    st.caption(
        "Published rows for models not run here (BGE, Nomic, GTE unless you select them) are shown as "
        "**published** only. The paper's sentences were not released, so the pairs here are our own, built to its design."
    )


def _reading_box(readings: pd.DataFrame) -> None:
    st.info(
        "**Which sentences carry the invented word?** The paper says the replacement sentence has the entity replaced, "
        "but not whether the *other* sentence of the pair keeps the real name. Both readings are computed. "
        "With the entity replaced in **both sentences**, the two sentences share the invented word, which pulls them "
        "together: the mean delta is *negative* for MiniLM (the pair becomes more similar). With it replaced in the "
        "**second sentence only**, the pair loses a shared word and the delta is positive, as in the paper. "
        "Only the one-sided reading resembles the published deltas, so the page opens on it; the other is one click away above. "
        "Every OOV number below is labelled with the reading it uses.",
        icon="ℹ️",
    )
    if not readings.empty:
        shown = readings.assign(model=readings[constants.COL_MODEL].map(short))[
            ["model", "reading_label", "n", "mean_delta", "ci_low", "ci_high", "normalized_mean"]
        ]
        widgets.results_table(shown, "oov mean delta under both readings", column_config={"normalized_mean": PERCENT})


def _section_raw(summary: pd.DataFrame, reading: str) -> None:
    st.subheader("Raw OOV delta")
    st.caption(
        f"Delta = cosine of the original pair − cosine with the invented word ({constants.OOV_READINGS[reading]}); bars are means with "
        "95% bootstrap CIs. Published: Table 4."
    )
    cols = {c: ("Table 4", c) for c in ("mean_delta", "sd_delta", "min_delta", "max_delta")}
    frame = reproduce.published_alongside(
        summary[[constants.COL_MODEL, "n", "mean_delta", "ci_low", "ci_high", "sd_delta", "min_delta", "max_delta"]], PAPER, cols
    )
    widgets.chart(
        _bars_with_published(frame, "mean_delta", "ci_low", "ci_high", "Mean OOV delta per model", reading), frame, "oov raw delta chart"
    )
    _results_table(frame, "oov raw delta")
    st.caption("The paper's SDs are population SDs (ddof = 0); ours are sample SDs (ddof = 1).")


def _section_dynamic(dyn: pd.DataFrame) -> None:
    st.subheader("Dynamic range")
    st.caption(
        "Mean positive-control minus mean negative-control cosine on the baseline suite (Table 5). It does not depend on the reading."
    )
    cols = {
        "mean_positive": ("Table 5", "mean_positive"),
        "mean_negative": ("Table 5", "mean_negative"),
        "dynamic_range": ("Table 5", "dynamic_range"),
    }
    frame = reproduce.published_alongside(dyn, PAPER, cols)
    widgets.chart(_range_bars(frame), frame, "oov dynamic range chart")
    _results_table(frame, "oov dynamic range")


def _section_normalized(summary: pd.DataFrame, reading: str) -> None:
    st.subheader("Normalized delta (% of dynamic range)")
    st.caption(f"Delta ÷ the model's dynamic range, with 95% bootstrap CIs ({constants.OOV_READINGS[reading]}). Published: Table 5.")
    cols = {"normalized_mean": ("Table 5", "normalized_mean_delta"), "normalized_max": ("Table 5", "normalized_max_delta")}
    frame = reproduce.published_alongside(
        summary[[constants.COL_MODEL, "dynamic_range", "normalized_mean", "norm_ci_low", "norm_ci_high", "normalized_max"]], PAPER, cols
    )
    fig = _bars_with_published(
        frame, "normalized_mean", "norm_ci_low", "norm_ci_high", "Mean normalized OOV delta per model", reading, percent=True
    )
    widgets.chart(fig, frame, "oov normalized delta chart")
    pct = ("normalized_mean", "norm_ci_low", "norm_ci_high", "normalized_max", "normalized_mean (published)", "normalized_max (published)")
    _results_table(frame, "oov normalized delta", column_config={c: PERCENT for c in pct})


def _section_entities(deltas: pd.DataFrame, reading: str) -> None:
    st.subheader("Per-entity deltas")
    which = widgets.saved_radio("Heatmap values", [RAW, NORMALIZED], ENTITY_VALUES_KEY)
    normalized = which == NORMALIZED
    value, table, metric = ("normalized_delta", "Table C1", "normalized_delta") if normalized else ("delta", "Table A1", "delta")
    ours = deltas.pivot_table(index=constants.COL_ENTITY, columns=constants.COL_MODEL, values=value, sort=False)
    ours.columns = [f"{short(m)}" for m in ours.columns]
    published = reference.published_wide(PAPER, table, metric, index="entity")
    published.columns = [f"{reference.MODEL_SHORT_NAMES.get(m, short(m))} (published)" for m in published.columns]
    wide = ours.join(published, how="outer").reindex(list(dict.fromkeys([*ours.index, *published.index])))
    title = f"{which} by entity ({constants.OOV_READINGS[reading]}) beside the paper's {table}"
    widgets.chart(_entity_heatmap(wide, title, normalized), wide.reset_index(), f"oov entity heatmap {value}")
    cols = {
        "cosine_original": ("Table A1", "original_cosine"),
        "cosine_replaced": ("Table A1", "modified_cosine"),
        "delta": ("Table A1", "delta"),
        "normalized_delta": ("Table C1", "normalized_delta"),
    }
    frame = reproduce.published_alongside(
        deltas[
            [
                constants.COL_MODEL,
                constants.COL_ENTITY,
                constants.COL_REPLACEMENT,
                "cosine_original",
                "cosine_replaced",
                "delta",
                "normalized_delta",
            ]
        ],
        PAPER,
        cols,
        keys=(constants.COL_MODEL, constants.COL_ENTITY),
    )
    with st.expander("Per-entity table (Tables A1 and C1)"):
        _results_table(frame, "oov per entity", column_config={"normalized_delta": PERCENT, "normalized_delta (published)": PERCENT})


def _section_cohens_d(results: pd.DataFrame, deltas: pd.DataFrame, reading: str) -> None:
    st.subheader("Effect sizes between models (Cohen's d)")
    if deltas[constants.COL_MODEL].nunique() < 2:
        st.info("Cohen's d between models needs at least two models: select more in the sidebar and run again.")
    else:
        matrix = oov.cohens_d_matrix(deltas)
        widgets.chart(_d_heatmap(matrix), matrix.rename(index=short, columns=short).reset_index(names="model"), "oov cohens d matrix")
    comp = resources.compare_to_published(results, PAPER, "Table 7", reading)
    comp = comp[comp["metric"] == "cohens_d"][["model", "model_b", "published", "recomputed", "difference", "status", "remark"]]
    st.caption(f"Published Table 7 (row model minus column model, pooled sample SD) beside ours ({constants.OOV_READINGS[reading]}).")
    _results_table(comp, "oov cohens d vs published")


def _section_jaccard(results: pd.DataFrame) -> None:
    st.subheader("Token overlap vs cosine")
    baseline = tables.rows_of_suite(results, constants.SUITE_BASELINE)
    corr = resources.jaccard_correlation(baseline)
    if baseline.empty or corr.empty:
        st.info("No baseline pairs in these results.")
        return
    widgets.chart(
        _jaccard_scatter(baseline, corr),
        baseline[[constants.COL_MODEL, constants.COL_CATEGORY, constants.COL_PAIR_ID, constants.COL_TOKEN_JACCARD, constants.COL_COSINE]],
        "oov jaccard scatter",
    )
    frame = reproduce.published_alongside(
        corr, PAPER, {"pearson_r": ("Table 11", "pearson_r"), "spearman_rho": ("Table 11", "spearman_rho")}
    )
    _results_table(frame, "oov jaccard correlation")


def _section_tokens(results: pd.DataFrame, deltas: pd.DataFrame, reading: str) -> None:
    st.subheader("Single- vs multi-token originals")
    source = widgets.saved_radio("Original token counts from", [FROM_TOKENIZER, FROM_TABLE2], TOKEN_SOURCE_KEY)
    models = list(dict.fromkeys(deltas[constants.COL_MODEL]))
    entities = list(dict.fromkeys(deltas[constants.COL_ENTITY]))
    table2 = reproduce.table2_token_counts()
    if source == FROM_TOKENIZER:
        counts, problems = _counts_by_model(models, entities)
        for problem in problems:
            st.warning(widgets.md_escape(problem))
    else:
        counts = {m: {e: table2.get(e, 1) for e in entities} for m in models}
    groups = oov.oov_token_groups(deltas, counts)
    cols = {
        "single_token_mean_delta": ("Table 10", "single_token_mean_delta"),
        "multi_token_mean_delta": ("Table 10", "multi_token_mean_delta"),
    }
    frame = reproduce.published_alongside(groups, PAPER, cols)
    st.caption(
        f"Counts from {source}; the paper's Table 10 groups 17 single-token and 3 multi-token originals "
        f"({constants.OOV_READINGS[reading]})."
    )
    widgets.chart(_token_group_bars(frame), frame, "oov token groups chart")
    _results_table(frame, "oov token groups")
    with st.expander("Token counts of the original entities"):
        count_table = pd.DataFrame({"entity": entities, "Table 2": [table2.get(e) for e in entities]})
        for m in models:
            count_table[short(m)] = [counts[m].get(e) for e in entities]
        widgets.results_table(count_table, "oov original token counts")


def _section_swap(results: pd.DataFrame) -> None:
    st.subheader("Entity-swap check")
    st.caption("Same words, roles swapped (baseline suite): near-1 cosines mean word order barely matters (Table 3).")
    frame = reproduce.published_alongside(
        resources.entity_swap_check(tables.rows_of_suite(results, constants.SUITE_BASELINE)), PAPER, {"mean": ("Table 3", "mean_cosine")}
    )
    _results_table(frame, "oov entity swap check")


def _section_categories(results: pd.DataFrame, threshold: float) -> None:
    st.subheader("Category means (baseline suite)")
    summary = resources.category_summary(tables.rows_of_suite(results, constants.SUITE_BASELINE), threshold)
    if summary.empty:
        st.info("No baseline pairs in these results.")
        return
    published = reference.published_table(PAPER, "Table 12")
    published = published[published["metric"] == "mean_cosine"]
    published_cells = pd.DataFrame(
        {
            constants.COL_MODEL: [f"{reference.MODEL_SHORT_NAMES.get(m, short(m))} (published)" for m in published["model"]],
            constants.COL_CATEGORY: published["category"],
            "n": float("nan"),
            "mean": published["value"],
            "sd": float("nan"),
        }
    )
    both = pd.concat([summary[[constants.COL_MODEL, constants.COL_CATEGORY, "n", "mean", "sd"]], published_cells], ignore_index=True)
    fig, data = charts.category_heatmap(both, "Mean cosine by baseline category, ours beside the paper's Table 12")
    widgets.chart(fig, data, "oov category heatmap")
    cols = [constants.COL_MODEL, constants.COL_CATEGORY, "n", "mean", "sd", "failure_rate"]
    frame = reproduce.published_alongside(
        summary[cols], PAPER, {"mean": ("Table 12", "mean_cosine")}, keys=(constants.COL_MODEL, constants.COL_CATEGORY)
    )
    st.caption(
        f"share above threshold = share of pairs scoring above the sidebar threshold ({threshold:.2f}): for unrelated pairs a failure, "
        "for paraphrases the share a search finds."
    )
    frame.insert(1, "category label", frame[constants.COL_CATEGORY].map(charts.category_label))
    _results_table(
        frame,
        "oov category means",
        hide=(constants.COL_CATEGORY,),
        labels={"category label": "category"},
        column_config={"failure_rate": st.column_config.NumberColumn("share above threshold", format="percent")},
    )


def main() -> None:
    selection = current()
    _intro()
    pairs = pd.concat([resources.suite(constants.SUITE_OOV), resources.suite(constants.SUITE_BASELINE)], ignore_index=True)
    if st.button(
        "Run OOV suites",
        key="oov_run",
        type="primary",
        help="Scores the OOV suite (3 variants × 20 pairs) and the 100 baseline pairs with every selected model.",
    ):
        if (ran := run(pairs, selection, key=KEY, label="OOV + baseline suites")) is not None:
            history.record(
                "oov",
                ran,
                selection,
                history.suite_sources(constants.SUITE_OOV, constants.SUITE_BASELINE),
                readings=list(constants.OOV_VARIANTS),
            )
    else:  # A long run says how long before it starts
        progress.expected_caption(selection.models, progress.pair_texts(pairs), selection.options)
    show_errors(KEY, notes=False)
    result = stored(KEY)
    if result is None:
        st.info("Press **Run OOV suites** to score the suites with the models selected in the sidebar.")
        return
    results = result.results
    if not {constants.SUITE_OOV, constants.SUITE_BASELINE} <= set(results[constants.COL_SUITE]):
        st.warning("The stored results lack the OOV or baseline suite; run the suites again.")
        return
    st.text(f"Results for: {', '.join(short(m) for m in result.models)} ({len(results)} scored pairs, {widgets.wall_time(result.seconds)})")
    show_notes(KEY)  # one collapsed line; new notes as a toast

    reading = widgets.saved_radio(
        "Entity replaced in", list(READING_LABELS), READING_KEY, format_func=READING_LABELS.get, help=READING_HELP
    )
    # Cached by content and reading (ui/resources.py): a tab click or a reading seen before recomputes nothing.
    summary = resources.oov_tables(results, reading)[2]
    st.markdown(
        " ".join(widgets.md_escape(s) for s in findings.oov_findings(summary, constants.OOV_READINGS[reading]))
    )  # The finding first
    _results_tabs(results, list(result.models), reading, selection.threshold)


@st.fragment
def _results_tabs(results: pd.DataFrame, models: list[str], reading: str, threshold: float) -> None:
    """The results in tabs; a tab click reruns this fragment alone and draws the open tab only."""
    dyn, deltas, summary = resources.oov_tables(results, reading)

    def summary_tab() -> None:
        _section_raw(summary, reading)
        _section_normalized(summary, reading)
        _reading_box(resources.oov_readings(results))

    def swap_tab() -> None:
        _section_swap(results)
        _section_categories(results, threshold)

    widgets.lazy_tabs(
        {
            "Summary": summary_tab,
            "Dynamic range": lambda: _section_dynamic(dyn),
            "Per entity": lambda: _section_entities(deltas, reading),
            "Model vs model": lambda: _section_cohens_d(results, deltas, reading),
            "Token overlap": lambda: _section_jaccard(results),
            "Token counts": lambda: _section_tokens(results, deltas, reading),
            "Entity swap and categories": swap_tab,
            "Layer by layer": lambda: oov_layer_section(models, reading, current()),  # where in the network the gap appears
        },
        TAB_KEY,
    )


main()
