"""Tune: turn the retrieval suite's (or the user's triples') failures into training data, fine-tune, and see honestly what it bought.

Layout and widgets only: the run is ``core.probes.tune.run.run_tune``; the
figures are its report's tables, held-out half first.
"""

from __future__ import annotations

import dataclasses
import json
import time

import pandas as pd
import streamlit as st

from core import constants
from core.files.errors import PairsFileError
from core.files.triples import Triples
from core.models.loading import ModelUnavailable
from core.models.registry import resolve
from core.models.runs import load
from core.paths import cache_dir
from core.probes.retrieval.convert import triples_suite
from core.probes.retrieval.suite import RetrievalSuite
from core.probes.tune.data import labelled_from_bytes
from core.probes.tune.estimate import TuneEstimate, estimate_tune, expected_words
from core.probes.tune.report import cost_headline, natural_sets, shortcut_means
from core.probes.tune.run import run_tune, write_outputs
from core.probes.tune.train import TuneCancelled, TuneConfig, untunable_reason
from ui import history, progress, resources, state, uploads, widgets
from ui import triples as upload_triples
from ui.tune_charts import before_after_figure

KEY_RESULT = "tn_result"
DATA_SUITE, DATA_TRIPLES = "suite", "triples"
DATA_LABELS = {DATA_SUITE: "The retrieval suite", DATA_TRIPLES: "My triples file"}
TRIPLE_TYPES = ["csv", "tsv", "jsonl", "json"]
ss = st.session_state
PERCENT = "percent"
RATE_COLUMNS = (constants.COL_WIN_RATE, constants.COL_CI_LOW, constants.COL_CI_HIGH, "before", "after", "difference")
NATURAL_RATE_COLUMNS = ("value", constants.COL_CI_LOW, constants.COL_CI_HIGH, "difference", "difference_low", "difference_high")

st.title("Tune")
st.markdown(
    "Fine-tune a model on the retrieval suite's **failures**: each variant that outranks its paraphrase becomes a hard negative "
    "(anchor, paraphrase, variant). The suite's anchor groups are split in two by group, stratified by domain; the model trains on one "
    "half and is judged on the **held-out** half first. A **control** trains on the same pairs without hard negatives. "
    "Expect negation and numbers to move and entity/role swaps not to (a mean-pooled model does not see word order). "
    "On the CLI: `cosine-probe tune --models MiniLM-L6 --out DIR`."
)

selection = state.current()
model = widgets.saved_selectbox(
    "Model to tune",
    selection.models,
    key="tn_model",
    format_func=state.short,
    help="Models come from the sidebar; tuning needs a torch sentence-transformers model.",
)
data_source = st.radio(
    "Data",
    list(DATA_LABELS),
    format_func=DATA_LABELS.get,
    key="tn_data",
    horizontal=True,
    help="Your triples: each anchor is one group of the split; the anchors are split in two, trained on one half, judged on the other.",
)


def _stored(kind: str, label: str, help_text: str) -> uploads.Upload | None:
    """``kind``'s upload, kept in session state (the uploader forgets it on a page switch)."""
    return uploads.uploader(label, f"tn_{kind}_uploader", f"tn_{kind}", TRIPLE_TYPES, help=help_text)[0]


def _triples() -> tuple[Triples, str, bytes] | None:
    """The triples upload, its columns mapped with pickers as on the Retrieval page; None (after a message) until it reads."""
    found = _stored("triples", "Upload a triples file (CSV, TSV, JSON or JSONL)", upload_triples.HELP)
    if found is None:
        st.info("Upload a triples file to tune on it.")
        return None
    name, data, tag = found.name, found.data, found.digest[:10]
    triples = upload_triples.mapped_triples(name, data, f"tn_tr_{tag}")
    return None if triples is None else (triples, name, data)


def _labels() -> tuple[str, bytes, pd.DataFrame] | None:
    """The optional labelled pairs upload as ``text_a, text_b, same``; None when absent or refused (with one error)."""
    found = _stored(
        "labels",
        "Optional: a labelled pairs file for the cost (AUC before/after)",
        "A pairs file with a label column (match/no match, 1/0), as on Your data; the CLI's --labels.",
    )
    if found is None:
        return None
    name, data = found.name, found.data
    try:
        frame = labelled_from_bytes(data, name)
    except (PairsFileError, ValueError) as exc:
        upload_triples.refused(name, exc)
        return None
    st.caption(f"{widgets.md_escape(name)}: {len(frame)} labelled pair(s)")
    return name, data, frame


