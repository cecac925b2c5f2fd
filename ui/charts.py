"""Plotly chart builders shared by several pages.

Each helper takes a table from :mod:`core.scoring.tables` and returns a figure;
pages pass the figure and its table to ``ui.widgets.chart`` for display and
downloads.  Helpers only draw: no statistics are computed here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from core import constants, lexicon
from core.models.registry import model_color
from ui.state import short

# ------------------------------------------- category charts (failure modes, your data)

# Controls first, then the failure modes in their records' chart order (the failure paper's Table 1 order, ours after).
_CATEGORY_ORDER = (
    constants.CAT_POSITIVE,
    constants.CAT_NEGATIVE,
    constants.CAT_NEAR_MISS,
    *(r.name for r in sorted(lexicon.MODE_RECORDS, key=lambda r: r.chart_rank)),
)


def ci_error(value: pd.Series, low: pd.Series, high: pd.Series) -> dict:
    """Plotly ``error_x``/``error_y`` whiskers from a value and its interval bounds (never negative lengths)."""
    return {"type": "data", "array": (high - value).clip(lower=0), "arrayminus": (value - low).clip(lower=0)}


def category_label(category: str) -> str:
    """Display label of a category (the name itself for user categories)."""
    return lexicon.CATEGORY_LABELS.get(category, category)


def ordered_categories(categories) -> list[str]:
    """Known categories in the failure paper's Table 1 order, then the rest as they come."""
    present = list(dict.fromkeys(categories))
    return [c for c in _CATEGORY_ORDER if c in present] + [c for c in present if c not in _CATEGORY_ORDER]


def category_heatmap(summary: pd.DataFrame, title: str = "Mean cosine by category") -> tuple[go.Figure, pd.DataFrame]:
    """Category × model heatmap of mean cosine, cells reading "mean ± SD".

    Args:
        summary: output of ``core.scoring.tables.category_summary``.

    Returns:
        The figure and the long table behind it (model, category, n, mean, sd).
    """
    cats = ordered_categories(summary[constants.COL_CATEGORY])
    models = list(dict.fromkeys(summary[constants.COL_MODEL]))
    mean = summary.pivot_table(index=constants.COL_CATEGORY, columns=constants.COL_MODEL, values="mean", sort=False).reindex(
        index=cats, columns=models
    )
    sd = summary.pivot_table(index=constants.COL_CATEGORY, columns=constants.COL_MODEL, values="sd", sort=False, dropna=False).reindex(
        index=cats, columns=models
    )
    means, sds = mean.to_numpy(dtype=float), sd.to_numpy(dtype=float)
    text = [[_mean_sd_text(means[i, j], sds[i, j]) for j in range(len(models))] for i in range(len(cats))]
    fig = go.Figure(
        go.Heatmap(
            z=mean.to_numpy(),
            x=[short(m) for m in models],
            y=[category_label(c) for c in cats],
            text=text,
            texttemplate="%{text}",
            colorscale="RdYlBu_r",
            zmin=0.0,  # fixed 0…1: a one-row heatmap must not paint 0.73 as the deepest colour
            zmax=1.0,
            colorbar={"title": "mean cosine (fixed 0…1)"},
            hovertemplate="%{y} · %{x}<br>%{text}<extra></extra>",
        )
    )
    # type "category": labels such as "0" and "1" (a label used as the category) are names, not numbers on an axis.
    fig.update_layout(
        title=title,
        yaxis={"autorange": "reversed", "type": "category"},
        xaxis={"type": "category"},
        height=max(280, 48 * len(cats) + 120),
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
    )
    frame = summary[[constants.COL_MODEL, constants.COL_CATEGORY, "n", "mean", "sd"]].reset_index(drop=True)
    return fig, frame


ABOVE_MARK = "▲"


def marked_cells(matrix, threshold: float, digits: int = 3) -> list[list[str]]:
    """Heatmap cell texts with cells strictly above ``threshold`` marked ``▲`` (the caption says what it means).

    Args:
        matrix: cosines, shape (n_rows, n_cols).
        threshold: the sidebar threshold.
    """
    return [[(f"{ABOVE_MARK} " if v > threshold else "") + f"{v:.{digits}f}" for v in row] for row in matrix]


