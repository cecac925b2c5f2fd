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

from core import constants, lexicon
from core.papers import suites
from core.probes import calibration
from ui import progress, state, widgets

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

    Retrieval's calibrated filter used the saved choice without
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


def _suite_results(models: list[str]) -> pd.DataFrame | None:
    """The failure-mode suite's cosines for every model in ``models`` (controls, and the failure modes when that run
    scored them), from whichever stored run has them all."""
    for key in (FAILURE_MODES_KEY, RUN_KEY):
        stored = state.stored(key)
        if stored is None:
            continue
        frame = stored.results[stored.results[constants.COL_CATEGORY].isin((*constants.CONTROLS, *lexicon.FAILURE_MODES))]
        controls = frame[frame[constants.COL_CATEGORY].isin(constants.CONTROLS)]
        if set(models) <= set(controls[constants.COL_MODEL]):
            return frame[frame[constants.COL_MODEL].isin(models)]
    return None


def _control_results(models: list[str]) -> pd.DataFrame | None:
    """Control-pair cosines for every model in ``models``, from whichever stored run has them all."""
    frame = _suite_results(models)
    return None if frame is None else frame[frame[constants.COL_CATEGORY].isin(constants.CONTROLS)]


def table(selection: state.Selection, settings: Settings) -> pd.DataFrame | None:
    """Calibration of the selected models, or None when their control cosines are not computed yet."""
    frame = _control_results(selection.models)
    if frame is None:
        return None
    return calibration.calibrate(frame, settings.negatives, settings.max_fpr, selection.threshold)


def _calibration_pairs() -> pd.DataFrame:
    """The failure-mode suite whole: its controls calibrate, its failure-mode pairs say what the calibrated threshold does."""
    return suites.load_suite(constants.SUITE_FAILURE_MODES)


def run_controls(selection: state.Selection) -> None:
    """Score the failure-mode suite (its controls and its failure-mode pairs) with the selected models."""
    state.run(_calibration_pairs(), selection, key=RUN_KEY, label="Scoring the failure-mode suite to calibrate")


def thresholds(selection: state.Selection, settings: Settings, button_key: str, auto: bool = False) -> dict[str, float] | None:
    """Each selected model's calibrated threshold, offering a button to compute the controls first.

    Args:
        selection: the sidebar's models and threshold.
        settings: how thresholds are calibrated.
        button_key: the calibrate button's key.
        auto: compute the controls at once when they are missing (the user already asked for calibrated thresholds).

    Returns None (after showing the button) until the control cosines exist.
    """
    missing = _control_results(selection.models) is None
    if (auto and missing) or st.button(
        "Calibrate on the control pairs",
        key=button_key,
        help="Scores the failure-mode suite (its 85 control pairs calibrate) with the selected models (cached after the first time).",
    ):
        run_controls(selection)
    elif missing:  # a long run says how long before it starts
        progress.expected_caption(selection.models, progress.pair_texts(_calibration_pairs()), selection.options)
    state.show_errors(RUN_KEY)
    cal = table(selection, settings)
    if cal is None:
        st.info("Each model's own threshold comes from the control pairs: press **Calibrate on the control pairs**.")
        return None
    return calibration.thresholds_by_model(cal, settings.method)


def calibration_warning(selection: state.Selection, settings: Settings, found: dict[str, float]) -> list[str]:
    """What the calibrated thresholds do to the failure-mode pairs, in sentences (``core.probes.calibration``): above all,
    a threshold calibrated against unrelated pairs alone (0.26-0.31) makes every failure rate 100%."""
    frame = _suite_results(selection.models)
    if frame is None or not frame[constants.COL_CATEGORY].isin(lexicon.FAILURE_MODES).any():
        return []
    rates = calibration.failure_rates(frame, found, selection.threshold)
    return calibration.calibration_findings(rates, settings.negatives, state.short)


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
    # The radio was the click: calibrate now rather than ask for a second one.
    found = thresholds(selection, settings, button_key=button_key, auto=True)
    if found is not None and (said := calibration_warning(selection, settings, found)):
        st.warning(widgets.md_escape(" ".join(said)), icon="⚠️")
    return found