chosen = _triples() if data_source == DATA_TRIPLES else None
labelled = _labels()
left, middle, right = st.columns(3)
groups = left.number_input(
    "Anchor groups used",
    min_value=4,
    max_value=200,
    value=200,
    step=2,
    key="tn_groups",
    help="Fewer groups run faster; the default uses the whole suite. The expected time is on the Tune button.",
)
seed = middle.number_input("Seed (split and training)", min_value=0, value=0, key="tn_seed")
average = right.slider(
    "Weight of the tuned model when averaged with the original",
    0.1,
    1.0,
    constants.TUNE_DEFAULT_AVERAGE,
    0.05,
    key="tn_average",
    help="0.5 averages 50/50 (gives back general quality, keeps much of the fix); 1.0 keeps the tuned model as it is.",
)
with st.expander("Training settings"):
    a, b, c = st.columns(3)
    lr = a.number_input("Learning rate", min_value=1e-6, max_value=1e-2, value=constants.TUNE_DEFAULT_LR, format="%.0e", key="tn_lr")
    epochs = b.number_input("Epochs", min_value=0.5, max_value=10.0, value=float(constants.TUNE_DEFAULT_EPOCHS), step=0.5, key="tn_epochs")
    batch = c.number_input("Batch size", min_value=2, max_value=128, value=constants.TUNE_DEFAULT_BATCH, key="tn_batch")
    d, e, f = st.columns(3)
    distill = d.number_input("Distillation weight λ (0 = off)", min_value=0.0, max_value=10.0, value=0.0, step=0.5, key="tn_distill")
    max_steps = e.number_input("Stop after N steps (0 = every epoch)", min_value=0, value=0, key="tn_max_steps")
    control = f.checkbox("Train the no-hard-negative control", value=True, key="tn_control")


def _suite() -> RetrievalSuite:
    """The suite the run takes: the user's triples read as one, or the shipped suite's first groups."""
    if chosen is not None:
        triples = chosen[0]
        return triples_suite(triples.frame, triples.name)
    return resources.retrieval_suite().head(int(groups))


def _config() -> TuneConfig:
    """The training settings on the page (ValueError on one the run refuses)."""
    return TuneConfig(
        learning_rate=float(lr),
        batch_size=int(batch),
        epochs=float(epochs),
        seed=int(seed),
        average=float(average),
        distill=float(distill),
        max_steps=int(max_steps) or None,
    )


def _estimate() -> TuneEstimate | None:
    """The run's expected time on the settings above, or None when the click would refuse them (and say why then)."""
    if model is None or (data_source == DATA_TRIPLES and chosen is None) or untunable_reason(resolve(model)):
        return None
    try:
        suite, config = _suite(), _config()
        counts = resources.tune_counts(suite.name, suite.passages, suite.queries, config.seed)
    except (ValueError, PairsFileError):
        return None
    return estimate_tune(model, counts, config, control=control, labelled=[labelled[2]] if labelled else [])


def _tune() -> None:
    if data_source == DATA_TRIPLES and chosen is None:
        st.error("Upload a triples file that reads (above), or pick the retrieval suite.")
        return
    try:
        suite = _suite()
        sources = history.upload_source(chosen[1], chosen[2]) if chosen is not None else history.suite_sources(constants.SUITE_RETRIEVAL)
        config = _config()
        reason = untunable_reason(resolve(model))
        if reason:
            raise ValueError(reason)
        loaded = load(model, dataclasses.replace(selection.options, backend="torch"))  # tuning trains the torch model itself
    except (ValueError, ModelUnavailable) as exc:
        st.error(str(exc))
        return
    st_model = loaded.backend.torch_model
    if st_model is None or not hasattr(st_model, "fit"):
        st.error(f"{state.short(model)} runs on {loaded.meta.backend}; tuning needs a torch sentence-transformers model.")
        return
    bar = st.progress(0.0, text="starting")
    try:

        def progress(fraction: float, message: str) -> None:
            bar.progress(min(max(fraction, 0.0), 1.0), text=message)

        result = run_tune(
            st_model,
            loaded.meta.name,
            suite,
            config,
            labelled={labelled[0]: labelled[2]} if labelled else None,
            control=control,
            progress=progress,
        )
    except (ValueError, TuneCancelled) as exc:
        st.error(str(exc))
        return
    extra = history.upload_source(labelled[0], labelled[1]) if labelled else []
    history.record_tune(result, selection, sources + extra, model=model)
    out = cache_dir() / "tuned" / f"{state.short(model).replace('/', '_')}-{time.strftime('%Y%m%d-%H%M%S')}"
    written = write_outputs(result, out)
    bar.empty()
    st.session_state[KEY_RESULT] = {
        "doc": result.doc,
        "markdown": result.markdown,
        "tables": result.tables,
        "model_folder": str(written["model"]),
    }


