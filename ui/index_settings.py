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
from core.probes.index_settings import FLOAT32, NOT_MADE, changed_cells, chart_cells, metric_words
from ui.charts import category_label

_MARGIN = {"l": 10, "r": 10, "t": 60, "b": 10}


OWN_MARK = "†"  # a cell read at the setting's own threshold (a binary setting: its scores are not cosines)


def changes_figure(table: pd.DataFrame, metric: str, title: str) -> go.Figure:
    """``metric`` per setting (x) and mode (y); each cell reads the setting's value, coloured when it moved.

    Only a cell that moved beyond the intervals (:func:`core.probes.index_settings.changed_cells`) is coloured, by
    its change against float32, and marked ``*``: a drift inside the intervals stays white, so what changed stands
    out.  A binary setting's rate is at its own threshold and marked ``†`` (:func:`core.probes.index_settings.chart_cells`);
    a figure the setting does not make reads ``—``.

    Args:
        table: rows of :func:`core.probes.index_settings.run_index_settings`'s table for one model and probe.
        metric: the metric to draw (``failure_rate``, ``win_rate``, ``recall_at_1``, ``mean_score`` ...).
        title: the chart's title.
    """
    cells = chart_cells(table, metric)
    settings = [s for s in dict.fromkeys(table["setting"]) if s != FLOAT32]
    modes = list(dict.fromkeys(table.loc[table["metric"] == metric, constants.COL_MODE]))
    modes += [m for m in dict.fromkeys(cells[constants.COL_MODE]) if m not in modes]
    z = np.full((len(modes), len(settings)), np.nan)
    text = [[NOT_MADE] * len(settings) for _ in modes]
    changes: list[list[float]] = [[np.nan] * len(settings) for _ in modes]
    columns = (cells["setting"], cells[constants.COL_MODE], cells["value"].to_numpy(float), cells["change"].to_numpy(float))
    for setting, mode, value, change, moved, own in zip(*columns, cells["moved"], cells["own_threshold"], strict=True):
        i, j = modes.index(mode), settings.index(setting)
        z[i, j] = change if moved else 0.0
        changes[i][j] = change
        text[i][j] = f"{value:.2f}{'*' if moved else ''}{OWN_MARK if own else ''}"
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


def own_threshold_note(table: pd.DataFrame, metric: str) -> str | None:
    """The sentence under a chart of ``metric`` whose binary cells are at their own threshold (``†``), or None."""
    cells = chart_cells(table, metric)
    own = list(dict.fromkeys(cells.loc[cells["own_threshold"], "setting"]))
    if not own:
        return None
    return (
        f"{OWN_MARK} {', '.join(own)}: at {'its' if len(own) == 1 else 'their'} own calibrated threshold (scores on another scale "
        "than a cosine are never read at the cosine one); the change is against float32 at its own threshold."
    )


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