def _mean_sd_text(mean: float, sd: float) -> str:
    if mean != mean:  # NaN: no pairs of this category for this model
        return ""
    return f"{mean:.3f}" if sd != sd else f"{mean:.3f} ± {sd:.3f}"


def failure_rate_curves_figure(curves: pd.DataFrame, threshold: float, title: str = "Share of pairs above each threshold") -> go.Figure:
    """One panel per category, one line per model, a marker at ``threshold``.

    Args:
        curves: output of ``core.scoring.tables.failure_rate_curves``.
        threshold: the sidebar threshold (drawn as a dashed vertical line).
    """
    cats = ordered_categories(curves[constants.COL_CATEGORY])
    drawn = _bends(curves, [constants.COL_MODEL, constants.COL_CATEGORY], "failure_rate")
    data = drawn.assign(model_label=drawn[constants.COL_MODEL].map(short), category_label=drawn[constants.COL_CATEGORY].map(category_label))
    fig = px.line(
        data,
        x="threshold",
        y="failure_rate",
        color="model_label",
        # One colour per model everywhere; the dash tells apart models whose curves coincide (MiniLM-L6 and its int8 twin).
        color_discrete_map={short(m): model_color(m) for m in curves[constants.COL_MODEL].unique()},
        line_dash="model_label",
        facet_col="category_label",
        facet_col_wrap=3,
        category_orders={"category_label": [category_label(c) for c in cats]},
        labels={"threshold": "threshold", "failure_rate": "share above", "model_label": "model", "category_label": "category"},
        title=title,
    )
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
    # One shape per panel in one layout update: add_vline(row="all", col="all") took about a second per rerun.
    refs = [key.replace("axis", "") for key in fig.layout.to_plotly_json() if key.startswith("xaxis")]
    fig.update_layout(
        shapes=[
            {
                "type": "line",
                "xref": ref,
                "yref": f"{ref.replace('x', 'y')} domain",
                "x0": threshold,
                "x1": threshold,
                "y0": 0,
                "y1": 1,
                "line": {"dash": "dash", "color": "black"},
            }
            for ref in refs
        ]
    )
    fig.update_yaxes(tickformat=".0%", range=[0, 1.02])
    hide_empty_panels(fig)
    rows = -(-len(cats) // 3)
    fig.update_layout(height=max(300, 240 * rows + 80), margin={"l": 10, "r": 10, "t": 60, "b": 10})
    return fig


def _bends(curves: pd.DataFrame, by: list[str], y: str) -> pd.DataFrame:
    """Each curve's points without the inside of its flat stretches: the same line drawn, far fewer points.

    A rate curve is flat over most of the grid (every pair above, or none); Chromium spent seconds drawing those
    points. The table under the chart keeps every point.
    """
    values = curves.groupby(by, sort=False)[y]
    inside_flat = (curves[y] == values.shift(1)) & (curves[y] == values.shift(-1))
    return curves[~inside_flat]


def hide_empty_panels(fig: go.Figure) -> None:
    """Hide the axes of grid cells no trace is drawn in (a facet grid of 7 panels in rows of 3 leaves two blank)."""
    used = {(trace.xaxis or "x", trace.yaxis or "y") for trace in fig.data}
    layout = fig.layout.to_plotly_json()
    for key in [k for k in layout if k.startswith("xaxis")]:
        ref = "x" + key[len("xaxis") :]
        yref = "y" + key[len("xaxis") :]
        if (ref, yref) not in used:
            fig.layout[key].update(visible=False)
            fig.layout["yaxis" + key[len("xaxis") :]].update(visible=False)
            fig.layout.shapes = [shape for shape in fig.layout.shapes if shape.xref != ref]


def pair_strip_figure(pairs: pd.DataFrame, threshold: float, group: str = "failure mode") -> go.Figure:
    """Every pair as a point: cosine across, its group down, one colour per model (``customdata`` = the pair's row in ``pairs``).

    Args:
        pairs: one row per pair and model with ``model`` (full id), ``cosine`` and ``group``; any index.
        threshold: the threshold drawn as a dashed line.
        group: the column the rows of the chart are.
    """
    pairs = pairs.reset_index(drop=True)
    fig = go.Figure()
    for model, mine in pairs.groupby(constants.COL_MODEL, sort=False):
        fig.add_trace(
            go.Scatter(
                x=mine[constants.COL_COSINE],
                y=mine[group],
                mode="markers",
                name=short(model),
                orientation="h",
                offsetgroup=model,
                marker={"color": model_color(str(model)), "size": 8, "opacity": 0.75},
                customdata=list(mine.index),
                hovertemplate="%{y}: %{x:.4f}<extra>" + short(model) + "</extra>",
            )
        )
    fig.add_vline(
        x=threshold, line_dash="dash", line_color="black", annotation_text=f"threshold {threshold:.2f}", annotation_position="top"
    )
    rows = pairs[group].nunique()
    fig.update_layout(
        title="Every pair's cosine: click a point to read the pair",
        xaxis={"title": "cosine"},
        yaxis={"title": None},
        scattermode="group",
        height=max(260, 60 * rows + 120),
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        legend={"orientation": "h", "y": -0.2},
        showlegend=True,
    )
    return fig


def failure_rate_bars(summary: pd.DataFrame, threshold: float) -> go.Figure:
    """Share of pairs above ``threshold`` per category and model, with 95% CI bars.

    Args:
        summary: output of ``core.scoring.tables.category_summary`` at ``threshold``.
    """
    cats = ordered_categories(summary[constants.COL_CATEGORY])
    fig = go.Figure()
    for model, group in summary.groupby(constants.COL_MODEL, sort=False):
        group = group.set_index(constants.COL_CATEGORY).reindex([c for c in cats if c in set(group[constants.COL_CATEGORY])])
        rate = group["failure_rate"]
        fig.add_trace(
            go.Bar(
                name=short(model),
                marker_color=model_color(str(model)),
                x=[category_label(c) for c in group.index],
                y=rate,
                error_y=ci_error(rate, group["fr_ci_low"], group["fr_ci_high"]),
                hovertemplate="%{x}: %{y:.1%}<extra>" + short(model) + "</extra>",
            )
        )
    fig.update_layout(
        barmode="group",
        showlegend=True,  # colour means the model, even with one model
        title=f"Share of pairs scoring above {threshold:.2f} (95% bootstrap CI)",
        yaxis={"tickformat": ".0%", "range": [0, 1.05]},
        xaxis={"type": "category"},
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
    )
    return fig


# ------------------------------------------- calibrated thresholds and perturbations


def roc_figure(roc: pd.DataFrame, calibration_table: pd.DataFrame, method: str) -> go.Figure:
    """One ROC curve per model with its calibrated threshold marked.

    Args:
        roc: ``core.probes.calibration.roc_table`` output.
        calibration_table: ``core.probes.calibration.calibrate`` output.
        method: ``youden`` or ``fpr``: which threshold to mark.
    """
    fig = go.Figure()
    seen: dict[tuple, str] = {}
    for model, curve in roc.groupby(constants.COL_MODEL, sort=False):
        color = model_color(str(model))
        row = calibration_table[calibration_table[constants.COL_MODEL] == model]
        auc = f" (AUC {row['auc'].iloc[0]:.3f})" if not row.empty else ""
        same = same_curve_as(curve, seen, short(model))
        fig.add_trace(
            go.Scatter(
                x=curve["fpr"],
                y=curve["tpr"],
                mode="lines",
                name=short(model) + auc + (f", same curve as {same}" if same else ""),
                line={"color": color, "shape": "hv", "dash": "dot" if same else "solid"},
                customdata=curve["threshold"],
                hovertemplate="threshold %{customdata:.3f}: TPR %{y:.2f}, FPR %{x:.2f}<extra></extra>",
            )
        )
        if not row.empty:
            fig.add_trace(
                go.Scatter(
                    x=row[f"{method}_fpr"],
                    y=row[f"{method}_tpr"],
                    mode="markers",
                    marker={"size": 12, "color": color, "symbol": "star"},
                    name=f"{short(model)} threshold {row[f'{method}_threshold'].iloc[0]:.3f}",
                    showlegend=True,
                    hovertemplate=f"{short(model)}: threshold %{{customdata:.3f}}<extra></extra>",
                    customdata=row[f"{method}_threshold"],
                )
            )
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line={"dash": "dot", "color": "gray"}, name="chance", hoverinfo="skip"))
    fig.update_layout(
        title="ROC on the controls: positive pairs vs negative pairs",
        xaxis={"title": "false-positive rate (negative controls above the threshold)", "range": [-0.02, 1.02]},
        yaxis={"title": "true-positive rate (paraphrases above the threshold)", "range": [-0.02, 1.02]},
        height=500,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        legend={"orientation": "h", "y": -0.3},
    )
    return fig