expected = _estimate()
label = f"Tune ({progress.about(expected.seconds)})" if expected is not None else "Tune"
if st.button(label, key="tn_run", type="primary", help="Streamlit's Stop button cancels; nothing is saved until the run ends."):
    _tune()
elif expected is not None:  # Training takes minutes: said before the click
    st.caption(f"⏱️ Expected time: {expected_words(expected)}.")  # our words only: nothing typed or uploaded in them


def _table(frame: pd.DataFrame, name: str, rates: tuple[str, ...] = RATE_COLUMNS) -> None:
    widgets.table(frame, name, column_config={c: st.column_config.NumberColumn(c, format=PERCENT) for c in rates if c in frame.columns})


shown = st.session_state.get(KEY_RESULT)
if shown is None:
    st.info("Press **Tune** to probe, train and re-probe the chosen model.")
else:
    doc, tables = shown["doc"], shown["tables"]
    st.success(f"Tuned model saved to `{shown['model_folder']}`: add it in the sidebar, or `--models {shown['model_folder']}` on the CLI.")
    st.markdown(" ".join(cost_headline(doc)))
    for warning in doc["warnings"]:
        st.warning(warning)
    for split in constants.TUNE_SPLITS:
        st.header(
            f"Win rate, {split} half" + (" (judge the fix here)" if split == constants.SPLIT_HELD_OUT else " (what it was trained on)")
        )
        rows = tables["win_rates"][tables["win_rates"][constants.COL_SPLIT] == split]
        widgets.chart(before_after_figure(tables["win_rates"], split), rows, f"tune-win-rate-{split}")
    _table(tables["win_rates"], "tune-win-rates")
    st.header("General cost on natural data it never trained on")
    st.caption(
        " ".join(f"**{i.get('name', '')}**: {i.get('source', '')}" for i in natural_sets(doc))
        + " Each anchor is the query: **opposite win rate** (lower is better) "
        "and **recall@1** among every positive and negative of the file (higher is better), before and after, with 95% bootstrap "
        "intervals; "
        "**fixed** / **broken**: triples or anchors that failed before and not after, and the other way; **at ceiling**: every setting "
        "at the best possible value, so that data is too easy to show a cost."
    )
    _table(tables["natural_cost"], "tune-natural-cost", NATURAL_RATE_COLUMNS)
    st.header("Shortcut probe: a negation cue, or the meaning?")
    st.caption(
        'Hand-written pairs: *same* says the same with a negation cue and an antonym ("The door was open." / "The door was not closed."), '
        '*opposite* negates it. Learning meaning pushes only the opposite pairs apart; learning "a negation cue means a different '
        'meaning" pushes both apart.'
    )
    widgets.table(shortcut_means(tables["shortcut"]), "tune-shortcut-means")
    widgets.table(tables["shortcut"], "tune-shortcut")
    st.header("Hand-written vs rule-made variants")
    _table(tables["by_source"], "tune-by-source")
    st.header("Paired tests against the untouched model")
    st.caption("**fixed**: variants that won before and not after; **broken**: the other way; McNemar's exact test on those two counts.")
    _table(tables["paired_tests"], "tune-paired-tests")
    st.header("Cost on labelled pairs: same vs different meaning (AUC)")
    st.caption("**at ceiling**: every setting scores 1.000, the best possible AUC: those pairs are too easy to show a cost.")
    widgets.table(tables["costs"], "tune-costs")
    st.download_button("Report (Markdown)", shown["markdown"], file_name="tune-report.md", key="tn_md")
    st.download_button("Report (JSON)", json.dumps(doc, indent=2, default=str), file_name="tune-report.json", key="tn_json")
