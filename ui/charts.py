"""Plotly chart builders shared by several pages.

Each helper takes a table from :mod:`core.analysis` and returns a figure;
pages pass the figure and its table to ``ui.widgets.chart`` for display and
downloads.  Helpers only draw: no statistics are computed here.
"""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from core import constants as C
from ui.state import short

# ------------------------------------------- category charts (failure modes, your data)

_CATEGORY_ORDER = (C.CAT_POSITIVE, C.CAT_NEGATIVE, C.CAT_NEAR_MISS, C.CAT_ENTITY_SWAP, C.CAT_TEMPORAL, C.CAT_NEGATION, C.CAT_NUMERICAL, C.CAT_QUANTIFIER, C.CAT_HEDGING)


def category_label(category: str) -> str:
    """Display label of a category (the name itself for user categories)."""
    return C.CATEGORY_LABELS.get(category, category)


def ordered_categories(categories) -> list[str]:
    """Known categories in the failure paper's Table 1 order, then the rest as they come."""
    present = list(dict.fromkeys(categories))
    return [c for c in _CATEGORY_ORDER if c in present] + [c for c in present if c not in _CATEGORY_ORDER]


def category_heatmap(summary: pd.DataFrame, title: str = "Mean cosine by category") -> tuple[go.Figure, pd.DataFrame]:
    """Category × model heatmap of mean cosine, cells reading "mean ± SD".

    Args:
        summary: output of ``core.analysis.category_summary``.

    Returns:
        The figure and the long table behind it (model, category, n, mean, sd).
    """
    cats = ordered_categories(summary[C.COL_CATEGORY])
    models = list(dict.fromkeys(summary[C.COL_MODEL]))
    mean = summary.pivot_table(index=C.COL_CATEGORY, columns=C.COL_MODEL, values="mean", sort=False).reindex(index=cats, columns=models)
    sd = summary.pivot_table(index=C.COL_CATEGORY, columns=C.COL_MODEL, values="sd", sort=False, dropna=False).reindex(index=cats, columns=models)
    text = [[_mean_sd_text(mean.iat[i, j], sd.iat[i, j]) for j in range(len(models))] for i in range(len(cats))]
    fig = go.Figure(
        go.Heatmap(
            z=mean.to_numpy(),
            x=[short(m) for m in models],
            y=[category_label(c) for c in cats],
            text=text,
            texttemplate="%{text}",
            colorscale="RdYlBu_r",
            zmax=1.0,
            colorbar={"title": "mean cosine"},
            hovertemplate="%{y} · %{x}<br>%{text}<extra></extra>",
        )
    )
    fig.update_layout(title=title, yaxis={"autorange": "reversed"}, height=max(280, 48 * len(cats) + 120), margin={"l": 10, "r": 10, "t": 50, "b": 10})
    frame = summary[[C.COL_MODEL, C.COL_CATEGORY, "n", "mean", "sd"]].reset_index(drop=True)
    return fig, frame


def _mean_sd_text(mean: float, sd: float) -> str:
    if mean != mean:  # NaN: no pairs of this category for this model
        return ""
    return f"{mean:.3f}" if sd != sd else f"{mean:.3f} ± {sd:.3f}"


def failure_rate_curves_figure(curves: pd.DataFrame, threshold: float, title: str = "Share of pairs above each threshold") -> go.Figure:
    """One panel per category, one line per model, a marker at ``threshold``.

    Args:
        curves: output of ``core.analysis.failure_rate_curves``.
        threshold: the sidebar threshold (drawn as a dashed vertical line).
    """
    cats = ordered_categories(curves[C.COL_CATEGORY])
    data = curves.assign(model_label=curves[C.COL_MODEL].map(short), category_label=curves[C.COL_CATEGORY].map(category_label))
    fig = px.line(
        data,
        x="threshold",
        y="failure_rate",
        color="model_label",
        facet_col="category_label",
        facet_col_wrap=3,
        category_orders={"category_label": [category_label(c) for c in cats]},
        labels={"threshold": "threshold", "failure_rate": "share above", "model_label": "model", "category_label": "category"},
        title=title,
    )
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
    fig.add_vline(x=threshold, line_dash="dash", line_color="black", row="all", col="all")
    fig.update_yaxes(tickformat=".0%", range=[0, 1.02])
    rows = -(-len(cats) // 3)
    fig.update_layout(height=max(300, 240 * rows + 80), margin={"l": 10, "r": 10, "t": 60, "b": 10})
    return fig


def failure_rate_bars(summary: pd.DataFrame, threshold: float) -> go.Figure:
    """Share of pairs above ``threshold`` per category and model, with 95% CI bars.

    Args:
        summary: output of ``core.analysis.category_summary`` at ``threshold``.
    """
    cats = ordered_categories(summary[C.COL_CATEGORY])
    fig = go.Figure()
    for model, group in summary.groupby(C.COL_MODEL, sort=False):
        group = group.set_index(C.COL_CATEGORY).reindex([c for c in cats if c in set(group[C.COL_CATEGORY])])
        rate = group["failure_rate"]
        fig.add_trace(
            go.Bar(
                name=short(model),
                x=[category_label(c) for c in group.index],
                y=rate,
                error_y={"type": "data", "array": (group["fr_ci_high"] - rate).clip(lower=0), "arrayminus": (rate - group["fr_ci_low"]).clip(lower=0)},
                hovertemplate="%{x}: %{y:.1%}<extra>" + short(model) + "</extra>",
            )
        )
    fig.update_layout(
        barmode="group",
        title=f"Share of pairs scoring above {threshold:.2f} (95% bootstrap CI)",
        yaxis={"tickformat": ".0%", "range": [0, 1.05]},
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
    )
    return fig
