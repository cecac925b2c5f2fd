"""Plotly charts and display labels of the Retrieval page (``core.probes.retrieval`` tables in, figures out).

Same conventions as :mod:`ui.charts`: each helper takes a tidy table from
core and only draws; models are shown by their short name, failure modes
and mitigations by their labels, never by their codes.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core import constants, lexicon
from core.models.registry import model_color
from ui.charts import category_label, ci_error, plot_text
from ui.state import short

ALL_MODES_LABEL = "all modes"
RANDOM_LABEL = f"random ranking ({constants.PAIRED_RANDOM_BASELINE:.0%})"
_MARGIN = {"l": 10, "r": 10, "t": 60, "b": 10}
# The random line's label sits on a white band so the bars under it do not hide it.
_RANDOM_LINE = {
    "line_dash": "dash",
    "line_color": "black",
    "annotation_text": RANDOM_LABEL,
    "annotation_position": "top right",
    "annotation_font": {"size": 13, "color": "black"},
    "annotation_bgcolor": "rgba(255, 255, 255, 0.85)",
}


def mode_label(mode: str) -> str:
    """Display label of a failure mode, or of the pooled ``all`` row."""
    return ALL_MODES_LABEL if mode == constants.MODE_ALL else category_label(mode)


FEW_GROUPS = 5


def mode_tick(mode: str) -> str:
    """A mode's label as an axis tick: a parenthesis on its own line, so "Direction (beyond the papers)" is never cut."""
    return mode_label(mode).replace(" (", "<br>(")


def mitigation_label(name: str) -> str:
    """Display label of a mitigation name such as ``none``, ``bm25-weighted:0.3`` or ``reranker:ID``."""
    head, sep, arg = str(name).partition(":")
    base = constants.MITIGATION_LABELS.get(head, head)
    if not sep:
        return base
    if head == constants.MITIGATION_BM25_WEIGHTED:
        return f"{base[:-1]}, w = {arg})" if base.endswith(")") else f"{base} w = {arg}"
    return f"{base} {arg}"


def _mode_order(modes: pd.Series) -> list[str]:
    present = list(dict.fromkeys(modes))
    known = [m for m in lexicon.ADVERSARIAL_CATEGORIES if m in present]
    return (
        known
        + [m for m in present if m not in known and m != constants.MODE_ALL]
        + ([constants.MODE_ALL] if constants.MODE_ALL in present else [])
    )


def rates_by_mode_figure(table: pd.DataFrame, value: str, title: str, y_title: str, baseline: float | None = None) -> go.Figure:
    """Bars per failure mode (and all modes pooled), one colour per model, 95% CI whiskers.

    Args:
        table: one mitigation's rows of a rate table: model, mode, ``value``, ci_low, ci_high
            (``core.probes.retrieval.tables`` win-rate or paired table, or corpus mode's rates).
        value: the rate column.
        title: the figure's title.
        y_title: the y axis title.
        baseline: a rate to draw as a dashed line (the paired accuracy of random ranking), or None.
    """
    order = _mode_order(table[constants.COL_MODE])
    # What the interval resamples: anchor groups where the table counts them (win rates), else its rows (groups, queries).
    units = "n_groups" if "n_groups" in table.columns else constants.COL_N
    few = bool((table[units] < FEW_GROUPS).any())
    fig = go.Figure()
    for model, group in table.groupby(constants.COL_MODEL, sort=False):
        group = group.set_index(constants.COL_MODE).reindex([m for m in order if m in set(group[constants.COL_MODE])])
        fig.add_trace(
            go.Bar(
                name=plot_text(short(model)),
                marker_color=model_color(str(model)),
                # A bar from fewer than FEW_GROUPS groups is hatched: its interval is too wide to read a rate from.
                marker_pattern_shape=["/" if n < FEW_GROUPS else "" for n in group[units]],
                x=[mode_tick(m) for m in group.index],
                y=group[value],
                error_y=ci_error(group[value], group[constants.COL_CI_LOW], group[constants.COL_CI_HIGH]),
                customdata=group[units],
                hovertemplate="%{x}: %{y:.1%} (n = %{customdata})<extra>" + plot_text(short(model)) + "</extra>",
            )
        )
    if few:
        fig.add_annotation(
            text=f"hatched: from fewer than {FEW_GROUPS} {'groups' if units == 'n_groups' else 'cases'}, too few to read a rate",
            xref="paper",
            yref="paper",
            x=1,
            y=1.02,
            xanchor="right",
            yanchor="bottom",
            showarrow=False,
            font={"size": 12},
        )
    if baseline is not None:
        fig.add_hline(y=baseline, **_RANDOM_LINE)
    fig.update_layout(
        barmode="group",
        title=title,
        yaxis={"title": y_title, "tickformat": ".0%", "range": [0, 1.05]},
        xaxis={"categoryorder": "array", "categoryarray": [mode_tick(m) for m in order], "automargin": True, "tickangle": 0},
        margin=_MARGIN,
        legend={"orientation": "h", "y": -0.3},  # under the two-line ticks
    )
    return fig


