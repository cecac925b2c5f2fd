"""Why a score, on the pages: Compare's "Why this score" section and OOV robustness's layer-wise section.

Both only draw: the attributions, completeness checks, layer curves and
their intervals come from :mod:`core.probes.explain` through the cached
wrappers in :mod:`ui.resources`.  Tokens reach the charts as Plotly text with
``&``, ``<`` and ``>`` written as entities, so a typed ``<b>`` stays text.
"""

from __future__ import annotations

import re

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core import constants
from core.models import registry
from core.models.loading import ModelUnavailable
from core.probes.explain import TABLE_COLUMNS, top_units
from core.probes.explain.layers import COL_GAP
from ui import charts, resources, widgets
from ui.state import Selection, model_error, short

KEY_ON = "why_on"
KEY_METHOD = "why_method"
KEY_UNIT = "why_unit"
KEY_STEPS = "why_steps"
KEY_OOV_ON = "oov_layers_on"
KEY_OOV_SCALE = "oov_layers_scale"
METHOD_LABELS = {
    constants.METHOD_OCCLUSION: "Occlusion (remove each token; every model)",
    constants.METHOD_IG: "Integrated gradients (torch models)",
}
UNIT_LABELS = {constants.UNIT_TOKEN: "one token", constants.UNIT_WORD: "one word"}
SIDE_LABELS = {constants.SIDE_A: "Sentence A", constants.SIDE_B: "Sentence B"}
NORMALIZED, RAW = "share of the layer's dynamic range", "raw cosine gap"
# Red pulls the two sentences apart, blue holds them together.
ATTRIBUTION_SCALE = "RdBu"


