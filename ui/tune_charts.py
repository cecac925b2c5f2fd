"""The Tune page's before/after chart (``core.probes.tune`` tables in, a figure out)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from core import constants
from ui.charts import ci_error
from ui.retrieval_charts import mode_label

_MARGIN = {"l": 10, "r": 10, "t": 60, "b": 10}


def before_after_figure(win_rates: pd.DataFrame, split: str) -> go.Figure:
    """Win rate by failure mode, one bar per setting (untouched, tuned, control…), for one split, with 95% intervals.

    Args:
        win_rates: :func:`core.probes.tune.report.win_table`'s rows.
        split: ``held-out`` or ``training``.
    """
    part = win_rates[win_rates[constants.COL_SPLIT] == split]
    fig = go.Figure()
    for setting, rows in part.groupby(constants.COL_SETTING, sort=False):
        fig.add_bar(
            x=[mode_label(m) for m in rows[constants.COL_MODE]],
            y=rows[constants.COL_WIN_RATE],
            name=str(setting),
            error_y=ci_error(rows[constants.COL_WIN_RATE], rows[constants.COL_CI_LOW], rows[constants.COL_CI_HIGH]),
        )
    fig.update_layout(
        title=f"Win rate before and after tuning · {split} half",
        barmode="group",
        yaxis={"title": "variants that outrank the paraphrase", "tickformat": ".0%", "range": [0, 1.05]},
        legend={"title": "setting"},
        margin=_MARGIN,
    )
    return fig
