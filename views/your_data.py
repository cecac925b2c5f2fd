"""Your data: score your own sentence pairs and see every analysis they allow.

Upload a CSV, TSV or JSONL file (or paste tab-separated pairs), map its
columns, run the selected models, then read per-pair results, category
summaries, failure rates at the sidebar threshold, threshold curves and, when
the columns allow, dynamic range, label correlation and the failure-mode
statistics.  Statistics come from ``core.scoring.tables``; this page lays them out.

State: the bytes of the last upload or paste live in ``yd_upload_bytes`` and
``yd_upload_name`` (non-widget keys, so they survive page switches).  They are
parsed once per new content; a file that cannot be read shows an error and
leaves the previously parsed pairs, mapping and results in place.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core import constants, lexicon
from core.files.chunks import cli_run_command
from core.files.intake import check_pairs
from core.files.reader import PairsFileError, apply_mapping, guess_mapping, mapping_note, parse_pairs, some_names
from core.probes import labels
from core.scoring import findings, tables
from ui import charts, history, label_charts, progress, resources, state, uploads, widgets

RUN_KEY = "your_data"
UPLOAD_PREFIX = "yd_upload"  # ui.uploads keeps the last upload (or paste) under it
KEY_BYTES = f"{UPLOAD_PREFIX}_bytes"  # bytes of the last upload or paste
KEY_NAME = f"{UPLOAD_PREFIX}_name"  # its file name (the suffix picks the parser)
KEY_SIGNATURE = "yd_ingested"  # digest of the name + bytes last parsed
KEY_PARSED = "yd_parsed"  # ParsedPairs of the last file that parsed
KEY_SOURCE = "yd_source"  # name of that file
KEY_ERROR = "yd_error"  # (name, message) of the last file that did not parse, or None
KEY_MAPPING = "yd_mapping"  # role -> column of KEY_PARSED
MATCH_QUESTION = "Which label means “same meaning”?"
MATCH_KEY = "yd_match_label"  # the label value that means "same meaning" (MATCH_DEFAULT: the automatic words)
MATCH_DEFAULT = "__automatic__"
MAP_KEY_PREFIX = "yd_map_"  # + role: the mapping boxes, set from KEY_MAPPING whenever they differ from it
KEY_RUN_INFO = "yd_run_info"  # what the stored results were computed from
PASTE_KEY = "yd_paste"
KEY_DROP_IDENTICAL = "yd_drop_identical"
KEY_DROP_MIRRORED = "yd_drop_mirrored"
DROP_IDENTICAL_LABEL = "Drop pairs whose two texts are the same"
DROP_MIRRORED_LABEL = "Drop mirrored pairs (b, a) after (a, b)"
ENCODING_KEY = "yd_encoding"
ENCODINGS = {"auto-detect": None, "UTF-8": "utf-8", "Latin-1": "latin-1", "Windows-1252": "cp1252", "UTF-16": "utf-16"}
UPLOAD_LABEL = "Upload sentence pairs (CSV, TSV or JSONL)"
PASTE_LABEL = "Or paste tab-separated pairs (text A<TAB>text B per line)"
UPLOAD_TYPES = ["csv", "tsv", "txt", "jsonl", "json", "xlsx", "xls"]
PASTED_NAME = "pasted pairs.tsv"
NONE = "(none)"
MAX_CURVE_PANELS = 12
ROLES = (
    (constants.COL_TEXT_A, "Text A column", False),
    (constants.COL_TEXT_B, "Text B column", False),
    (constants.COL_CATEGORY, "Category column (optional)", True),
    (constants.COL_LABEL, "Label column (optional)", True),
)
# ------------------------------------------------- widget values that survive page switches


def _set_mapping(role: str, widget_key: str) -> None:
    value = st.session_state[widget_key]
    st.session_state[KEY_MAPPING] = {**st.session_state[KEY_MAPPING], role: None if value == NONE else value}


# ------------------------------------------------------------------- ingesting input


def pasted_to_tsv(text: str) -> bytes:
    """Pasted lines as a TSV file with a header, for ``parse_pairs``.

    Lines are "text A<TAB>text B[<TAB>category[<TAB>label]]"; a first line
    that already reads "text_a<TAB>text_b…" is kept as the header.
    """
    lines = [line.rstrip("\r") for line in text.splitlines() if line.strip()]
    if not lines:
        return b""
    first = [f.strip().lower() for f in lines[0].split("\t")]
    if first[:2] == [constants.COL_TEXT_A, constants.COL_TEXT_B]:
        return "\n".join(lines).encode("utf-8")
    width = max(line.count("\t") + 1 for line in lines)
    names = [constants.COL_TEXT_A, constants.COL_TEXT_B, constants.COL_CATEGORY, constants.COL_LABEL]
    header = (names + [f"column_{i + 1}" for i in range(len(names), width)])[: max(width, 2)]
    return "\n".join(["\t".join(header), *lines]).encode("utf-8")


def _use_paste() -> None:
    text = st.session_state.get(PASTE_KEY, "") or ""
    st.session_state[widgets.saved_key(PASTE_KEY)] = text
    if not text.strip():
        st.session_state[KEY_ERROR] = ("pasted text", "nothing to use: paste at least one line with two tab-separated sentences")
        return
    if "\t" not in text:
        st.session_state[KEY_ERROR] = ("pasted text", "no tab found: put a tab between text A and text B on each line")
        return
    st.session_state[KEY_BYTES] = pasted_to_tsv(text)
    st.session_state[KEY_NAME] = PASTED_NAME
    st.session_state[KEY_SIGNATURE] = None  # an explicit "use" re-reads even unchanged text


def _ingest(encoding: str | None) -> None:
    """Parse KEY_BYTES when they (or the chosen encoding) are new; keep the previous pairs if they do not parse."""
    ss = st.session_state
    upload = uploads.kept(UPLOAD_PREFIX)
    if upload is None:
        return
    data, name = upload.data, upload.name
    signature = f"{upload.digest}\0{encoding}"
    if signature == ss.get(KEY_SIGNATURE):
        return
    # The signature is stored only once the bytes parsed or were refused: a parse
    # that crashed is tried again on the next rerun, never skipped as already seen.
    try:
        parsed = parse_pairs(data, name, encoding=encoding)
    except PairsFileError as exc:
        ss[KEY_SIGNATURE] = signature
        ss[KEY_ERROR] = (name, str(exc))
        return
    ss[KEY_SIGNATURE] = signature
    ss[KEY_PARSED] = parsed
    ss[KEY_SOURCE] = name
    ss[KEY_ERROR] = None
    ss[KEY_MAPPING] = guess_mapping(list(parsed.frame.columns), parsed.frame)


def _checked(pairs, notes: list[str]):
    """The pairs after the one validation path (``core.files.intake``), with boxes to drop identical or mirrored pairs.

    Returns (pairs to score or None, notes, rule violations).
    """
    found = check_pairs(pairs, notes)
    if not (found.identical or found.mirrored):
        return found.pairs, found.notes, found.violations
    left, right = st.columns(2)
    drop_identical = left.checkbox(
        DROP_IDENTICAL_LABEL,
        value=widgets.saved(KEY_DROP_IDENTICAL, False),
        key=KEY_DROP_IDENTICAL,
        on_change=widgets.persist,
        args=(KEY_DROP_IDENTICAL,),
        disabled=not found.identical,
    )
    drop_mirrored = right.checkbox(
        DROP_MIRRORED_LABEL,
        value=widgets.saved(KEY_DROP_MIRRORED, False),
        key=KEY_DROP_MIRRORED,
        on_change=widgets.persist,
        args=(KEY_DROP_MIRRORED,),
        disabled=not found.mirrored,
    )
    if not (drop_identical or drop_mirrored):
        return found.pairs, found.notes, found.violations
    try:
        kept = check_pairs(pairs, notes, drop_identical=drop_identical, drop_mirrored=drop_mirrored)
    except ValueError as exc:
        st.error(f"{widgets.md_escape(exc)}: untick a box to keep some.", icon="⛔")
        return None, found.notes, found.violations
    return kept.pairs, kept.notes, kept.violations


def _match_label(results) -> str | None:
    """The page's polarity choice: which label value means "same meaning" (None: the default words)."""
    if labels.results_label_kind(results) not in (labels.KIND_BINARY, labels.KIND_TEXT):
        return None
    choice = widgets.saved_selectbox(
        MATCH_QUESTION,
        [MATCH_DEFAULT, *labels.label_values(results[constants.COL_LABEL])],
        key=MATCH_KEY,
        format_func=lambda v: "automatic: 1, true, yes, paraphrase, entailment, …" if v == MATCH_DEFAULT else v,
        help="In many negation sets 1 marks the contradicting pair: pick the value your file uses for pairs that mean the same; "
        "every other label is then read as no match (`cosine-probe run --match-label VALUE` does the same).",
    )
    return None if choice == MATCH_DEFAULT else choice