# (summary column, its interval columns or None, panel title)
_PANELS = (
    (constants.COL_WIN_RATE, ("win_ci_low", "win_ci_high"), "win rate (lower is better)"),
    (constants.COL_PAIRED_ACCURACY, ("paired_ci_low", "paired_ci_high"), "paired accuracy (higher is better)"),
    (constants.COL_RECALL_AT[1], None, "recall@1 (higher is better)"),
    (constants.COL_TOP1_CONTRADICTION, None, "top-1 is a contradiction (lower is better)"),
)


# A triples file: the win rate of its negatives and the in-corpus ranking.
TRIPLES_PANELS = (
    (constants.COL_WIN_RATE, (constants.COL_CI_LOW, constants.COL_CI_HIGH), "negative above its positive (lower is better)"),
    (constants.COL_IR_RECALL_AT[1], None, "recall@1 (higher is better)"),
    (constants.COL_NDCG_AT, None, "nDCG@10 (higher is better)"),
    (constants.COL_TOP1_NEGATIVE, None, "top-1 is a negative (lower is better)"),
)
# A BEIR folder: the figures its relevance judgements give.
BEIR_PANELS = (
    (constants.COL_IR_RECALL_AT[1], None, "recall@1"),
    (constants.COL_IR_RECALL_AT[10], None, "recall@10"),
    (constants.COL_MRR_AT, None, "MRR@10"),
    (constants.COL_NDCG_AT, None, "nDCG@10"),
)