def same_curve_as(curve: pd.DataFrame, seen: dict[tuple, str], name: str) -> str | None:
    """The model an identical curve (fpr, tpr to 6 decimals) was drawn for, or None; records this one in ``seen``.

    Identical curves hide each other, so the legend says so instead.
    """
    key = (tuple(curve["fpr"].round(6)), tuple(curve["tpr"].round(6)))
    if key in seen:
        return seen[key]
    seen[key] = name
    return None


def calibrated_rates_figure(rates: pd.DataFrame) -> go.Figure:
    """Failure rate per mode at the global threshold (light) and each model's own (dark), per model.

    Args:
        rates: ``core.probes.calibration.failure_rates`` output.
    """
    cats = ordered_categories(rates[constants.COL_CATEGORY])
    long = rates.melt(
        id_vars=[constants.COL_MODEL, constants.COL_CATEGORY],
        value_vars=["failure_rate_global", "failure_rate_calibrated"],
        var_name="threshold_kind",
        value_name="rate",
    )
    long["threshold_kind"] = long["threshold_kind"].map(
        {"failure_rate_global": "global threshold", "failure_rate_calibrated": "model's calibrated threshold"}
    )
    long["model_label"] = long[constants.COL_MODEL].map(short)
    long["category_label"] = long[constants.COL_CATEGORY].map(category_label)
    fig = px.bar(
        long,
        x="category_label",
        y="rate",
        color="threshold_kind",
        barmode="group",
        facet_col="model_label",
        facet_col_wrap=2,
        category_orders={"category_label": [category_label(c) for c in cats]},
        labels={"category_label": "", "rate": "failure rate", "threshold_kind": "", "model_label": "model"},
        color_discrete_sequence=["#9ecae1", "#08519c"],
        title="Failure rate: one global threshold vs each model's own",
    )
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
    fig.update_yaxes(tickformat=".0%", range=[0, 1.05])
    fig.update_layout(showlegend=True)  # colour means global vs own threshold even when one kind is drawn
    rows = -(-rates[constants.COL_MODEL].nunique() // 2)
    fig.update_layout(
        height=max(340, 300 * rows + 90), margin={"l": 10, "r": 10, "t": 60, "b": 10}, legend={"orientation": "h", "y": -0.12}
    )
    return fig


THRESHOLD_ZOOM_REACH = 0.1  # a threshold this far below the lowest cosine widens the axis; one further is named, not drawn


def _perturbation_axis(fig: go.Figure, table: pd.DataFrame) -> tuple[list[float], bool]:
    """The cosine axis's range, and whether one threshold serves every model (then drawn as one line; thresholds off the axis
    are named at its left edge)."""
    shared = table[constants.COL_THRESHOLD].dropna().unique()
    one_line = bool(len(shared) == 1 and table[constants.COL_THRESHOLD].notna().all())
    # Zoomed on the cosines, which often all sit within 0.96-0.99 (on a 0-1 axis every dot is one blur); a threshold
    # far below them stays off the axis and is named at its left edge, so the dots keep the width.
    cosines = table[constants.COL_COSINE].astype(float)
    thresholds = table[constants.COL_THRESHOLD].dropna().astype(float)
    near = thresholds[thresholds >= float(cosines.min()) - THRESHOLD_ZOOM_REACH] if len(cosines) else thresholds
    x_range = list(zoomed_range([*cosines, *near]))
    x_range[1] = min(x_range[1], 1.01)
    far = sorted(set(thresholds) - set(near))
    if one_line and not far:
        fig.add_vline(
            x=float(shared[0]),
            line_dash="dash",
            line_color="black",
            annotation_text=f"threshold {shared[0]:.2f}",
            annotation_position="top",
        )
    if far:
        fig.add_annotation(
            x=0,
            xref="paper",
            y=1,
            yref="paper",
            yanchor="bottom",
            xanchor="left",
            showarrow=False,
            text="◀ threshold " + ", ".join(f"{t:.2f}" for t in far) + " (left of this axis: every dot is above it)"
            if float(cosines.min()) > max(far)
            else "◀ threshold " + ", ".join(f"{t:.2f}" for t in far) + " (left of this axis)",
        )
    return x_range, one_line


def _variant_traces(fig: go.Figure, model: str, group: pd.DataFrame, one_line: bool) -> None:
    """One model's dots (filled above its threshold) and, when thresholds differ, its threshold ticks."""
    color = model_color(model)
    above = group[constants.COL_COSINE] > group[constants.COL_THRESHOLD]
    fig.add_trace(
        go.Scatter(
            # Grouped scatter: each model on its own offset within a variant's row, so a twin with the same
            # cosine (MiniLM-L6 and its int8 copy) never hides the other's marker.
            orientation="h",
            offsetgroup=model,
            x=group[constants.COL_COSINE],
            y=group["label"],
            mode="markers",
            name=short(model),
            marker={
                "color": color,
                "size": 12,
                "symbol": ["circle" if a else "circle-open" for a in above],
                "line": {"width": 2, "color": color},
            },
            hovertemplate="%{y}<br>cosine %{x:.4f}<extra>" + short(model) + "</extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            orientation="h",
            offsetgroup=model,
            x=group[constants.COL_THRESHOLD],
            y=group["label"],
            mode="markers",
            name=f"{short(model)} threshold",
            visible=not one_line,
            showlegend=bool(group[constants.COL_THRESHOLD].notna().any()) and not one_line,
            marker={"color": color, "symbol": "line-ns", "size": 18, "line": {"width": 2, "color": color}},
            hovertemplate="threshold %{x:.3f}<extra>" + short(model) + "</extra>",
        )
    )


def perturbation_figure(table: pd.DataFrame) -> go.Figure:
    """Each variant's cosine per model, with each model's threshold as a tick.

    Args:
        table: ``core.scoring.tables.perturbation_table`` output, plus a ``label`` column naming the variant.
    """
    fig = go.Figure()
    labels = list(dict.fromkeys(table["label"]))
    x_range, one_line = _perturbation_axis(fig, table)
    for model, group in table.groupby(constants.COL_MODEL, sort=False):
        _variant_traces(fig, str(model), group, one_line)
    # Fill is the verdict: say so in the legend even when every dot has the same one.
    for symbol, meaning in (("circle", "filled: above threshold (treated as the same)"), ("circle-open", "open: at or below threshold")):
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=meaning,
                hoverinfo="skip",
                marker={"color": "#555555", "size": 12, "symbol": symbol, "line": {"width": 2, "color": "#555555"}},
            )
        )
    fig.update_layout(
        # Short and left: a long title ran under Plotly's modebar, which sits at the top right.
        title={"text": "Cosine of each variant with the original", "x": 0, "xanchor": "left", "y": 0.99, "yanchor": "top"},
        xaxis={"title": "cosine (axis zoomed on the dots)", "range": x_range},
        yaxis={"autorange": "reversed", "categoryorder": "array", "categoryarray": labels},
        height=max(300, 42 * len(labels) + 200),
        margin={"l": 10, "r": 10, "t": 80, "b": 10},
        legend={"orientation": "h", "y": -0.25},
        scattermode="group",
        scattergap=0.4,
        showlegend=True,  # colour is the model, even with one model
    )
    return fig


