"""The Index settings page's chart and change table: what each setting changed against float32 (``core.probes.index_settings`` in).

Ten settings by nine modes as bars is ninety bars; the chart is one cell per setting and mode, coloured by the
change against float32, so the cells that did not move fade out and the few that did stand out.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core import constants
from core.probes.index_settings import FLOAT32, NOT_MADE, changed_cells, metric_words
from ui.charts import category_label

_MARGIN = {"l": 10, "r": 10, "t": 60, "b": 10}


def changes_figure(table: pd.DataFrame, metric: str, title: str) -> go.Figure:
    """``metric`` per setting (x) and mode (y); each cell reads the setting's value, coloured when it moved.

    Only a cell that moved beyond the intervals (:func:`core.probes.index_settings.changed_cells`) is coloured, by
    its change against float32, and marked ``*``: a drift inside the intervals stays white, so what changed stands
    out.  A figure the setting does not make (a binary setting at the cosine threshold) reads ``—``.

    Args:
        table: rows of :func:`core.probes.index_settings.run_index_settings`'s table for one model and probe.
        metric: the metric to draw (``failure_rate``, ``win_rate``, ``recall_at_1``, ``mean_score`` ...).
        title: the chart's title.
    """
    part = table[table["metric"] == metric]
    settings = [s for s in dict.fromkeys(table["setting"]) if s != FLOAT32]
    modes = list(dict.fromkeys(part[constants.COL_MODE]))
    moved = changed_cells(table)
    moved = moved[moved["metric"] == metric]
    marked = set(zip(moved["setting"], moved[constants.COL_MODE], strict=True))
    cells = part.set_index(["setting", constants.COL_MODE])
    z = np.full((len(modes), len(settings)), np.nan)
    text = [[NOT_MADE] * len(settings) for _ in modes]
    changes = [[np.nan] * len(settings) for _ in modes]
    for i, mode in enumerate(modes):
        for j, setting in enumerate(settings):
            if (setting, mode) not in cells.index:
                continue
            row = cells.loc[(setting, mode)]
            moved_here = (setting, mode) in marked
            z[i, j] = row["change"] if moved_here else 0.0
            changes[i][j] = row["change"]
            text[i][j] = f"{row['value']:.2f}{'*' if moved_here else ''}"
    span = float(np.nanmax(np.abs(z))) if np.isfinite(z).any() else 0.0
    fig = go.Figure(
        go.Heatmap(
            x=settings,
            y=[category_label(str(m)) for m in modes],
            z=z,
            text=text,
            texttemplate="%{text}",
            zmid=0,
            zmin=-max(span, 0.1),
            zmax=max(span, 0.1),
            customdata=changes,
            colorscale="RdBu_r",
            colorbar={"title": "change"},
            hovertemplate="%{x} · %{y}: %{text}, change %{customdata:+.3f} against float32<extra></extra>",
            xgap=2,
            ygap=2,
        )
    )
    fig.update_layout(
        title=title,
        xaxis={"title": "index setting", "side": "bottom"},
        yaxis={"title": "", "autorange": "reversed"},
        height=max(260, 60 + 34 * len(modes)),
        margin=_MARGIN,
    )
    return fig


def changes_table(table: pd.DataFrame, short_name: Callable[[str], str] = str) -> pd.DataFrame:
    """The figures that moved beyond the intervals, worded for reading: model, probe, figure, mode, setting, float32, setting, change."""
    moved = changed_cells(table)
    cell = [
        f"{v:.3f}" if pd.isna(lo) else f"{v:.3f} [{lo:.2f}, {hi:.2f}]"
        for v, lo, hi in zip(moved["value"], moved["ci_low"], moved["ci_high"], strict=True)
    ]
    return pd.DataFrame(
        {
            "model": moved[constants.COL_MODEL].map(short_name),
            "probe": moved["probe"],
            "figure": moved["metric"].map(metric_words),
            "mode": moved[constants.COL_MODE].map(lambda m: category_label(str(m))),
            "setting": moved["setting"],
            "float32": moved[FLOAT32].round(3),
            "with the setting": cell,
            "change": moved["change"].round(3),
        }
    )