def _label_sections(results, models: list[str], threshold: float, match_label: str | None) -> None:
    """Cosine by label, and for match / no-match labels cosine as a classifier of the label (``core.probes.labels``).

    ``match_label`` is the page's polarity choice (:func:`_match_label`), made once above the headline finding.
    """
    if labels.results_label_kind(results) == labels.KIND_NONE:
        return
    st.header("Cosine by label")
    report = resources.label_report(results, threshold, match_label)
    head = report["kind"].iloc[0]
    kind = head["kind"]
    if kind == labels.KIND_BINARY:
        st.caption(
            f"Your labels read as **match** ({widgets.md_escape(head['match'] or 'none')}) or **no match** "
            f"({widgets.md_escape(head['no_match'] or 'none')}). Each box is one label's cosines for one model; "
            "the dashed line is the sidebar threshold."
        )
    widgets.pair_chart(
        label_charts.cosine_by_label_figure(results, models, threshold, match_label),
        results.reset_index(drop=True).assign(**{constants.COL_MODEL: lambda f: f[constants.COL_MODEL].map(state.short)}),
        "your-data-cosine-by-label-pairs",
        [constants.COL_MODEL, constants.COL_LABEL, constants.COL_COSINE, constants.COL_TEXT_A, constants.COL_TEXT_B],
    )
    # Each label named as the box plot names it ("match (1)"), not a bare label and a 0/1 column; the download keeps both.
    by_label = labels.by_label_in_words(report["by_label"]).assign(
        **{constants.COL_MODEL: report["by_label"][constants.COL_MODEL].map(state.short)}
    )
    st.caption(
        f"share above = pairs scoring above {threshold:.2f}: for no-match labels the failure rate, for match labels the share a search "
        "finds."
    )
    widgets.results_table(
        by_label,
        "your-data-cosine-by-label",
        lead=(constants.COL_MODEL, constants.COL_LABEL, "n", "share_above", "mean"),
        labels={"share_above": "share above threshold"},
        column_config={"share_above": st.column_config.NumberColumn("share above threshold", format="percent")},
        download=report["by_label"],
    )
    if kind != labels.KIND_BINARY:
        return
    st.header("Cosine as a classifier of your label")
    # The AUC is said once: the page's lead sentence and this table; a warning only says what neither does.
    for warning in labels.label_warnings(report, f"“{MATCH_QUESTION}” above"):
        st.warning(widgets.md_escape(warning))
    if report["classifier"].empty:
        return
    st.caption(
        "ROC and AUC of cosine separating match from no-match pairs; the best threshold maximises Youden J (TPR − FPR). "
        f"Accuracy and F1 at that threshold and at the sidebar's ({threshold:.2f})."
    )
    widgets.chart(label_charts.label_roc_figure(report["roc"], report["classifier"], models), report["roc"], "your-data-label-roc")
    clf = report["classifier"].assign(**{constants.COL_MODEL: report["classifier"][constants.COL_MODEL].map(state.short)})
    three = {
        c: st.column_config.NumberColumn(c.replace("_", " "), format="%.3f")
        for c in ("auc", "best_threshold", "best_accuracy", "best_f1", "accuracy", "f1", "best_tpr", "best_fpr", "threshold")
    }
    widgets.results_table(
        clf,
        "your-data-label-classifier",
        lead=(constants.COL_MODEL, "auc", "best_threshold", "best_accuracy", "best_f1", "threshold", "accuracy", "f1"),
        column_config=three,
    )