def plotly_text(text: str) -> str:
    """Text Plotly shows as typed: its pseudo-HTML (``<b>``, ``<a href>``) written as entities."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _is_torch(name: str) -> bool:
    try:
        return registry.resolve(name).backend == registry.BACKEND_TORCH
    except ValueError:
        return False


# ----------------------------------------------------------------- Compare: why this score


def token_figure(table: pd.DataFrame, title: str) -> go.Figure:
    """Both sentences as rows of cells, each token shaded by its attribution (0 is white)."""
    fig = go.Figure()
    limit = float(table[constants.COL_ATTRIBUTION].abs().max() or 1.0)
    width = int(table.groupby(constants.COL_SIDE)[constants.COL_POSITION].max().max()) + 1 if not table.empty else 1
    sides = [s for s in (constants.SIDE_A, constants.SIDE_B) if s in set(table[constants.COL_SIDE])]
    z, text, hover = [], [], []
    for side in sides:
        rows = table[table[constants.COL_SIDE] == side].set_index(constants.COL_POSITION).reindex(range(width))
        z.append(rows[constants.COL_ATTRIBUTION].tolist())
        text.append(["" if t != t else plotly_text(str(t)) for t in rows[constants.COL_TOKEN]])
        hover.append(
            [
                "" if t != t else f"{plotly_text(str(t))} (word {plotly_text(str(w))}): {a:+.4f}"
                for t, w, a in zip(rows[constants.COL_TOKEN], rows[constants.COL_WORD], rows[constants.COL_ATTRIBUTION], strict=True)
            ]
        )
    fig.add_trace(
        go.Heatmap(
            z=z,
            y=[SIDE_LABELS[s] for s in sides],
            x=list(range(width)),
            text=text,
            customdata=hover,
            texttemplate="%{text}",
            hovertemplate="%{customdata}<extra></extra>",
            colorscale=ATTRIBUTION_SCALE,
            zmid=0.0,
            zmin=-limit,
            zmax=limit,
            colorbar={"title": "attribution"},
            xgap=2,
            ygap=6,
        )
    )
    fig.update_layout(
        title=title,
        height=220,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        yaxis={"autorange": "reversed"},
        xaxis={"title": "token position", "dtick": 1},
    )
    return fig


def layer_figure(curve: pd.DataFrame, title: str) -> go.Figure:
    """The pair's cosine at every layer, embeddings (0) to last."""
    fig = go.Figure(
        go.Scatter(
            x=curve[constants.COL_LAYER],
            y=curve[constants.COL_COSINE],
            mode="lines+markers",
            name="cosine",
            hovertemplate="layer %{x}: %{y:.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=title,
        height=300,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        xaxis={"title": "layer (0 = embeddings)", "dtick": 1},
        yaxis={"title": "cosine of mean-pooled states"},
    )
    return fig


def _completeness(name: str, explanation) -> None:
    check = explanation.completeness
    if check is None:
        return
    change = check.cosine - check.baseline_cosine
    # Only numbers and fixed words: nothing typed reaches this Markdown.
    line = (
        f"Completeness: the attributions sum to {check.attribution_sum:+.4f}; cos(pair) − cos(baseline pair) = "
        f"{check.cosine:.4f} − {check.baseline_cosine:.4f} = {change:+.4f} ({check.steps} steps, [{check.baseline.upper()}] baseline)."
    )
    if check.ok:
        st.caption(line + f" Miss {check.relative_miss:.2%}: within {constants.IG_MAX_RELATIVE_MISS:.0%}.")
        return
    miss = "∞" if check.relative_miss == float("inf") else f"{check.relative_miss:.1%}"
    st.warning(line + f" They miss by {miss}, more than {constants.IG_MAX_RELATIVE_MISS:.0%}: the integral is not yet converged.", icon="⚠️")
    steps = st.session_state.setdefault(KEY_STEPS, {})
    if st.button(f"Rerun with {check.more_steps} steps", key=f"why-steps-{_slug(name)}"):
        steps[name] = check.more_steps
        st.rerun()


def _unavailable(name: str, exc: ModelUnavailable) -> None:
    """A model that cannot load: its error box once per page (the run above may have shown it), else a pointer to it."""
    if not model_error(name, str(exc)):
        st.caption(f"{widgets.md_escape(short(name))} could not load; the error above says why and what to do.")


def _model_section(name: str, text_a: str, text_b: str, sel: Selection, method: str, unit: str) -> None:
    steps = st.session_state.get(KEY_STEPS, {}).get(name, constants.IG_STEPS)
    try:
        explanation, note = resources.explanation(name, sel.options_for(name), text_a, text_b, method, unit, steps, constants.IG_BASELINE)
    except ModelUnavailable as exc:
        _unavailable(name, exc)
        return
    except ValueError as exc:
        st.error(widgets.md_escape(str(exc)), icon="⛔")
        return
    if note:
        st.info(widgets.md_escape(note), icon="ℹ️")
    for side in explanation.truncated:
        st.warning(f"{SIDE_LABELS[side]} is longer than the model keeps; the cut tokens are not explained.", icon="✂️")
    how = (
        ("cosine drop when the token is removed" if explanation.unit == constants.UNIT_TOKEN else "cosine drop when the word is removed")
        if explanation.method == constants.METHOD_OCCLUSION
        else "integrated-gradients share of cos(pair) − cos(baseline pair)"
    )
    table = explanation.table
    widgets.chart(token_figure(table, f"cosine {explanation.cosine:.4f}; colour = {how}"), table, f"attributions {short(name)}")
    st.caption("Blue: the token holds the two sentences together (removing it lowers the cosine). Red: it pulls them apart.")
    _completeness(name, explanation)
    st.text("Top tokens")
    top = top_units(table)[[c for c in TABLE_COLUMNS if c not in (constants.COL_MODEL, constants.COL_METHOD, constants.COL_UNIT)]]
    widgets.table(
        top, f"top tokens {short(name)}", column_config={constants.COL_ATTRIBUTION: st.column_config.NumberColumn(format="%+.4f")}
    )
    if not _is_torch(name):
        st.caption("Layer-wise view: this model runs on ONNX here, which exposes no hidden states.")
        return
    try:
        curve = resources.layer_curve(name, sel.options_for(name), text_a, text_b)
    except ModelUnavailable as exc:
        _unavailable(name, exc)
        return
    except ValueError as exc:
        st.error(widgets.md_escape(str(exc)), icon="⛔")
        return
    widgets.chart(layer_figure(curve, "Cosine layer by layer"), curve, f"layer curve {short(name)}")
    st.caption(
        "The last layer is the model's own cosine; the middle layers' mean-pooled states are anisotropic (every pair scores high there)."
    )


def why_this_score(models: list[str], text_a: str, text_b: str, sel: Selection) -> None:
    """The "Why this score" section: a switch, the method, then one expander per model."""
    st.subheader("Why this score")
    on = st.toggle(
        "Explain each model's score",
        value=widgets.saved(KEY_ON, False),
        key=KEY_ON,
        on_change=widgets.persist,
        args=(KEY_ON,),
        help=(
            "Which tokens carry the cosine, and the cosine at every layer. Costs one forward pass per token (occlusion) or per step "
            "(gradients); results are cached."
        ),
    )
    if not on:
        return
    method = widgets.saved_radio("Attribution method", list(METHOD_LABELS), KEY_METHOD, format_func=METHOD_LABELS.get)
    unit = constants.UNIT_TOKEN
    if method == constants.METHOD_OCCLUSION:
        unit = widgets.saved_radio("Remove", list(UNIT_LABELS), KEY_UNIT, format_func=UNIT_LABELS.get)
    for i, name in enumerate(models):
        with st.expander(f"Why this score: {widgets.md_escape(short(name))}", expanded=i == 0):
            _model_section(name, text_a, text_b, sel, method, unit)


# ------------------------------------------------------------ OOV robustness: layer-wise view


def gap_figure(summary: pd.DataFrame, normalized: bool, title: str) -> go.Figure:
    """Mean gap (original − replaced cosine) per layer and model, with its bootstrap interval as whiskers."""
    value, low, high = ("normalized_gap", "norm_low", "norm_high") if normalized else ("mean_gap", "gap_low", "gap_high")
    fig = go.Figure()
    for model, part in summary.groupby(constants.COL_MODEL, sort=False):
        fig.add_trace(
            go.Scatter(
                x=part[constants.COL_LAYER],
                y=part[value],
                mode="lines+markers",
                name=short(model),
                error_y=charts.ci_error(part[value], part[low], part[high]),
                hovertemplate="layer %{x}: %{y:.3f}<extra>" + plotly_text(short(model)) + "</extra>",
            )
        )
    fig.add_hline(y=0, line_color="black", line_width=1)
    fig.update_layout(
        title=title,
        height=380,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        xaxis={"title": "layer (0 = embeddings)", "dtick": 1},
        yaxis={"title": NORMALIZED if normalized else RAW, "tickformat": ".0%" if normalized else ".2f"},
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


def entity_figure(gaps: pd.DataFrame, model: str) -> go.Figure:
    """Entity × layer heatmap of one model's gap."""
    wide = gaps[gaps[constants.COL_MODEL] == model].pivot_table(
        index=constants.COL_ENTITY, columns=constants.COL_LAYER, values=COL_GAP, sort=False
    )
    fig = go.Figure(
        go.Heatmap(
            z=wide.to_numpy(float),
            x=list(wide.columns),
            y=list(wide.index),
            colorscale="RdBu_r",
            zmid=0,
            texttemplate="%{z:.2f}",
            colorbar={"title": "gap"},
            hovertemplate="%{y} · layer %{x}: %{z:.3f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=f"{plotly_text(short(model))}: gap per entity and layer",
        height=max(360, 24 * len(wide) + 120),
        yaxis={"autorange": "reversed"},
        xaxis={"title": "layer", "dtick": 1},
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
    )
    return fig


def _oov_curves(models: list[str], sel: Selection) -> pd.DataFrame | None:
    frames = []
    # Not core.models.runs.model_runs: hidden states need the weights, so a cached vector is no use here.
    for name in models:
        try:
            frames.append(resources.oov_layer_curves(name, sel.options_for(name)))
        except ModelUnavailable as exc:
            _unavailable(name, exc)
        except ValueError as exc:
            st.error(widgets.md_escape(str(exc)), icon="⛔")
    return pd.concat(frames, ignore_index=True) if frames else None


def oov_layer_section(models: list[str], reading: str, sel: Selection) -> None:
    """OOV robustness's layer-wise section: where in the network the invented word pulls the pair apart."""
    st.subheader("Where in the network the gap appears")
    st.caption(
        "The OOV paper leaves open where the gap arises. For each entity: the cosine of the mean-pooled hidden states of the original "
        "pair and of "
        f"the pair with the invented word ({constants.OOV_READINGS[reading]}) at every layer; the gap is their difference, its last "
        "layer the OOV delta."
    )
    torch_models = [m for m in models if _is_torch(m)]
    if not torch_models:
        st.info(
            "The layer-wise view needs a torch model (ONNX exposes no hidden states here): select MiniLM-L6 or mpnet-base in the sidebar."
        )
        return
    on = st.toggle(
        "Compute the layer curves",
        value=widgets.saved(KEY_OOV_ON, False),
        key=KEY_OOV_ON,
        on_change=widgets.persist,
        args=(KEY_OOV_ON,),
        help="Encodes the OOV suite and the baseline controls once per torch model, keeping every layer; cached.",
    )
    if not on:
        return
    curves = _oov_curves(torch_models, sel)
    if curves is None:
        return
    report = resources.oov_layer_report(curves, reading)
    scale = widgets.saved_radio("Gap as", [NORMALIZED, RAW], KEY_OOV_SCALE)
    normalized = scale == NORMALIZED
    summary = report["summary"]
    widgets.chart(
        gap_figure(summary, normalized, f"Mean gap over {summary['n'].max()} entities per layer (95% bootstrap CI)"),
        summary,
        "oov layer gap",
    )
    st.caption(
        "Normalized: the gap divided by that layer's dynamic range (mean positive − mean negative control cosine of the baseline suite "
        "at the same layer), "
        "because mean-pooled middle layers score every pair high and compress raw gaps."
    )
    divergence = report["divergence"]
    shown = divergence.assign(model=divergence[constants.COL_MODEL].map(short))
    st.text("Where each entity's curves part: onset = first layer reaching half the final gap; peak = layer of the largest gap.")
    widgets.table(shown, "oov layer divergence")
    for name in torch_models:
        if name in set(report["gaps"][constants.COL_MODEL]):
            with st.expander(f"Gap per entity and layer: {widgets.md_escape(short(name))}"):
                widgets.chart(
                    entity_figure(report["gaps"], name),
                    report["gaps"][report["gaps"][constants.COL_MODEL] == name],
                    f"oov layer gaps {short(name)}",
                )
