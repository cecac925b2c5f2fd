"""The Index settings page's chart: one metric per setting with its 95% interval (``core.probes.compression`` table in, a figure out)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from core import constants
from ui.charts import category_label, ci_error

_MARGIN = {"l": 10, "r": 10, "t": 60, "b": 10}
RATE_METRICS = ("failure_rate", "match_rate", "failure_rate_own_threshold", "match_rate_own_threshold", "win_rate", "paired_accuracy")


def settings_figure(table: pd.DataFrame, metric: str, title: str) -> go.Figure:
    """``metric`` per setting (x), one bar per mode, with 95% intervals; settings in the order they ran.

    Args:
        table: rows of :func:`core.probes.compression.run_index_settings`'s table for one model and probe.
        metric: the metric to draw (``failure_rate``, ``win_rate``, ``recall_at_1``, ``mean_score`` ...).
        title: the chart's title.
    """
    part = table[table["metric"] == metric]
    settings = list(dict.fromkeys(part["setting"]))
    fig = go.Figure()
    for mode, rows in part.groupby(constants.COL_MODE, sort=False):
        fig.add_bar(
            x=rows["setting"],
            y=rows["value"],
            name=category_label(str(mode)),
            error_y=ci_error(rows["value"], rows["ci_low"].fillna(rows["value"]), rows["ci_high"].fillna(rows["value"])),
            hovertemplate="%{x}: %{y:.3f}<extra>" + category_label(str(mode)) + "</extra>",
        )
    rate = metric in RATE_METRICS or metric.startswith("recall_at_")
    fig.update_layout(
        title=title,
        barmode="group",
        xaxis={"title": "index setting", "categoryorder": "array", "categoryarray": settings},
        yaxis={"title": metric.replace("_", " "), **({"tickformat": ".0%", "range": [0, 1.05]} if rate else {})},
        legend={"title": "mode"},
        margin=_MARGIN,
    )
    return fig