# --------------------------------------------------------------------------- page

ss = st.session_state
st.title("📄 Your data")
st.markdown(
    "Score **your own sentence pairs** with the models selected in the sidebar. A file needs two text columns; "
    "an optional **category** column unlocks per-category summaries (use `positive` / `negative` for paraphrase and "
    "unrelated controls, and the failure-mode names such as `negation` or `numerical` for the paper's statistics), "
    "and an optional **label** column unlocks how well cosine separates your pairs: a match / no-match label (1/0, true/false, "
    "paraphrase, entailment) is read as a classifier (ROC, AUC, the best threshold), a graded score (0-5) as a correlation."
)

up_col, paste_col = st.columns(2)
with up_col:
    _upload, new_file = uploads.uploader(
        UPLOAD_LABEL,
        "yd_uploader",
        UPLOAD_PREFIX,
        UPLOAD_TYPES,
        help=(
            f"Up to {constants.MAX_UPLOAD_MB} MB and {constants.MAX_UPLOAD_ROWS:,} rows. Excel files are not read: save the sheet as CSV "
            "(UTF-8)."
        ),
    )
    if new_file:
        ss[KEY_SIGNATURE] = None  # a new upload is read even when its bytes match an earlier one
    chosen_encoding = widgets.saved_selectbox(
        "File encoding",
        list(ENCODINGS),
        key=ENCODING_KEY,
        help="Auto-detect reads UTF-8 (a few bad bytes become U+FFFD, with a note naming their lines), UTF-16 and Latin-1.",
    )
