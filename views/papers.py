"""Papers: each published table next to the same figures recomputed live.

The matching of published cells to recomputed ones lives in
``core.papers.reproduce.compare_to_published``; this page picks the table, runs the
suites and styles the cells that differ by more than a tolerance.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from core import constants, lexicon
from core.models.loading import ModelUnavailable
from core.models.tokens import piece_counts
from core.papers import reference, reproduce
from core.scoring import tables
from ui import progress, resources, widgets
from ui.state import Selection, current, run, short, show_errors, stored

KEY = "papers"
PAPER_KEY = "papers_paper"
TOLERANCE_KEY = "papers_tolerance"
READING_KEY = "papers_reading"
HIDE_KEY = "papers_hide_published_only"
AUTO_KEY = "papers_auto_models"  # the models whose cached suites this session already ran on arrival
PAPER_TITLES = {
    reference.PAPER_FAILURE: "When Cosine Similarity Lies (failure modes)",
    reference.PAPER_OOV: "Out-of-Vocabulary Robustness in Sentence Embeddings (OOV)",
}
# The one-sided reading first, as on OOV robustness: it is the one the paper's figures resemble.
READING_LABELS = {
    constants.VARIANT_REPLACED_B: "second sentence only (as the paper's figures)",
    constants.VARIANT_REPLACED_BOTH: "both sentences",
}
NUMBERS = ("published", "recomputed", "difference", "threshold", "differs")
DIFF_STYLE = "background-color: #f8c9c4; color: #5a0000; font-weight: 600"
PUBLISHED_ONLY_STYLE = "color: #8a8a8a"
SHOWN = [
    "model",
    "model_b",
    "category",
    "entity",
    "item",
    "metric",
    "threshold",
    "published",
    "published_text",
    "recomputed",
    "recomputed_text",
    "difference",
    "differs",
    "status",
    "note",
    "remark",
]


# ------------------------------------------------- widget values that survive page switches


# ----------------------------------------------------------------- helpers


def _token_counts(results: pd.DataFrame, remote: frozenset[str]) -> tuple[dict[str, int] | None, str]:
    """Subword counts of the OOV words from MiniLM's tokenizer (else the first model's)."""
    if results.empty or constants.COL_ENTITY not in results.columns:
        return None, ""
    oov = results[results[constants.COL_SUITE] == constants.SUITE_OOV]
    words = [*oov[constants.COL_ENTITY].dropna(), *oov[constants.COL_REPLACEMENT].dropna()]
    models = list(dict.fromkeys(results[constants.COL_MODEL]))
    ordered = [reference.MODEL_MINILM] if reference.MODEL_MINILM in models else models
    for name in ordered:
        try:
            return piece_counts(resources.tokenizer(name), words), name
        except ModelUnavailable:
            continue
    return None, ""


def _display(comp: pd.DataFrame, hide_published_only: bool) -> pd.DataFrame:
    """The comparison with empty columns dropped and model ids shortened (display only)."""
    shown = comp[comp["status"] != reproduce.STATUS_NOT_RUN] if hide_published_only else comp
    shown = shown[[c for c in SHOWN if c in shown.columns]].copy()
    keep = [
        c
        for c in shown.columns
        if c in ("model", "published", "recomputed", "difference", "differs", "status") or shown[c].replace("", pd.NA).notna().any()
    ]
    shown = shown[keep]
    for col in ("model", "model_b"):
        if col in shown.columns:
            shown[col] = [short(m) if m else "" for m in shown[col]]
    for col in ("note", "remark"):  # the data's notes name internal files and say "garbled": plain words on screen
        if col in shown.columns:
            shown[col] = [widgets.plain_note(v) if v else "" for v in shown[col]]
    if "metric" in shown.columns:  # "mean_cosine" on screen; the downloads keep the codes
        shown["metric"] = [str(m).replace("_", " ") if isinstance(m, str) else m for m in shown["metric"]]
    for col in shown.columns:  # a missing text cell showed "None" (numbers get "—" from the styler)
        if col not in NUMBERS and (shown[col].dtype == object or pd.api.types.is_string_dtype(shown[col])):
            shown[col] = shown[col].astype(object).where(shown[col].notna(), widgets.MISSING)
    return shown.rename(columns={"differs": "beyond tolerance"}).reset_index(drop=True)


def _style(shown: pd.DataFrame):
    """Red cells where |difference| > tolerance; grey rows that are published only."""

    def cells(frame: pd.DataFrame) -> pd.DataFrame:
        css = pd.DataFrame("", index=frame.index, columns=frame.columns)
        grey = frame["status"] == reproduce.STATUS_NOT_RUN
        css.loc[grey, :] = PUBLISHED_ONLY_STYLE
        flagged = frame["beyond tolerance"].astype(bool)
        for col in ("difference", "recomputed"):
            css.loc[flagged, col] = DIFF_STYLE
        return css

    fmt: dict[Any, Any] = {c: "{:.4f}" for c in ("published", "recomputed", "difference") if c in shown.columns}
    if "threshold" in shown.columns:
        fmt["threshold"] = "{:.2f}"
    return shown.style.apply(cells, axis=None).format(fmt, na_rep="—")


# ----------------------------------------------------------------------- page


def _choices() -> tuple[str, str, float, str]:
    """The paper, its table, the tolerance that highlights a difference and (OOV paper) the reading."""
    left, mid, right = st.columns([2, 2, 1])
    with left:
        paper = widgets.saved_selectbox("Paper", list(PAPER_TITLES), PAPER_KEY, format_func=PAPER_TITLES.get)
    with mid:
        table = widgets.saved_selectbox(
            "Table", list(reproduce.TABLES[paper]), f"papers_table_{paper}", format_func=lambda t: reproduce.table_title(paper, t)
        )
    with right:
        tolerance = st.number_input(
            "Highlight differences larger than",
            min_value=0.0,
            max_value=10.0,
            value=float(widgets.saved(TOLERANCE_KEY, reproduce.DEFAULT_TOLERANCE)),
            step=0.005,
            format="%.3f",
            key=TOLERANCE_KEY,
            on_change=widgets.persist,
            args=(TOLERANCE_KEY,),
        )
    return paper, table, tolerance, _reading_picker(paper)


def _recomputed(selection: Selection) -> pd.DataFrame:
    """The run of every suite on the selected models: at once when the cache holds it all, else on the button."""
    # What the cache answers is shown at once: a first view used to show the published values only, until a click
    # that, when every vector was cached, took a few seconds. A run that must encode waits for the button, which says how long.
    suite_pairs = resources.suite(constants.SUITE_ALL)
    est = progress.estimate(selection.models, progress.pair_texts(suite_pairs), selection.options) if selection.models else None
    cached = est is not None and not est.n_to_encode
    clicked = st.button(
        progress.button_label("Recompute", est),
        key="papers_run",
        type="primary",
        help="Runs all three suites (OOV, baseline, failure modes) on the selected models.",
    )
    auto = cached and st.session_state.get(AUTO_KEY) != tuple(selection.models)
    if clicked or auto:
        st.session_state[AUTO_KEY] = tuple(selection.models)
        run(suite_pairs, selection, key=KEY, label="All suites")
    elif est is not None and est.n_to_encode:
        st.caption(f"⏱️ {progress.describe(est)}")
    show_errors(KEY)
    result = stored(KEY)
    if result is None:
        st.info(
            "Showing the published values only: the selected models' vectors are not all in the embedding cache yet. "
            "Press **Recompute** to run all suites on them and compare."
        )
        return pd.DataFrame(columns=list(constants.RESULT_COLUMNS))
    st.text(f"Recomputed on: {', '.join(short(m) for m in result.models)} ({len(result.results)} scored pairs)")
    return result.results


def _comparison(comp: pd.DataFrame, paper: str, table: str, tolerance: float, reading: str, token_model: str) -> None:
    """The finding, the counts, the captions and the table, cell by cell, with its downloads."""
    counts = reproduce.comparison_counts(comp)
    st.subheader(reproduce.table_title(paper, table))
    widgets.finding(reproduce.reproduction_findings(comp, tolerance))  # The finding first
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Cells compared", counts[reproduce.STATUS_COMPARED])
    c2.metric(f"Differ by more than {tolerance:.3f}", counts["differs"])
    c3.metric("Published only", counts[reproduce.STATUS_NOT_RUN] + counts[reproduce.STATUS_NOT_RECOMPUTED])
    c4.metric("Recomputed only", counts[reproduce.STATUS_EXTRA])
    _captions(paper, table, reading, token_model)

    hide = st.checkbox(
        "Hide rows of models not run here",
        key=HIDE_KEY,
        value=bool(widgets.saved(HIDE_KEY, False)),
        on_change=widgets.persist,
        args=(HIDE_KEY,),
    )
    shown = _display(comp, hide)
    if shown.empty:
        st.info("Nothing to show for this table with the current filter.")
    else:
        st.dataframe(
            _style(shown), width="stretch", hide_index=True, key=f"papers_table_view_{paper}_{table}", placeholder=widgets.MISSING
        )  # not "None"
    widgets.downloads(comp, f"papers {paper} {table}")


def main() -> None:
    selection = current()
    st.title("Papers")
    st.markdown(
        "Every table of the two source papers, cell by cell, next to the same figure recomputed on the models you selected. "
        "The papers' numbers are claims: where ours differ, the **difference** column says by how much, and cells beyond "
        "the tolerance are highlighted. Models the papers used but you did not run stay as *published (model not run here)*."
    )
    paper, table, tolerance, reading = _choices()
    results = _recomputed(selection)
    token_counts, token_model = _token_counts(results, selection.remote_code)
    comp = reproduce.compare_to_published(results, paper, table, tolerance=tolerance, reading=reading, token_counts=token_counts)
    _comparison(comp, paper, table, tolerance, reading, token_model)

    if reproduce.paper_table(paper, table).threshold is not None and not results.empty:
        st.markdown(f"**At your sidebar threshold ({selection.threshold:.2f})**")
        at_yours = resources.failure_mode_table(tables.rows_of_suite(results, constants.SUITE_FAILURE_MODES), selection.threshold)[
            [constants.COL_MODEL, constants.COL_CATEGORY, "n", "failure_rate"]
        ]
        at_yours = at_yours.assign(**{constants.COL_MODEL: at_yours[constants.COL_MODEL].map(short)})
        at_yours.insert(1, "failure mode", at_yours[constants.COL_CATEGORY].map(lambda c: lexicon.CATEGORY_LABELS.get(c, c)))
        widgets.results_table(at_yours, f"papers failure rate at sidebar threshold {paper} {table}")


def _reading_picker(paper: str) -> str:
    """Ask which sentence the OOV paper's invented word replaced, since the paper does not say; other papers need no choice."""
    if paper != reference.PAPER_OOV:
        return constants.VARIANT_REPLACED_B
    options = list(READING_LABELS)
    saved = widgets.saved(READING_KEY, options[0])
    return st.radio(
        "Entity replaced in",
        options,
        index=options.index(saved) if saved in options else 0,
        format_func=READING_LABELS.get,
        key=READING_KEY,
        on_change=widgets.persist,
        args=(READING_KEY,),
        horizontal=True,
        help="The OOV paper does not say whether the invented word replaces the entity in both sentences of a pair or in one. "
        "Only the second-sentence reading gives deltas like the published ones, so it is the default; see the OOV robustness page.",
    )


