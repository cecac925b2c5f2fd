"""The "Your corpus" page's drawing helpers: one card per close pair (every model's cosine, the differing words marked), grouped by
mode; the twin-share curve; the map."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from core import constants, lexicon
from core.audit.findings import mode_words
from core.models.registry import model_color
from core.words import word_changes
from ui.charts import plot_text
from ui.state import short
from ui.widgets import downloads, marked_text, md_escape, selected_rows


def _cosines_line(cosines: dict[str, float], threshold: float) -> str:
    """Every model's cosine for one pair, the ones above the threshold in bold."""
    parts = [
        f"{md_escape(short(m))} **{c:.3f}**" if c > threshold else f"{md_escape(short(m))} {c:.3f} (below {threshold:.2f})"
        for m, c in cosines.items()
    ]
    return "cosine: " + " · ".join(parts)


def pair_card(card: dict, threshold: float) -> None:
    """One close pair in a bordered box: its passages' ids, every model's cosine, both texts in full, the differing words marked."""
    marks_a, marks_b = word_changes(str(card["text_a"]), str(card["text_b"]))
    with st.container(border=True):
        st.caption(f"Passages {md_escape(card['id_a'])} and {md_escape(card['id_b'])} · {_cosines_line(card['cosines'], threshold)}")
        left, right = st.columns(2)
        left.markdown(marked_text(marks_a))
        right.markdown(marked_text(marks_b))


def pair_cards(cards: pd.DataFrame, limit: int, threshold: float) -> None:
    """The first ``limit`` cards (``core.audit.findings.pair_cards``), under one heading per mode (twins) or kind."""
    shown = cards.head(limit)
    groups = [mode_words(str(m)) if k == "twin" else str(k) for m, k in zip(shown["mode"], shown["kind"], strict=True)]
    every = [mode_words(str(m)) if k == "twin" else str(k) for m, k in zip(cards["mode"], cards["kind"], strict=True)]
    for group in dict.fromkeys(groups):
        total = every.count(group)
        st.subheader(f"{group} · {total:,} pair{'' if total == 1 else 's'}", divider="gray")
        for card, name in zip(shown.to_dict(orient="records"), groups, strict=True):
            if name == group:
                pair_card(card, threshold)


def twin_curve_figure(curve: pd.DataFrame, threshold: float) -> go.Figure:
    """Share of passages with a confusable twin against the threshold, one line per model, the chosen threshold dashed."""
    data = curve.assign(model_label=curve[constants.COL_MODEL].map(short))
    fig = px.line(
        data,
        x="threshold",
        y="twin_share",
        color="model_label",
        color_discrete_map={short(m): model_color(m) for m in curve[constants.COL_MODEL].unique()},
        labels={"threshold": "threshold", "twin_share": "passages with a twin", "model_label": "model"},
        title="Share of passages with a confusable twin above each threshold",
    )
    fig.add_vline(x=threshold, line_dash="dash", line_color="black")
    fig.update_yaxes(tickformat=".0%", rangemode="tozero")
    fig.update_layout(height=360, margin={"l": 10, "r": 10, "t": 60, "b": 10})
    return fig


MAP_BACKGROUND_POINTS = 5_000  # passages without a twin drawn on the map at most (a seeded sample beyond)


def map_figure(coords: np.ndarray, twins: pd.DataFrame, passages: list[str], method: str) -> go.Figure:
    """The corpus on a 2-D map: passages as grey points, each twin pair a line between its two passages, coloured by mode.

    Every point trace's ``customdata`` holds passage indices (what :func:`core.audit` rows call ``index_a``/``index_b``).
    """
    fig = go.Figure()
    linked = set(twins["index_a"].tolist()) | set(twins["index_b"].tolist())
    rest = np.array([i for i in range(len(passages)) if i not in linked], dtype=int)
    if rest.size > MAP_BACKGROUND_POINTS:
        rest = np.sort(np.random.default_rng(0).choice(rest, MAP_BACKGROUND_POINTS, replace=False))
    fig.add_trace(
        go.Scattergl(
            x=coords[rest, 0],
            y=coords[rest, 1],
            mode="markers",
            customdata=rest,
            name="no twin",
            marker={"size": 5, "color": "lightgrey"},
            text=[plot_text(passages[i][:120]) for i in rest],
            hovertemplate="%{text}<extra></extra>",
        )
    )
    palette = px.colors.qualitative.D3
    for k, mode in enumerate(lexicon.FAILURE_MODES):
        mine = twins[twins["mode"] == mode]
        if mine.empty:
            continue
        color = palette[k % len(palette)]
        xs, ys = [], []
        for a, b in zip(mine["index_a"].tolist(), mine["index_b"].tolist(), strict=True):
            xs += [coords[a, 0], coords[b, 0], None]
            ys += [coords[a, 1], coords[b, 1], None]
        label = mode_words(mode)
        fig.add_trace(
            go.Scatter(x=xs, y=ys, mode="lines", line={"color": color, "width": 1.5}, hoverinfo="skip", showlegend=False, legendgroup=label)
        )
        members = np.array(sorted(set(mine["index_a"].tolist()) | set(mine["index_b"].tolist())), dtype=int)
        fig.add_trace(
            go.Scatter(
                x=coords[members, 0],
                y=coords[members, 1],
                mode="markers",
                customdata=members,
                name=label,
                legendgroup=label,
                marker={"size": 8, "color": color},
                text=[plot_text(passages[i][:120]) for i in members],
                hovertemplate="%{text}<extra>" + label + "</extra>",
            )
        )
    fig.update_layout(
        title=f"Your corpus on a 2-D map ({method}); lines join confusable twins",
        height=520,
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        xaxis={"showticklabels": False, "title": ""},
        yaxis={"showticklabels": False, "title": ""},
        legend_title_text="twin pairs by mode",
    )
    return fig


def corpus_map(
    coords: np.ndarray,
    twins: pd.DataFrame,
    passages: list[str],
    ids: list[str],
    method: str,
    key: str,
    cards: pd.DataFrame,
    threshold: float,
) -> None:
    """The map, and for a clicked point its passage and each of its twins (``cards``: each pair once, every model's cosine)."""
    fig = map_figure(coords, twins, passages, method)
    event = st.plotly_chart(fig, width="stretch", key=key, on_select="rerun", selection_mode="points")
    points = pd.DataFrame({"id": ids, "x": coords[:, 0], "y": coords[:, 1], "passage": passages})
    downloads(points, f"{key.removeprefix('chart-')} points")
    picked = selected_rows(event, fig)
    if not picked:
        st.caption("Click a point to read its passage and its twins.")
        return
    index = picked[0]
    st.markdown(f"**Passage {md_escape(ids[index])}:** {md_escape(passages[index])}")
    mine = cards[(cards["index_a"] == index) | (cards["index_b"] == index)]
    if mine.empty:
        st.caption("No confusable twin above the threshold.")
    for card in mine.to_dict(orient="records"):
        pair_card(card, threshold)