with paste_col:
    st.text_area(
        PASTE_LABEL,
        value=widgets.saved(PASTE_KEY, ""),
        key=PASTE_KEY,
        on_change=widgets.persist,
        args=(PASTE_KEY,),
        height=140,
        placeholder="The patient has diabetes\tThe patient does not have diabetes\tnegation",
    )
    st.button("Use pasted pairs", on_click=_use_paste, help="Optional third column: category; fourth: label.")

_ingest(ENCODINGS[chosen_encoding])
if ss.get(KEY_ERROR):
    bad_name, message = ss[KEY_ERROR]
    kept = f" The pairs from {widgets.md_escape(ss[KEY_SOURCE])} are kept." if ss.get(KEY_PARSED) is not None else ""
    st.error(f"Could not read {widgets.md_escape(bad_name)}: {widgets.md_escape(message.rstrip('.'))}.{kept}", icon="⛔")
    if "the limit is" in message:  # too many rows or bytes for the page: the CLI reads any size in chunks
        st.info("The command line scores a file of any size, in chunks, with a progress bar per model:", icon="💻")
        st.code(cli_run_command(bad_name), language="bash")

parsed = ss.get(KEY_PARSED)
pairs = None
if parsed is None:
    st.info("Upload a file or paste pairs to start.")
else:
    st.subheader("Columns")
    # Bounded as the CLI's notes are (some_names): a file of thousands of columns is one short line, not tens of KB.
    st.caption(
        f"Source: {widgets.md_escape(ss[KEY_SOURCE])} · {len(parsed.frame)} rows · columns: "
        f"{widgets.md_escape(some_names(list(parsed.frame.columns)))}"
    )
    columns = list(parsed.frame.columns)
    mapping = ss[KEY_MAPPING]
    hint = mapping_note(columns, mapping, frame=parsed.frame)
    if hint:
        st.info(widgets.md_escape(hint), icon="🧭")
    for (role, label, optional), col in zip(ROLES, st.columns(len(ROLES)), strict=True):
        options = [NONE, *columns] if optional else columns
        current = mapping.get(role)
        if current not in options:
            current = NONE if optional else columns[min(len(columns) - 1, 0 if role == constants.COL_TEXT_A else 1)]
            ss[KEY_MAPPING] = mapping = {**mapping, role: None if current == NONE else current}
        # One key per role for every file: Streamlit never forgets a widget id's metadata, whose
        # on_change callback holds this run's globals (the parsed table, the pairs), so a key per upload kept
        # every upload's tables alive. A new file, or a return to the page, sets the box from KEY_MAPPING.
        widget_key = MAP_KEY_PREFIX + role
        if ss.get(widget_key) != current:
            ss[widget_key] = current
        col.selectbox(label, options, key=widget_key, on_change=_set_mapping, args=(role, widget_key))
    try:
        pairs, notes = apply_mapping(parsed, ss[KEY_MAPPING])
    except PairsFileError as exc:
        st.error(f"These columns cannot be used: {widgets.md_escape(exc)}.", icon="⛔")
        pairs, notes = None, []
    if pairs is not None:
        if ss[KEY_MAPPING].get(constants.COL_TEXT_A) == ss[KEY_MAPPING].get(constants.COL_TEXT_B):
            st.warning("Text A and text B are the same column: every pair will score 1.0.")
        pairs, notes, violations = _checked(pairs, notes)
        if pairs is not None and labels.labels_as_categories(pairs) is not pairs:
            pairs = labels.labels_as_categories(pairs)
            notes = [*notes, "no category column: each pair's label is used as its category"]
        for note in notes:
            st.info(widgets.md_escape(note))
        if violations:
            with st.expander(f"{len(violations)} pair(s) break the category rules (data/README.md)"):
                widgets.table(
                    pd.DataFrame([{"pair_id": v.pair_id, "rule": v.rule, "problem": v.message} for v in violations]),
                    "your data rule violations",
                )
    if pairs is not None:
        st.subheader("Preview")
        st.caption(f"{len(pairs)} pairs after mapping; the first 20:")
        st.dataframe(pairs.head(20), hide_index=True, width="stretch")
        widgets.downloads(pairs, "your data mapped pairs")  # every pair as mapped, not the 20 shown

