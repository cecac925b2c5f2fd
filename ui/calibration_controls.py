"""Calibrated thresholds in the app: the settings, where the control cosines come from, the table.

Each model's own threshold is computed from the failure-mode suite's control
pairs (``core.probes.calibration``).  Those cosines come from the last failure-mode
suite run when it covers the selected models, or from a short run of the
85 control pairs alone, stored under its own result key.  The settings
(which controls count as negative, the FPR target, which threshold marks)
are shared by every page and survive page switches.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from core import constants
from core.papers import suites
from core.probes import calibration
from ui import state, widgets

RUN_KEY = "calibration"
FAILURE_MODES_KEY = "failure_modes"  # views/failure_modes.py stores the whole suite under this key
KEY_NEAR_MISS = "cal_near_miss"
KEY_MAX_FPR = "cal_max_fpr"
KEY_METHOD = "cal_method"
MARKERS = {"global": "global threshold (sidebar)", "calibrated": "each model's calibrated threshold"}
METHOD_LABELS = {calibration.METHOD_YOUDEN: "best separation (Youden J)", calibration.METHOD_FPR: "false-positive-rate target"}


@dataclass(frozen=True)
class Settings:
    """How thresholds are calibrated: negatives, FPR target, and which threshold marks verdicts."""

    negatives: tuple[str, ...]
    max_fpr: float
    method: str


def current_settings() -> Settings:
    """The saved settings, without drawing widgets."""
    near_miss = bool(widgets.saved(KEY_NEAR_MISS, False))
    return Settings(
        (constants.CAT_NEGATIVE, constants.CAT_NEAR_MISS) if near_miss else (constants.CAT_NEGATIVE,),
        float(widgets.saved(KEY_MAX_FPR, calibration.DEFAULT_MAX_FPR)),
        str(widgets.saved(KEY_METHOD, calibration.METHOD_YOUDEN)),
    )


def settings_widgets() -> Settings:
    """Draw the calibration settings; the values are shared by every page."""
    c1, c2, c3 = st.columns(3)
    c1.radio(
        "Calibrated threshold",
        list(METHOD_LABELS),
        format_func=METHOD_LABELS.get,
        index=list(METHOD_LABELS).index(widgets.saved(KEY_METHOD, calibration.METHOD_YOUDEN)),
        key=KEY_METHOD,
        on_change=widgets.persist,
        args=(KEY_METHOD,),
        help="Youden J: the threshold with the largest true-positive rate minus false-positive rate on the controls. "
        "FPR target: the lowest threshold that lets at most that share of negative controls through.",
    )
    c2.slider(
        "False-positive-rate target",
        0.0,
        0.5,
        step=0.01,
        value=float(widgets.saved(KEY_MAX_FPR, calibration.DEFAULT_MAX_FPR)),
        key=KEY_MAX_FPR,
        on_change=widgets.persist,
        args=(KEY_MAX_FPR,),
        help="Largest share of negative controls allowed above the FPR-target threshold.",
    )
    with c3:
        negatives_widget()
    return current_settings()


def negatives_widget() -> Settings:
    """The one choice of what counts as a negative control (shared by every page that calibrates); returns the settings.

    Issue 33: Retrieval's calibrated filter used the saved choice without
    showing it, so a user could not calibrate against the near-misses there.
    """
    st.checkbox(
        "Count near-miss controls as negatives",
        value=bool(widgets.saved(KEY_NEAR_MISS, False)),
        key=KEY_NEAR_MISS,
        on_change=widgets.persist,
        args=(KEY_NEAR_MISS,),
        help="Near-misses share most words with the positive sentence but mean something else; counting them as "
        "negatives raises the calibrated threshold. Against unrelated pairs alone the threshold lands low "
        "(0.26-0.31 for MiniLM-L6), below every failure-mode pair.",
    )
    return current_settings()


def _control_results(models: list[str]) -> pd.DataFrame | None:
    """Control-pair cosines for every model in ``models``, from whichever stored run has them all."""
    for key in (FAILURE_MODES_KEY, RUN_KEY):
        stored = state.stored(key)
        if stored is None:
            continue
        frame = stored.results[stored.results[constants.COL_CATEGORY].isin(constants.CONTROLS)]
        if set(models) <= set(frame[constants.COL_MODEL]):
            return frame[frame[constants.COL_MODEL].isin(models)]
    return None


def table(selection: state.Selection, settings: Settings) -> pd.DataFrame | None:
    """Calibration of the selected models, or None when their control cosines are not computed yet."""
    frame = _control_results(selection.models)
    if frame is None:
        return None
    return calibration.calibrate(frame, settings.negatives, settings.max_fpr, selection.threshold)


def run_controls(selection: state.Selection) -> None:
    """Score the 85 control pairs (positive, negative, near-miss) with the selected models."""
    pairs = suites.control_pairs((constants.CAT_NEGATIVE, constants.CAT_NEAR_MISS))
    state.run(pairs, selection, key=RUN_KEY, label="Scoring the control pairs")


def thresholds(selection: state.Selection, settings: Settings, button_key: str) -> dict[str, float] | None:
    """Each selected model's calibrated threshold, offering a button to compute the controls first.

    Returns None (after showing the button) until the control cosines exist.
    """
    if st.button(
        "Calibrate on the control pairs",
        key=button_key,
        help="Scores the failure-mode suite's 85 control pairs with the selected models (cached after the first time).",
    ):
        run_controls(selection)
    elif _control_results(selection.models) is None:  # issue 33: a long run says how long before it starts
        from ui import progress

        pairs = suites.control_pairs((constants.CAT_NEGATIVE, constants.CAT_NEAR_MISS))
        progress.expected_caption(selection.models, progress.pair_texts(pairs), selection.options)
    state.show_errors(RUN_KEY)
    cal = table(selection, settings)
    if cal is None:
        st.info("Each model's own threshold comes from the control pairs: press **Calibrate on the control pairs**.")
        return None
    return calibration.thresholds_by_model(cal, settings.method)


def marked_thresholds(label: str, key: str, button_key: str, selection: state.Selection) -> float | dict[str, float] | None:
    """A global/calibrated switch for the threshold a page marks verdicts at.

    Returns:
        The sidebar threshold; each model's calibrated one (after drawing the
        settings and the calibrate button); or None while "calibrated" is
        chosen but the control pairs are not scored yet.
    """
    chosen = st.radio(
        label,
        list(MARKERS),
        format_func=MARKERS.get,
        horizontal=True,
        key=key,
        index=list(MARKERS).index(widgets.saved(key, "global")),
        on_change=widgets.persist,
        args=(key,),
        help="Global: the sidebar threshold for every model. Calibrated: each model's own threshold from the control pairs "
        "(set on the Failure modes page or here).",
    )
    if chosen != "calibrated":
        return selection.threshold
    with st.expander("Calibration settings"):
        settings = settings_widgets()
    return thresholds(selection, settings, button_key=button_key)
