"""Your data's label charts: cosine by label per model, and the ROC of cosine as a classifier of the label.

Tables come from :func:`core.probes.labels.label_report`; here is only drawing.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from core import constants
from core.models.registry import model_color
from core.probes.labels import label_words
from ui.state import short


def cosine_by_label_figure(results: pd.DataFrame, models: list[str], threshold: float, match_label: object = None) -> go.Figure:
    """Box plots of cosine per label, one colour per model (legend), the threshold as a labelled line; match and
    no-match labels read "match (1)" / "no match (0)" on the axis (``core.probes.labels.label_words``).

    Args:
        results: tidy results with a non-empty ``label`` column, shape (n, k).
        models: the models in the page's order (the sidebar's).
        threshold: the sidebar threshold.
        match_label: the page's choice of the label that means "same meaning" (None: the default words).
    """
    results = results.reset_index(drop=True)
    data = results[results[constants.COL_LABEL].astype("string").str.strip().fillna("") != ""]
    data = data.assign(**{constants.COL_LABEL: label_words(data[constants.COL_LABEL], match_label)})
    fig = go.Figure()
    for model in models:
        mine = data[data[constants.COL_MODEL] == model]
        # customdata: each point's row in ``results``, so a click on a point shows that pair (ui.widgets.pair_chart).
        fig.add_trace(
            go.Box(
                x=mine[constants.COL_LABEL].astype(str),
                y=mine[constants.COL_COSINE],
                name=short(model),
                marker_color=model_color(model),
                boxpoints="all",
                jitter=0.3,
                pointpos=0,
                showlegend=True,
                customdata=list(mine.index),
                hovertemplate="%{y:.4f}<extra>" + short(model) + "</extra>",
            )
        )
    fig.add_hline(
        y=threshold, line_dash="dash", line_color="black", annotation_text=f"threshold {threshold:.2f}", annotation_position="top left"
    )
    fig.update_layout(
        boxmode="group",
        title="Cosine by label, per model",
        xaxis={"title": "label", "type": "category"},
        yaxis={"title": "cosine", "range": [-0.05, 1.05]},
        legend={"title": "model", "orientation": "h", "y": -0.2},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
    )
    return fig


def label_roc_figure(roc: pd.DataFrame, classifier: pd.DataFrame, models: list[str]) -> go.Figure:
    """One ROC curve per model (AUC in the legend), the best (Youden) threshold as a star.

    Curves that coincide are said in the legend ("same curve as …") rather than hidden under each other.

    Args:
        roc: ``label_report(...)["roc"]``: model, threshold, fpr, tpr.
        classifier: ``label_report(...)["classifier"]``.
        models: the page's model order.
    """
    fig = go.Figure()
    seen: dict[tuple, str] = {}
    for model in (m for m in models if m in set(roc[constants.COL_MODEL])):
        curve = roc[roc[constants.COL_MODEL] == model]
        row = classifier[classifier[constants.COL_MODEL] == model].iloc[0]
        color = model_color(model)
        key = (tuple(curve["fpr"].round(6)), tuple(curve["tpr"].round(6)))
        same = f", same curve as {seen[key]}" if key in seen else ""
        seen.setdefault(key, short(model))
        fig.add_trace(
            go.Scatter(
                x=curve["fpr"],
                y=curve["tpr"],
                mode="lines",
                name=f"{short(model)} (AUC {row['auc']:.3f}{same})",
                line={"color": color, "shape": "hv", "dash": "dot" if same else "solid"},
                customdata=curve["threshold"],
                hovertemplate="threshold %{customdata:.3f}: TPR %{y:.2f}, FPR %{x:.2f}<extra></extra>",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=[row["best_fpr"]],
                y=[row["best_tpr"]],
                mode="markers",
                marker={"symbol": "star", "size": 13, "color": color},
                name=f"{short(model)} best threshold {row['best_threshold']:.3f}",
            )
        )
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line={"dash": "dot", "color": "gray"}, name="chance", hoverinfo="skip"))
    fig.update_layout(
        title="Cosine as a classifier of your label (ROC)",
        xaxis={"title": "false-positive rate", "range": [-0.02, 1.02]},
        yaxis={"title": "true-positive rate", "range": [-0.02, 1.02]},
        height=460,
        legend={"orientation": "h", "y": -0.25},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
    )
    return fig
