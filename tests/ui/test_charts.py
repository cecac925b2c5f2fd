"""ui.charts category helpers: cell text, category order, threshold marker."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core import constants, lexicon
from core.scoring import tables
from ui import charts


def _results():
    rows = []
    for model, shift in (("sentence-transformers/all-MiniLM-L6-v2", 0.0), ("other/model", 0.05)):
        for cat, values in (
            (constants.CAT_NEGATION, [0.8, 0.9, 0.95]),
            (constants.CAT_POSITIVE, [0.7, 0.75, 0.8]),
            ("mine", [0.2, 0.4, 0.6]),
        ):
            rows += [
                {constants.COL_MODEL: model, constants.COL_SUITE: "s", constants.COL_CATEGORY: cat, constants.COL_COSINE: v + shift}
                for v in values
            ]
    return pd.DataFrame(rows)


def test_heatmap_cells_read_mean_pm_sd_in_paper_order():
    summary = tables.category_summary(_results())
    fig, frame = charts.category_heatmap(summary)
    heat = fig.data[0]
    assert list(heat.y) == ["Positive control", "Negation", "mine"]  # Table 1 order, user categories last
    assert list(heat.x) == ["MiniLM-L6", "other/model"]
    row = summary[(summary[constants.COL_MODEL] == "other/model") & (summary[constants.COL_CATEGORY] == constants.CAT_NEGATION)].iloc[0]
    assert heat.text[1][1] == f"{row['mean']:.3f} ± {row['sd']:.3f}"
    assert len(frame) == 6


def test_curves_marker_sits_at_threshold_in_every_panel():
    curves = tables.failure_rate_curves(_results())
    fig = charts.failure_rate_curves_figure(curves, 0.83)
    xs = [s.x0 for s in fig.layout.shapes]
    assert len(xs) == 3 and set(xs) == {0.83}  # one marker per category panel
    assert {t.name for t in fig.data} == {"MiniLM-L6", "other/model"}


def test_failure_rate_bars_error_bars_are_the_ci():
    summary = tables.category_summary(_results(), 0.7)
    fig = charts.failure_rate_bars(summary, 0.7)
    first = fig.data[0]
    mine = summary[summary[constants.COL_MODEL] == "sentence-transformers/all-MiniLM-L6-v2"].set_index(constants.COL_CATEGORY)
    neg = list(first.x).index("Negation")
    assert first.y[neg] == mine.loc[constants.CAT_NEGATION, "failure_rate"]
    assert first.y[neg] + first.error_y.array[neg] == pytest.approx(mine.loc[constants.CAT_NEGATION, "fr_ci_high"])


def test_perturbation_legend_says_what_fill_means_when_every_dot_agrees():
    table = pd.DataFrame(
        {
            constants.COL_MODEL: ["m/a", "m/a"],
            "label": ["Negation: x", "Temporal: y"],
            constants.COL_COSINE: [0.9, 0.95],
            constants.COL_THRESHOLD: [0.85, 0.85],
        }
    )
    fig = charts.perturbation_figure(table)
    dots = next(t for t in fig.data if t.name == "m/a")
    assert list(dots.marker.symbol) == ["circle", "circle"]  # every variant above the threshold
    legend = {t.name: t.marker.symbol for t in fig.data if t.showlegend is not False and (t.visible is None or t.visible is True)}
    assert legend["filled: above threshold (treated as the same)"] == "circle"
    assert legend["open: at or below threshold"] == "circle-open"
    assert [s.x0 for s in fig.layout.shapes] == [0.85]  # one shared threshold: one line, no per-model legend entry
    assert "m/a threshold" not in legend


def test_perturbation_axis_zooms_on_dots_at_096_to_099_and_names_a_far_threshold():
    """Every variant at 0.96-0.99 on a 0-1 axis was one blur; the title ran under the modebar at the top right."""
    table = pd.DataFrame(
        {
            constants.COL_MODEL: ["m/a"] * 3,
            "label": ["Negation: x", "Temporal: y", "Numeric: z"],
            constants.COL_COSINE: [0.96, 0.975, 0.99],
            constants.COL_THRESHOLD: [0.8] * 3,
        }
    )
    fig = charts.perturbation_figure(table)
    low, high = fig.layout.xaxis.range
    assert 0.85 <= low < 0.96 and 0.99 < high <= 1.01  # the dots span at least a third of the axis
    assert (0.99 - 0.96) / (high - low) > 1 / 3
    assert not fig.layout.shapes  # the far threshold is not a line off the axis...
    assert any("threshold 0.80" in a.text and "every dot is above it" in a.text for a in fig.layout.annotations)  # ...it is named
    assert fig.layout.title.xanchor == "left" and len(fig.layout.title.text) <= 45  # clear of the modebar
    near = table.assign(**{constants.COL_THRESHOLD: [0.97] * 3})
    near_fig = charts.perturbation_figure(near)
    assert [s.x0 for s in near_fig.layout.shapes] == [0.97] and not near_fig.layout.annotations[1:]


L6, INT8 = "sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2-int8"


def test_one_colour_per_model_on_every_chart_and_twins_are_told_apart():
    """A model keeps its colour from page to page; MiniLM-L6 and its int8 twin differ in colour and never hide each other."""
    from core.models.registry import model_color

    assert model_color(L6) == model_color("MiniLM-L6") != model_color(INT8)
    assert model_color("someone/custom-model") == model_color("someone/custom-model")  # stable without a registry entry
    rows = [
        {constants.COL_MODEL: m, constants.COL_SUITE: "s", constants.COL_CATEGORY: constants.CAT_NEGATION, constants.COL_COSINE: c}
        for m in (INT8, L6)
        for c in (0.8, 0.9)
    ]  # identical scores: the twin case
    bars = charts.failure_rate_bars(tables.category_summary(pd.DataFrame(rows), 0.85), 0.85)
    assert {t.marker.color for t in bars.data} == {model_color(L6), model_color(INT8)}
    curves = charts.failure_rate_curves_figure(tables.failure_rate_curves(pd.DataFrame(rows)), 0.85)
    assert {t.line.color for t in curves.data} == {model_color(L6), model_color(INT8)} and len({t.line.dash for t in curves.data}) == 2
    table = pd.DataFrame(
        {
            constants.COL_MODEL: [L6, INT8],
            "label": ["Negation: x"] * 2,
            constants.COL_COSINE: [0.9, 0.9],
            constants.COL_THRESHOLD: [0.7, 0.7],
        }
    )
    fig = charts.perturbation_figure(table)
    dots = [t for t in fig.data if t.name in ("MiniLM-L6", "MiniLM-L6 int8 (ONNX)")]
    assert fig.layout.scattermode == "group" and {t.offsetgroup for t in dots} == {L6, INT8}  # side by side, not on top of each other


def test_share_above_panels_leave_no_empty_panel():
    cats = [*lexicon.PAPER_MODES, constants.CAT_POSITIVE]  # 7 panels in rows of 3: two grid cells have no data
    rows = [
        {constants.COL_MODEL: L6, constants.COL_SUITE: "s", constants.COL_CATEGORY: c, constants.COL_COSINE: v}
        for c in cats
        for v in (0.5, 0.9)
    ]
    fig = charts.failure_rate_curves_figure(tables.failure_rate_curves(pd.DataFrame(rows)), 0.7)
    layout = fig.layout.to_plotly_json()
    axes = [k for k in layout if k.startswith("xaxis")]
    hidden = [k for k in axes if layout[k].get("visible") is False]
    assert len(axes) == 9 and len(hidden) == 2
    assert len(fig.layout.shapes) == 7  # a threshold line in every drawn panel, none in the hidden cells


def test_before_after_panels_keep_their_titles_apart():
    """Four panel titles in one row overlapped at 1280 px; now two panels a row, each title on two lines."""
    from core import constants
    from ui.retrieval_charts import before_after_figure

    rows = []
    for model in ("sentence-transformers/all-MiniLM-L6-v2", "sentence-transformers/all-mpnet-base-v2"):
        for mitigation in (constants.MITIGATION_NONE, constants.MITIGATION_GUARD):
            rows.append(
                {
                    constants.COL_MODEL: model,
                    constants.COL_MITIGATION: mitigation,
                    constants.COL_WIN_RATE: 0.4,
                    "win_ci_low": 0.3,
                    "win_ci_high": 0.5,
                    constants.COL_PAIRED_ACCURACY: 0.6,
                    "paired_ci_low": 0.5,
                    "paired_ci_high": 0.7,
                    constants.COL_RECALL_AT[1]: 0.8,
                    constants.COL_TOP1_CONTRADICTION: 0.1,
                }
            )
    fig = before_after_figure(pd.DataFrame(rows))
    titles = [a for a in fig.layout.annotations if "better" in a.text]
    assert len(titles) == 4 and all("<br>" in a.text for a in titles)
    by_row: dict[float, list[float]] = {}
    for a in titles:
        by_row.setdefault(round(a.y, 3), []).append(a.x)
    assert len(by_row) == 2 and all(len(xs) == 2 and abs(xs[0] - xs[1]) >= 0.45 for xs in by_row.values())
    assert sum(trace.showlegend is not False for trace in fig.data) == 2  # one legend entry per model


def test_curves_draw_each_line_through_the_points_that_bend_it():
    """A flat stretch of a rate curve is drawn from its two ends: the same line, with a quarter of the points to draw
    (Chromium took 1.2-2.4 s to draw the Failure modes tab of 4 models x 8 modes at every 0.01, 0.13-0.6 s after)."""
    curves = tables.failure_rate_curves(_results())
    fig = charts.failure_rate_curves_figure(curves, 0.83)
    drawn = sum(len(t.x) for t in fig.data)
    assert drawn < len(curves) / 2
    for trace in fig.data:
        model = next(m for m in curves[constants.COL_MODEL].unique() if charts.short(m) == trace.name)
        label = trace.hovertemplate.split("category=")[1].split("<br>")[0]
        full = curves[(curves[constants.COL_MODEL] == model) & (curves[constants.COL_CATEGORY].map(charts.category_label) == label)]
        # Every grid point lies on the drawn line: linear between the points kept, the ends kept.
        assert np.interp(full["threshold"], np.asarray(trace.x, float), np.asarray(trace.y, float)) == pytest.approx(full["failure_rate"])
        assert (trace.x[0], trace.x[-1]) == (full["threshold"].iloc[0], full["threshold"].iloc[-1])