def before_after_figure(
    summary: pd.DataFrame, panels_of: tuple = _PANELS, title: str = "Before and after each mitigation (95% CI where the figure has one)"
) -> go.Figure:
    """One panel per figure (win rate, paired accuracy, recall@1, top-1 contradiction), mitigations on x, a bar per model.

    Args:
        summary: ``RetrievalResult.summary()`` (or a triples or BEIR result's); panels whose
            column is all NaN (a pairs file has no queries) are left out.
        panels_of: (column, its interval columns or None, panel title) per panel:
            the suite's by default, :data:`TRIPLES_PANELS` or :data:`BEIR_PANELS`.
        title: the figure's title.
    """
    panels = [p for p in panels_of if p[0] in summary.columns and summary[p[0]].notna().any()]
    # Four titles in one row ran into each other (and into the chart's title) at 1280 px: two panels a row,
    # each title on two short lines.
    cols = min(2, max(1, len(panels)))
    rows = max(1, -(-len(panels) // cols))
    titles = [p[2].replace(" (", "<br>(") for p in panels]
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=titles, vertical_spacing=0.22, horizontal_spacing=0.08)
    fig.update_annotations(font={"size": 13})
    mitigations = list(dict.fromkeys(summary[constants.COL_MITIGATION]))
    for index, (value, interval, _title) in enumerate(panels):
        row, col = index // cols + 1, index % cols + 1
        for model, group in summary.groupby(constants.COL_MODEL, sort=False):
            group = group.set_index(constants.COL_MITIGATION).reindex(mitigations)
            error = ci_error(group[value], group[interval[0]], group[interval[1]]) if interval else None
            fig.add_trace(
                go.Bar(
                    name=plot_text(short(model)),
                    legendgroup=model,
                    showlegend=index == 0,
                    marker_color=model_color(str(model)),
                    x=[plot_text(mitigation_label(m)) for m in mitigations],
                    y=group[value],
                    error_y=error,
                    hovertemplate="%{x}: %{y:.1%}<extra>" + plot_text(short(model)) + "</extra>",
                ),
                row=row,
                col=col,
            )
        if value == constants.COL_PAIRED_ACCURACY:
            fig.add_hline(y=constants.PAIRED_RANDOM_BASELINE, row=row, col=col, **_RANDOM_LINE)
    fig.update_yaxes(tickformat=".0%", range=[0, 1.05])
    fig.update_layout(
        barmode="group",
        title=title,
        height=300 + 280 * rows,
        margin={**_MARGIN, "t": 110},
        legend={"orientation": "h", "y": -0.12},
    )
    return fig


def ranking_figure(ranking: pd.DataFrame) -> go.Figure:
    """In-corpus ranking of one mitigation: recall@1, recall@5, MRR and the top-1-contradiction share per model.

    Args:
        ranking: one mitigation's rows of ``RetrievalResult.ranking``.
    """
    metrics = {
        **{c: f"recall@{k}" for k, c in constants.COL_RECALL_AT.items()},
        constants.COL_MRR: "MRR",
        constants.COL_TOP1_CONTRADICTION: "top-1 is a contradiction",
    }
    fig = go.Figure()
    for row in ranking.to_dict("records"):
        fig.add_trace(
            go.Bar(
                name=plot_text(short(row[constants.COL_MODEL])),
                marker_color=model_color(row[constants.COL_MODEL]),
                x=list(metrics.values()),
                y=[row[c] for c in metrics],
                hovertemplate="%{x}: %{y:.3f}<extra>" + plot_text(short(row[constants.COL_MODEL])) + "</extra>",
            )
        )
    fig.update_layout(
        barmode="group",
        title="Every passage of the suite competes for every query",
        yaxis={"range": [0, 1.05]},
        margin=_MARGIN,
        legend={"orientation": "h", "y": -0.15},
    )
    return fig


def should_win_figure(table: pd.DataFrame) -> go.Figure:
    """Compare's third box: cos(A, B) and cos(A, passage that should win) per model.

    Args:
        table: ``core.probes.retrieval.should_win.should_win_table`` output.
    """
    fig = go.Figure()
    labels = [plot_text(short(m)) for m in table[constants.COL_MODEL]]
    for column, name, color in (
        (constants.COL_COSINE_B, "sentence B", "#d62728"),
        (constants.COL_COSINE_SHOULD_WIN, "passage that should win", "#2ca02c"),
    ):
        fig.add_bar(
            x=table[column],
            y=labels,
            orientation="h",
            name=name,
            marker_color=color,
            text=[f"{v:.4f}" for v in table[column]],
            textposition="outside",
            cliponaxis=False,
        )
    low = float(min(table[constants.COL_COSINE_B].min(), table[constants.COL_COSINE_SHOULD_WIN].min())) if not table.empty else 0.0
    fig.update_layout(
        barmode="group",
        title="Cosine with sentence A: the higher passage is returned first",
        xaxis={"title": "cosine similarity", "range": [min(0.0, low), 1.0]},
        yaxis={"autorange": "reversed"},
        height=140 + 60 * len(table),
        margin=_MARGIN,
        legend={"orientation": "h", "y": -0.25},
    )
    return fig