def _captions(paper: str, table: str, reading: str, token_model: str) -> None:
    record = reproduce.paper_table(paper, table)
    notes = []
    if record.threshold is not None:
        notes.append(
            "Failure rates are recomputed at the threshold the paper used for this table (shown in the threshold column), so the "
            "comparison is like for like; the table below the comparison uses your sidebar threshold."
        )
    if paper == reference.PAPER_FAILURE:
        notes.append(
            "The failure paper did not release its 336 pairs; the failure-modes suite follows its design, with its printed examples "
            "included verbatim. "
            f"Its {lexicon.modes_in_words(lexicon.EXTENSION_MODES, codes=True)} pairs are ours, beyond the paper: "
            f"the paper's figures are compared with its {len(lexicon.PAPER_MODES)} modes only."
        )
    if paper == reference.PAPER_OOV:
        notes.append(
            f"OOV deltas use the reading: entity replaced in {READING_LABELS[reading]}. The paper's sentences were not released; the "
            "suites follow its design."
        )
    if record.token_counts and token_model:
        notes.append(f"Token counts from {widgets.md_escape(short(token_model))}'s tokenizer.")
    if record.depends_on_models_run:
        notes.append("This figure compares or averages models, so its recomputed value depends on which models you ran.")
    for note in notes:
        st.caption(note)


main()
