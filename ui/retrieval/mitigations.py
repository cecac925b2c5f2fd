"""The Retrieval page's mitigations: each ticked fix as a spec (``core.probes.retrieval.specs``), for every input."""

from __future__ import annotations

import streamlit as st

from core import constants, lexicon
from core.probes.retrieval.specs import MitigationSpec
from ui import calibration_controls, resources, state, widgets

KEY_RRF, KEY_WEIGHTED, KEY_WEIGHT = "rt_m_rrf", "rt_m_weighted", "rt_m_weight"
KEY_GUARD, KEY_CALIBRATED, KEY_RERANKER = "rt_m_guard", "rt_m_calibrated", "rt_m_reranker"
DEFAULT_WEIGHT = 0.3


def _saved_checkbox(label: str, key: str, help_text: str) -> bool:
    return st.checkbox(label, value=bool(widgets.saved(key, False)), key=key, on_change=widgets.persist, args=(key,), help=help_text)


def mitigations(selection: state.Selection) -> tuple[MitigationSpec, ...]:
    """The ticked mitigations as specs (``calibrated`` once its thresholds are at hand, a reranker once it can load)."""
    c1, c2, c3 = st.columns(3)
    with c1:
        specs = _fusion()
    with c2:
        specs += _guard_and_filter(selection)
    with c3:
        specs += _reranker()
    return tuple(specs)


def _fusion() -> list[MitigationSpec]:
    specs: list[MitigationSpec] = []
    if _saved_checkbox(
        "BM25 + dense, reciprocal rank fusion",
        KEY_RRF,
        "BM25 (bm25s) over the passages, fused with the cosine ranking by 1 / (60 + rank).",
    ):
        specs.append(MitigationSpec(constants.MITIGATION_BM25_RRF))
    weighted = _saved_checkbox(
        "BM25 + dense, weighted sum", KEY_WEIGHTED, "w × BM25 + (1 − w) × cosine, each rescaled to [0, 1] per query."
    )
    weight = st.slider(
        "BM25 weight w",
        0.0,
        1.0,
        step=constants.BM25_WEIGHT_STEP,
        key=KEY_WEIGHT,
        disabled=not weighted,
        value=float(widgets.saved(KEY_WEIGHT, DEFAULT_WEIGHT)),
        on_change=widgets.persist,
        args=(KEY_WEIGHT,),
        help="0 keeps the dense order, 1 is BM25 alone.",
    )
    if weighted:
        specs.append(MitigationSpec(constants.MITIGATION_BM25_WEIGHTED, weight=weight))
    return specs


def _guard_and_filter(selection: state.Selection) -> list[MitigationSpec]:
    specs: list[MitigationSpec] = []
    if _saved_checkbox(
        "Contradiction guard",
        KEY_GUARD,
        "The perturbation rules in reverse: a near-top passage that differs from the query and from a rival "
        f"passage by one of the failure modes ({lexicon.modes_in_words()}) is demoted.",
    ):
        specs.append(MitigationSpec(constants.MITIGATION_GUARD))
    if _saved_checkbox(
        "Each model's calibrated threshold as a filter",
        KEY_CALIBRATED,
        "Passages scoring at or below the model's calibrated threshold (from the control pairs) are dropped.",
    ):
        cal_settings = calibration_controls.negatives_widget()
        found = calibration_controls.thresholds(selection, cal_settings, button_key="rt_calibrate")
        if found:
            specs.append(MitigationSpec(constants.MITIGATION_CALIBRATED, thresholds=tuple(found.items())))
            against = "unrelated pairs and near-misses" if constants.CAT_NEAR_MISS in cal_settings.negatives else "unrelated pairs"
            shown = ", ".join(f"{widgets.md_escape(state.short(m))} {t:.2f}" for m, t in found.items())
            st.caption(f"Thresholds: {shown} (negatives: {against})")
    return specs


def _reranker() -> list[MitigationSpec]:
    reranker = st.text_input(
        "Reranker: a cross-encoder's Hugging Face id or folder",
        value=str(widgets.saved(KEY_RERANKER, "")),
        key=KEY_RERANKER,
        on_change=widgets.persist,
        args=(KEY_RERANKER,),
        placeholder="cross-encoder/ms-marco-MiniLM-L6-v2",
        help="Rescores each query's best passages with a cross-encoder or NLI model, where you have it.",
    ).strip()
    if not reranker:
        return []
    found = resources.reranker_availability(reranker)
    if not found.available:
        st.warning(f"Reranker unavailable: {widgets.md_escape(found.reason)}. It is left out of the run.", icon="⚠️")
        return []
    st.caption(f"{widgets.md_escape(reranker)}: {widgets.md_escape(found.status)}")
    return [MitigationSpec(constants.MITIGATION_RERANKER, model_id=reranker)]