def plot_text(text: object) -> str:
    """User text made literal for Plotly labels, which read ``<b>``, ``<br>`` and entities as markup."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# ------------------------------------------- invented words

KIND_COLORS = {constants.WORD_PLAUSIBLE: "#2ca02c", constants.WORD_RANDOM: "#ff7f0e"}


def invented_by_model_figure(by_model: pd.DataFrame) -> go.Figure:
    """Mean OOV delta per model, plausible vs random words, with 95% bootstrap CIs over entities.

    Args:
        by_model: ``core.probes.invented.summary.oov_replicate_summary(...)["by_model"]``.
    """
    fig = go.Figure()
    for key, group in by_model.groupby(constants.COL_KIND, sort=False):
        kind = str(key)
        fig.add_trace(
            go.Bar(
                name=f"{kind} words",
                x=[short(m) for m in group[constants.COL_MODEL]],
                y=group["mean_delta"],
                marker_color=KIND_COLORS.get(kind),
                error_y=ci_error(group["mean_delta"], group["ci_low"], group["ci_high"]),
                hovertemplate="%{x}: %{y:.4f}<extra>" + kind + "</extra>",
            )
        )
    fig.add_hline(y=0, line_color="black", line_width=1)
    fig.update_layout(
        barmode="group",
        title="Mean OOV delta (original − replaced cosine), 95% CI over entities",
        yaxis={"title": "mean delta"},
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        legend={"orientation": "h", "y": -0.15},
    )
    return fig


def invented_by_entity_figure(by_entity: pd.DataFrame, model: str) -> go.Figure:
    """One model's mean delta per entity and word kind, with 95% CIs over the k words.

    Args:
        by_entity: ``core.probes.invented.summary.oov_replicate_summary(...)["by_entity"]``.
        model: Which model to draw.
    """
    data = by_entity[by_entity[constants.COL_MODEL] == model]
    fig = go.Figure()
    for key, group in data.groupby(constants.COL_KIND, sort=False):
        kind = str(key)
        fig.add_trace(
            go.Scatter(
                x=group["mean_delta"],
                y=group[constants.COL_ENTITY],
                mode="markers",
                name=f"{kind} words",
                marker={"color": KIND_COLORS.get(kind), "size": 10},
                error_x=ci_error(group["mean_delta"], group["ci_low"], group["ci_high"]),
                hovertemplate="%{y}: %{x:.4f}<extra>" + kind + "</extra>",
            )
        )
    fig.add_vline(x=0, line_color="black", line_width=1)
    fig.update_layout(
        title=f"{short(model)}: mean delta per entity (95% CI over the k words)",
        xaxis={"title": "mean delta"},
        yaxis={"autorange": "reversed"},
        height=max(320, 26 * data[constants.COL_ENTITY].nunique() + 140),
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        legend={"orientation": "h", "y": -0.1},
    )
    return fig


def run_diff_figure(
    categories: pd.DataFrame,
    value: str = "mean_change",
    low: str = "mean_ci_low",
    high: str = "mean_ci_high",
    title: str = "Change in mean cosine (after − before), 95% paired bootstrap CI",
) -> go.Figure:
    """Per model and category, one run's change against another with its interval (``core.history.diff``).

    Args:
        categories: ``RunDiff.categories``.
        value, low, high: the change column and its interval bounds (mean cosine or failure rate).
        title: the figure's title.
    """
    fig = go.Figure()
    labels = [category_label(c) for c in ordered_categories(categories[constants.COL_CATEGORY])]
    for model, group in categories.groupby(constants.COL_MODEL, sort=False):
        fig.add_trace(
            go.Scatter(
                x=group[value],
                y=group[constants.COL_CATEGORY].map(category_label),
                mode="markers",
                name=short(model),
                marker={"size": 10},
                error_x=ci_error(group[value], group[low], group[high]),
                hovertemplate="%{y}: %{x:+.4f}<extra>" + short(model) + "</extra>",
            )
        )
    fig.add_vline(x=0, line_color="black", line_width=1)
    fig.update_layout(
        title=title,
        xaxis={"title": "after − before", "zeroline": False},
        yaxis={"categoryorder": "array", "categoryarray": labels[::-1]},
        height=max(320, 34 * len(labels) + 160),
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        legend={"orientation": "h", "y": -0.15},
    )
    return fig


def zoomed_range(values) -> tuple[float, float]:
    """An x-axis range that spans ``values`` (cosines, thresholds) closely enough to tell 0.96 from 0.98.

    Starts at 0 (or the lowest value, if negative) when the values reach down
    near 0 anyway; otherwise a little below the lowest value, at a round
    hundredth. Ends past the highest value with room for a bar's printed value.
    NaNs are ignored; no finite value gives the plain cosine range.
    """
    finite = [float(v) for v in values if v is not None and np.isfinite(float(v))]
    if not finite:
        return 0.0, 1.12
    low, high = min(finite), max(finite)
    span = max(high - low, 0.02)
    start = np.floor((low - max(0.5 * span, 0.02)) * 100) / 100
    if start <= 0.1:  # close to 0 already: keep the whole bar, from 0 (or below it)
        start = min(0.0, np.floor(low * 100) / 100)
    end = high + 0.18 * (high - start) + 0.01
    return float(start), float(end)
