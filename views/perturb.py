"""Perturbations: one typed sentence, its variants for each failure mode, every model's verdict.

The rules live in ``core.probes.perturb`` (deterministic, documented there); this
page lists the variants as the sentence is typed, scores each
original-variant pair with every selected model on request, and marks each
cosine against the global threshold or each model's calibrated one.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core import constants, lexicon
from core.probes.perturb import perturb
from core.scoring import findings, tables
from ui import calibration_controls, charts, progress, state, widgets

RUN_KEY = "perturb"
KEY_TEXT = "pt_text"
KEY_MARKER = "pt_marker"
DEFAULT_TEXT = constants.EXAMPLE_SENTENCE_A  # its variants are warmed at set-up (core/probes/warmup.py)
EXAMPLES = (
    "The patient is allergic to penicillin",
    "Google acquired YouTube",
    "Take 5 mg of the drug twice daily before meals",
    "All tenants must pay rent before the fifth day",
    "The drug may reduce symptoms",
)

sel = state.current()
st.title("🧬 Perturbations")
st.caption(
    f"Type one sentence and get its variants for each failure mode: {lexicon.modes_in_words()}. "
    "Each variant changes the meaning; a model that still scores it above its threshold "
    "would retrieve it as the same sentence."
)


def _use_example() -> None:
    if st.session_state.pt_example:
        widgets.set_text(KEY_TEXT, st.session_state.pt_example)


st.selectbox("Examples", ["", *EXAMPLES], key="pt_example", format_func=lambda t: t or "Pick an example sentence…", on_change=_use_example)
text = widgets.persistent_text_area("Sentence", KEY_TEXT, DEFAULT_TEXT, height=80, max_chars=2000)
lead = st.container()  # The scores' finding in words, above every table

report = None
try:
    report = perturb(text)
except ValueError as exc:
    st.warning(f"No variants: {widgets.md_escape(exc)}.", icon="✍️")

if report is not None:
    st.subheader(f"{len(report.variants)} variant(s)")
    for note in report.notes:
        st.caption(widgets.md_escape(note))
    listing = report.to_frame()
    listing.insert(0, "failure mode", listing[constants.COL_CATEGORY].map(charts.category_label))
    widgets.results_table(
        listing[["failure mode", constants.COL_CHANGE, constants.COL_TEXT_B, constants.COL_RULE, constants.COL_PAIR_ID]].rename(
            columns={constants.COL_TEXT_B: "variant"}
        ),
        "perturbation variants",
        lead=("failure mode", "variant", constants.COL_CHANGE),
    )
    if report.not_applicable:
        st.markdown("**No variant for:**")
        widgets.table(
            pd.DataFrame(
                {"failure mode": [charts.category_label(m) for m in report.not_applicable], "why": list(report.not_applicable.values())}
            ),
            "perturbation modes without a variant",
        )

threshold = calibration_controls.marked_thresholds("Mark verdicts at", KEY_MARKER, "pt_calibrate", sel)

if (
    report is not None
    and report.variants
    and st.button("Score variants", type="primary", help="Every selected model scores each original-variant pair.")
):
    state.run(report.to_frame(), sel, key=RUN_KEY, label="Scoring the variants")
elif report is not None and report.variants:  # A long run says how long before it starts
    progress.expected_caption(sel.models, progress.pair_texts(report.to_frame()), sel.options)
state.show_errors(RUN_KEY)

result = state.stored(RUN_KEY)
if result is not None and threshold is not None:
    scored = str(result.results[constants.COL_TEXT_A].iloc[0])
    if report is None or scored != report.text:
        st.info("The sentence changed since these variants were scored: press **Score variants** to score what you typed.", icon="ℹ️")
    st.subheader("Scores")
    st.text(f"Scored sentence: {scored}")
    table = tables.perturbation_table(result.results, threshold)
    widgets.finding(findings.perturbation_findings(table), lead)
    table["label"] = [
        f"{charts.category_label(c)}: {charts.plot_text(ch)}"
        for c, ch in zip(table[constants.COL_CATEGORY], table[constants.COL_CHANGE], strict=True)
    ]
    widgets.chart(charts.perturbation_figure(table), table.drop(columns=["label"]), "perturbation cosines")
    same = table[table["verdict"] == tables.ABOVE_THRESHOLD]
    st.caption(f"{len(same)} of {len(table)} model × variant scores are above the model's threshold: treated as the same sentence.")
    shown = table.assign(
        model=table[constants.COL_MODEL].map(state.short), category=table[constants.COL_CATEGORY].map(charts.category_label)
    )
    widgets.results_table(
        shown[
            [
                "model",
                constants.COL_COSINE,
                constants.COL_THRESHOLD,
                "verdict",
                "category",
                constants.COL_TEXT_B,
                constants.COL_CHANGE,
                constants.COL_PAIR_ID,
            ]
        ].rename(columns={constants.COL_TEXT_B: "variant"}),
        "perturbation scores",
        lead=(*widgets.LEAD, "variant", "category"),
        labels={"category": "failure mode"},
    )
elif result is None:
    st.info("Press **Score variants** to score every variant with the models selected in the sidebar.")