selection = state.current()
threshold = selection.threshold
clicked = pairs is not None and st.button("Run on selected models", type="primary")
if pairs is not None and not clicked:  # A long run says how long before it starts
    progress.expected_caption(selection.models, progress.pair_texts(pairs), selection.options)
if clicked and pairs is not None and (ran := state.run(pairs, selection, key=RUN_KEY, label="Scoring your pairs")) is not None:
    ss[KEY_RUN_INFO] = f"{ss[KEY_SOURCE]} · {len(pairs)} pairs"
    history.record(
        "your-data",
        ran,
        selection,
        history.upload_source(ss[KEY_SOURCE], None if ss.get(KEY_ERROR) else ss[KEY_BYTES]),
        mapping=ss[KEY_MAPPING],
    )
state.show_errors(RUN_KEY)

stored = state.stored(RUN_KEY)
if stored is not None:
    results = stored.results
    models = stored.models
    st.success(
        f"Results for {len(models)} model(s): {widgets.md_escape(', '.join(state.short(m) for m in models))} · threshold {threshold:.2f}"
    )
    st.caption(
        f"Computed from {widgets.md_escape(ss.get(KEY_RUN_INFO, 'your pairs'))}. Change the file or columns and run again to update."
    )
    saved_match = widgets.saved(MATCH_KEY, MATCH_DEFAULT)  # the polarity chosen below (the report reads the labels as the page does)
    widgets.report_download(
        results,
        threshold,
        "cosine-probe your data",
        {"threshold": threshold, "source": ss.get(KEY_RUN_INFO, "")},
        RUN_KEY,
        match_label=None if saved_match == MATCH_DEFAULT else saved_match,
    )
    categories = set(results[constants.COL_CATEGORY])

    models = state.sidebar_order(models)
    match = None
    match_label = None
    if constants.COL_LABEL in results.columns:  # The label result in words first, worst pairs first
        # The polarity choice comes first: the headline, the worst-first order and the classifier all read the labels through it.
        match_label = _match_label(results)
        report = resources.label_report(results, threshold, match_label)
        if report["kind"].iloc[0]["kind"] == labels.KIND_BINARY:
            match = labels.match_labels(results[constants.COL_LABEL], match_label)
            # One sentence leads; each model's AUC is in the classifier's table below, said there once.
            if not report["classifier"].empty:
                st.markdown(" ".join(widgets.md_escape(line) for line in labels.label_lead(report, state.short)))
    st.header("Per-pair results")
    st.caption(
        "One row per pair and model, worst "
        f"first{' (no-match pairs scored highest, then match pairs scored lowest)' if match is not None else ' (highest cosine first)'}: "
        f"cosine and its verdict at the threshold ({threshold:.2f}), the texts, then token counts, "
        "whether a text was cut at the model's limit, and overlap. The downloads keep full model ids and labels as written (numbers, "
        "true/false)."
    )
    exported = (
        results.assign(**{constants.COL_LABEL: labels.typed_labels(results[constants.COL_LABEL])})
        if constants.COL_LABEL in results.columns
        else results
    )
    shown = findings.worst_first(tables.with_verdicts(results, threshold), match)
    shown[constants.COL_MODEL] = shown[constants.COL_MODEL].map(state.short)
    widgets.results_table(
        shown,
        "your-data-results",
        lead=(*widgets.LEAD, constants.COL_TEXT_A, constants.COL_TEXT_B, constants.COL_CATEGORY, constants.COL_LABEL),
        labels={constants.COL_TEXT_A: "text A", constants.COL_TEXT_B: "text B"},
        download=exported,
        pair=(constants.COL_TEXT_A, constants.COL_TEXT_B),
    )

    # Categories that are the pairs' 0/1 labels read "no match (0)" / "match (1)", as the box plot's axis does.
    by_category = labels.categories_in_words(results, match_label)
    summary = resources.category_summary(by_category, threshold)
    st.header("Category summary")
    st.caption(
        f"Per model and category: mean cosine ± SD with a 95% bootstrap CI, and the share of pairs scoring above "
        f"the threshold ({threshold:.2f}) with its CI."
    )
    shown_summary = summary.assign(**{constants.COL_MODEL: summary[constants.COL_MODEL].map(state.short)})
    shown_summary.insert(1, "category label", shown_summary[constants.COL_CATEGORY].map(charts.category_label))
    widgets.results_table(
        shown_summary,
        "your-data-category-summary",
        lead=(constants.COL_MODEL, "category label", "n", "mean", "sd"),
        hide=(constants.COL_CATEGORY,),
        labels={
            "failure_rate": "share above threshold",
            "fr_ci_low": "share CI low",
            "fr_ci_high": "share CI high",
            "category label": "category",
        },
    )
    fig, frame = charts.category_heatmap(summary, title="Mean cosine ± SD by category and model")
    widgets.chart(fig, frame, "your-data-mean-cosine")

    st.header(f"Share above threshold {threshold:.2f}")
    st.caption(
        "For pairs that should **not** match, this is the retrieval failure rate; for paraphrases it is the share "
        "a search at this threshold would find."
    )
    widgets.chart(
        charts.failure_rate_bars(summary, threshold),
        summary[[constants.COL_MODEL, constants.COL_CATEGORY, "n", "failure_rate", "fr_ci_low", "fr_ci_high"]],
        "your-data-failure-rate",
    )
    curves = resources.failure_rate_curves(by_category)
    st.header("Share above each threshold")
    st.caption("The dashed line is the sidebar threshold; move the slider to move it.")
    plotted = charts.ordered_categories(curves[constants.COL_CATEGORY])[:MAX_CURVE_PANELS]
    if len(categories) > MAX_CURVE_PANELS:
        st.caption(f"Plotting the first {MAX_CURVE_PANELS} of {len(categories)} categories; the downloads hold them all.")
    fig = charts.failure_rate_curves_figure(curves[curves[constants.COL_CATEGORY].isin(plotted)], threshold)
    widgets.chart(fig, curves, "your-data-rate-curves")

    if {constants.CAT_POSITIVE, constants.CAT_NEGATIVE} <= categories:
        st.header("Dynamic range")
        st.caption(
            "Mean cosine of your positive pairs minus that of your negative pairs: the room a model leaves between "
            "'same meaning' and 'unrelated'. A narrow range makes any fixed threshold fragile."
        )
        dyn = resources.dynamic_ranges(results)
        dyn[constants.COL_MODEL] = dyn[constants.COL_MODEL].map(state.short)
        widgets.results_table(dyn, "your-data-dynamic-range")

    if constants.COL_LABEL in results.columns:
        _label_sections(results, models, threshold, match_label)
    label_kind = labels.results_label_kind(results)  # the CLI's `run` reads the labels by the same one rule
    if label_kind == labels.KIND_GRADED:
        st.header("Label vs cosine")
        st.caption(
            "Pearson (linear) and Spearman (rank) correlation of your numeric label with the cosine, per model. "
            "Rows with an empty label are left out."
        )
        corr = resources.label_correlation(results)
        corr[constants.COL_MODEL] = corr[constants.COL_MODEL].map(state.short)
        widgets.results_table(corr, "your-data-label-correlation")
    elif label_kind == labels.KIND_TEXT:
        st.caption("The label column is neither numbers nor match / no-match words, so no correlation or classifier is computed.")

    if constants.CAT_POSITIVE in categories and categories & set(lexicon.ADVERSARIAL_CATEGORIES):
        st.header("Failure-mode statistics")
        st.caption(
            "As in the failure paper (Tables 3 and 5): severity ratio = mean cosine of the failure mode ÷ mean cosine "
            "of your positive pairs (≥ 1.0: scored as more similar than paraphrases); Cohen's d of positives vs the "
            "failure mode (**negative d: failures score above paraphrases**)."
        )
        fm = resources.failure_mode_table(results, threshold)
        fm.insert(1, "failure mode", fm[constants.COL_CATEGORY].map(charts.category_label))
        fm[constants.COL_MODEL] = fm[constants.COL_MODEL].map(state.short)
        widgets.results_table(
            fm, "your-data-failure-modes", column_config={"failure_rate": st.column_config.NumberColumn(format="percent")}
        )
elif parsed is not None:
    st.info("Press **Run on selected models** to score these pairs.")
