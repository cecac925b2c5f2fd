"""The "Your corpus" page's drawing helpers: twin pairs side by side with the differing words marked, the twin-share curve."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from core import constants
from core.audit.kinds import marked_tokens
from core.models.registry import model_color
from ui.state import short
from ui.widgets import md_escape


def marked_markdown(tokens: list[tuple[str, bool]]) -> str:
    """A text as inert Markdown with its differing words highlighted (every token escaped; only our highlight is Markdown)."""
    out = []
    for token, changed in tokens:
        escaped = md_escape(token)
        out.append(f":orange-background[**{escaped}**]" if changed else escaped)
    return "".join(out)


def twin_pairs(pairs: pd.DataFrame, limit: int) -> None:
    """The first ``limit`` pairs (worst first), each in a bordered box: both texts in full, differing words marked."""
    for row in pairs.head(limit).itertuples(index=False):
        marks_a, marks_b = marked_tokens(row.text_a, row.text_b)
        with st.container(border=True):
            what = row.mode.replace("_", " ") if row.kind == "twin" else row.kind
            st.caption(f"{md_escape(short(row.model))} · cosine {row.cosine:.3f} · {md_escape(what)} · passages {md_escape(row.id_a)} and {md_escape(row.id_b)}")
            left, right = st.columns(2)
            left.markdown(marked_markdown(marks_a))
            right.markdown(marked_markdown(marks_b))


def twin_curve_figure(curve: pd.DataFrame, threshold: float) -> go.Figure:
    """Share of passages with a confusable twin against the threshold, one line per model, the chosen threshold dashed."""
    data = curve.assign(model_label=curve[constants.COL_MODEL].map(short))
    fig = px.line(data, x="threshold", y="twin_share", color="model_label",
                  color_discrete_map={short(m): model_color(m) for m in curve[constants.COL_MODEL].unique()},
                  labels={"threshold": "threshold", "twin_share": "passages with a twin", "model_label": "model"},
                  title="Share of passages with a confusable twin above each threshold")
    fig.add_vline(x=threshold, line_dash="dash", line_color="black")
    fig.update_yaxes(tickformat=".0%", rangemode="tozero")
    fig.update_layout(height=360, margin={"l": 10, "r": 10, "t": 60, "b": 10})
    return fig
