"""Index settings: the suites or the user's pairs scored with vectors as a store keeps them, what changed against float32 first.

float32, float16, int8 (faiss SQ8, float query), binary (Hamming, or a
Hamming shortlist rescored in float) and truncated dimensions.  The page leads
with a finding per model, says why binary is never read at the cosine
threshold, lists only the figures that moved beyond their intervals, and draws
each setting's change per mode; every figure is in an expander and the CSV.
A connected store's vectors are probed through the "Connect a store" block
(``ui.stores``): queries ranked over them under every setting.  A vectors file
(Parquet or Arrow, as ``index-settings --vectors``) is probed the same way, by
the CLI's function; the user's corpus (the Your corpus page's, or one given
here) is encoded and its queries, or without them its own passages, ranked
over it under every setting against float32.  The
arithmetic is ``core.probes.index_settings`` (through
``ui.resources.index_settings_run``); this page lays it out.
"""

from __future__ import annotations

import streamlit as st

from core import constants
from core.audit.run import check_corpus
from core.files.errors import PairsFileError
from core.files.export import safe_frame
from core.files.reader import apply_mapping, guess_mapping, parse_pairs
from core.files.texts import TEXT_COLUMNS, parse_texts
from core.files.vectors import read_vectors_bytes
from core.probes.index_settings import (
    DEFAULT_SETTINGS,
    findings,
    metric_words,
    parse_settings,
    probe_texts,
    scale_matters,
    scale_note,
    wide_table,
)
from core.probes.vector_settings import vectors_file_index_settings
from ui import history, progress, resources, state, stores, uploads, widgets
from ui.index_settings import changes_figure, changes_table, own_threshold_note

RESULT_KEY = "is_result"
PROBES = {
    constants.SUITE_FAILURE_MODES: "Failure-mode suite",
    constants.SUITE_RETRIEVAL: "Retrieval suite",
}
YOUR_FILE = "your file"
YOUR_DATA = "your data"
YOUR_DATA_RUN = "your_data"  # where the Your data page keeps its scored pairs (views/your_data.py RUN_KEY)
YOUR_DATA_SOURCE, YOUR_DATA_BYTES = "yd_source", "yd_upload_bytes"  # its file's name and bytes (views/your_data.py)
YOUR_CORPUS = "your corpus"
YOUR_VECTORS = "your vectors"
CORPUS_KEPT = "yc_corpus_texts"  # the Your corpus page's parsed passages: (name, passages, notes) (views/your_corpus.py)
QUERIES_KEPT = "yc_queries_texts"  # and its queries, the same way
UPLOAD_PREFIX = "is_upload"
CORPUS_PREFIX = "is_corpus"
VECTORS_PREFIX = "is_vectors"
CHECK_KEY = "is_check"
RUN_ERROR = "is_run_error"
UPLOAD_TYPES = ["csv", "tsv", "txt", "jsonl", "json"]
VECTOR_TYPES = ["parquet", "pq", "arrow", "feather", "ipc"]
RUN_LABEL = "Score index settings"
MOVED_HEADER = "What moved beyond its interval"


def _your_pairs():
    """The uploaded pairs file as a pairs table (text_a, text_b, category when given), or None; a refusal is one line."""
    upload, _new = uploads.uploader(
        "Pairs file (text A, text B, optional category)",
        "is_uploader",
        UPLOAD_PREFIX,
        UPLOAD_TYPES,
        help=f"Up to {constants.MAX_UPLOAD_MB} MB. Add `positive` and `negative` control pairs in a category column to read "
        "binary at its own threshold.",
    )
    if upload is None:
        return None, None
    try:
        parsed = parse_pairs(upload.data, upload.name)
        pairs, notes = apply_mapping(parsed, guess_mapping(list(parsed.frame.columns), parsed.frame))
    except PairsFileError as exc:
        st.error(widgets.md_escape(f"{upload.name}: {exc}"), icon="⛔")
        return None, upload
    for note in notes:
        st.caption(widgets.md_escape(note))
    columns = [c for c in (constants.COL_TEXT_A, constants.COL_TEXT_B, constants.COL_CATEGORY) if c in pairs]
    return pairs[columns], upload


def _parsed(prefix: str, read):
    """The upload kept under ``prefix`` read by ``read(data, name)``, once per file; a refusal is one line and the last
    good file stays: (the kept upload, what ``read`` gave for the last good one, or None)."""
    held = uploads.kept(prefix)
    ss = st.session_state
    if held is not None and held.digest != ss.get(f"{prefix}_seen"):
        ss[f"{prefix}_seen"] = held.digest
        ss[RUN_ERROR] = None  # the last run's refusal was about the file before
        try:
            ss[f"{prefix}_parsed"] = (held, read(held.data, held.name))
            ss[f"{prefix}_error"] = None
        except (PairsFileError, ValueError) as exc:  # VectorsError is a ValueError
            said = str(exc) if str(exc).startswith(held.name) else f"{held.name}: {exc}"  # the file named once
            ss[f"{prefix}_error"] = " ".join(said.split())
    if ss.get(f"{prefix}_error"):
        st.error(widgets.md_escape(ss[f"{prefix}_error"]), icon="⛔")
    return ss.get(f"{prefix}_parsed") or (None, None)


def _read_corpus(data: bytes, name: str) -> list[str]:
    texts = parse_texts(data, name, TEXT_COLUMNS["corpus"], what="corpus").texts
    check_corpus(texts)
    return texts


def _typed_queries(label: str) -> list[str]:
    typed = st.text_area(label, key="is_queries", height=100)
    return [q.strip() for q in typed.splitlines() if q.strip()]


def _your_corpus():
    """The passages to probe (this page's upload, else the Your corpus page's) and their queries: (name, passages, queries)."""
    uploads.uploader("Corpus file (one passage per line, or a text column)", "is_corpus_uploader", CORPUS_PREFIX, UPLOAD_TYPES)
    held, passages = _parsed(CORPUS_PREFIX, _read_corpus)
    name = held.name if held is not None else None
    if passages is not None:
        st.caption(f"Corpus: {widgets.md_escape(str(name))} · {len(passages):,} passages.")
    elif st.session_state.get(CORPUS_KEPT):
        name, passages, _notes = st.session_state[CORPUS_KEPT]
        st.caption(f"The corpus of the Your corpus page: {widgets.md_escape(name)} · {len(passages):,} passages.")
    queries = _typed_queries("Queries (optional, one per line)")
    if not queries and st.session_state.get(QUERIES_KEPT):
        queries = list(st.session_state[QUERIES_KEPT][1])
    st.caption(
        f"{len(queries):,} queries ranked over the passages"
        if queries
        else "No queries: each passage (up to 500, drawn at random) is ranked over the others, so recall@k is how many of "
        "its float32 nearest neighbours a setting still finds."
    )
    return name, passages, queries


def _your_vectors(models: list[str]):
    """A vectors file the user's pipeline made, the model that made it and the queries: (upload, vectors, model, queries)."""
    uploads.uploader(
        "Vectors file (Parquet or Arrow: a text and a vector column)",
        "is_vectors_uploader",
        VECTORS_PREFIX,
        VECTOR_TYPES,
        help="The file `cosine-probe index-settings --vectors` reads; the model below is checked on 20 of its passages.",
    )
    held, source = _parsed(VECTORS_PREFIX, read_vectors_bytes)
    if source is not None:
        st.caption(f"{widgets.md_escape(held.name)}: {len(source.passages):,} passages, {source.vectors.shape[1]} dimensions.")
    model = st.selectbox("Model that made the vectors", models, format_func=state.short, key="is_vectors_model")
    return held, source, model, _typed_queries("Queries, one per line (each ranked over the file's passages)")


st.title("Index settings")
st.caption(
    "A vector store rarely compares the float32 vectors a model returns: it keeps half precision, int8 codes, sign bits "
    "or fewer dimensions. Score the suites, your pairs, your corpus or your vectors file under each setting to see what a "
    "compression changes on the failures and the rankings that matter, against float32. The CLI: `cosine-probe index-settings`."
)
selection = state.current()
scored = state.stored(YOUR_DATA_RUN)
yours = None if scored is None or scored.results.empty else scored.results
options = {
    **PROBES,
    YOUR_FILE: "Your pairs file",
    **({YOUR_DATA: "Pairs scored on Your data"} if yours is not None else {}),
    YOUR_CORPUS: "Your corpus",
    YOUR_VECTORS: "Your vectors file",
}
probe = st.radio("Probe", list(options), format_func=options.get, horizontal=True, key="is_probe")
pairs, upload = _your_pairs() if probe == YOUR_FILE else (None, None)
corpus_name, passages, queries = _your_corpus() if probe == YOUR_CORPUS else (None, None, [])
vectors_upload, vectors, vectors_model, vectors_queries = (
    _your_vectors(selection.models) if probe == YOUR_VECTORS else (None, None, None, [])
)
if probe == YOUR_DATA and yours is not None:  # each pair once: the page scored it once per model
    pairs = yours.drop_duplicates(constants.COL_PAIR_ID)[[constants.COL_TEXT_A, constants.COL_TEXT_B, constants.COL_CATEGORY]]
chosen = st.multiselect("Index settings", list(DEFAULT_SETTINGS), default=list(DEFAULT_SETTINGS), key="is_settings")
missing = (
    (probe in (YOUR_FILE, YOUR_DATA) and pairs is None)
    or (probe == YOUR_CORPUS and passages is None)
    or (probe == YOUR_VECTORS and (vectors is None or not vectors_queries))
)
clicked = st.button(RUN_LABEL, type="primary", key="is_run", disabled=not selection.models or not chosen or missing)
if not clicked and not missing:  # A long run says how long before it starts
    to_score = pairs if pairs is not None else resources.suite(probe) if probe == constants.SUITE_FAILURE_MODES else None
    retrieval = resources.retrieval_suite() if probe == constants.SUITE_RETRIEVAL else None
    encoded = probe_texts(
        {probe: to_score} if to_score is not None else None,
        retrieval,
        corpus={probe: passages} if passages is not None else None,
        queries=queries,
    )
    models = selection.models
    if probe == YOUR_VECTORS and vectors is not None:  # the queries, and the 20 passages the model is checked on
        encoded, models = [*vectors_queries, *vectors.passages[:20]], [vectors_model]
    progress.expected_caption(models, encoded, selection.options, always=True)
if clicked and probe == YOUR_VECTORS and vectors is not None and vectors_upload is not None:
    try:
        with st.spinner(f"Checking {state.short(vectors_model)} on 20 passages, then scoring every setting…"):
            ran, check = vectors_file_index_settings(
                vectors,
                vectors_model,
                parse_settings(chosen),
                queries=vectors_queries,
                cache=resources.embedding_cache(),
                options=selection.options_for(vectors_model),
                threshold=selection.threshold,
            )
    except ValueError as exc:  # the model did not make these vectors: one line, the last result stays
        st.session_state[RUN_ERROR] = " ".join(f"{vectors_upload.name}: {exc}".split())
    else:
        st.session_state[RUN_ERROR] = None
        st.session_state[RESULT_KEY] = ran
        st.session_state[CHECK_KEY] = (
            f"Model check: {state.short(check.model)} re-encoded {len(check.cosines)} of the {check.rows:,} passages of "
            f"{vectors_upload.name}: cosine with their given vectors {min(check.cosines):.4f} to {max(check.cosines):.4f}."
        )
        history.record_index_settings(ran, selection, history.upload_source(vectors_upload.name, vectors_upload.data))
elif clicked:
    got = None
    try:
        with st.spinner("Encoding once per model, then scoring every setting…"):
            name = upload.name if upload is not None else probe
            got = resources.index_settings_run(
                corpus_name if probe == YOUR_CORPUS else name if probe == YOUR_FILE else probe,
                tuple(selection.models),
                selection.options,
                tuple(chosen),
                selection.threshold,
                pairs,
                tuple(passages) if passages is not None else None,
                tuple(queries),
            )
    except ValueError as exc:  # a corpus too small to rank a top 10: one line, the last result stays
        st.session_state[RUN_ERROR] = " ".join(str(exc).split())
    if got is not None:
        st.session_state[RESULT_KEY], st.session_state[CHECK_KEY], st.session_state[RUN_ERROR] = got, None, None
        if probe == YOUR_CORPUS:
            held = uploads.kept(CORPUS_PREFIX)
            sources = history.upload_source(str(corpus_name), held.data if held is not None and held.name == corpus_name else None)
        elif probe == YOUR_FILE and upload is not None:
            sources = history.upload_source(upload.name, upload.data)
        elif probe == YOUR_DATA:
            sources = history.upload_source(st.session_state.get(YOUR_DATA_SOURCE, YOUR_DATA), st.session_state.get(YOUR_DATA_BYTES))
        else:
            sources = history.suite_sources(probe)
        history.record_index_settings(got, selection, sources)
if st.session_state.get(RUN_ERROR):
    st.error(widgets.md_escape(st.session_state[RUN_ERROR]), icon="⛔")
if not selection.models:
    st.info("Pick at least one model in the sidebar.")
elif missing:
    st.caption(
        {
            YOUR_CORPUS: "Give a corpus file above (or upload one on the Your corpus page) to probe your own passages.",
            YOUR_VECTORS: "Give a vectors file above and at least one query to rank over its passages.",
        }.get(probe, "Give a pairs file above (or score one on the Your data page) to probe your own pairs.")
    )
if selection.models:
    # A store's own vectors: queries ranked over them under every setting (the CLI's index-settings --store --queries).
    stores.connect_store("is", "index-settings", selection)

result = st.session_state.get(RESULT_KEY)
if result is not None:
    for name, reason in result.errors.items():
        state.model_error(name, reason)
    table = result.table
    for line in findings(table, state.short):
        st.markdown(f"**{widgets.md_escape(line)}**")
    if st.session_state.get(CHECK_KEY):
        st.caption(widgets.md_escape(st.session_state[CHECK_KEY]))
    note = scale_note(parse_settings(result.settings)) if scale_matters(table) else None
    if note:
        st.info(widgets.md_escape(note), icon="ℹ️")
    for line in result.notes:
        st.caption(widgets.md_escape(line))
    st.subheader(MOVED_HEADER)
    moved = changes_table(table, state.short)
    if moved.empty:
        st.caption("Nothing: every setting's figures overlap float32's 95% intervals.")
    else:
        widgets.table(moved, "index settings moved beyond the intervals")
    for model in state.sidebar_order(list(dict.fromkeys(table[constants.COL_MODEL]))):
        rows = table[table[constants.COL_MODEL] == model]
        st.subheader(f"{state.short(model)}: change against float32")
        metrics = list(dict.fromkeys(rows["metric"]))
        metric = st.selectbox("Figure", metrics, format_func=metric_words, key=f"is_metric::{model}")
        probe_name = rows["probe"].iloc[0]
        widgets.chart(
            changes_figure(rows, metric, f"{state.short(model)} · {probe_name} · {metric_words(metric)}"),
            rows[rows["metric"] == metric],
            f"index settings {state.short(model)} {metric}",
        )
        st.caption(
            "Each cell is the setting's value; coloured (by its change against float32) and marked * only where it moved beyond "
            "the intervals; — a figure the setting does not make."
        )
        own_note = own_threshold_note(rows, metric)
        if own_note:
            st.caption(widgets.md_escape(own_note))
    with st.expander("Every figure: value [95% interval] per setting"):
        # Wide enough for "0.960 [0.88, 1.00]": the grid sizes a column by its first rows, often a bare "1.000".
        wide = {name: st.column_config.TextColumn(name, width=135) for name in result.settings}
        keys = {"metric": st.column_config.TextColumn("metric", width=195)}
        every = wide_table(table, state.short)
        # One model and one probe (the page's usual run): said in the chart's title, not repeated on every row.
        order = [c for c in every.columns if not (c in ("model", "probe") and every[c].nunique() == 1)]
        widgets.table(every, "index settings every figure", column_config={**keys, **wide}, column_order=order)
    st.download_button(
        "Table (CSV)",
        safe_frame(table).to_csv(index=False),
        file_name="index-settings.csv",
        key="is_csv",
        help="setting, model, probe, metric, mode, value, ci_low, ci_high, n, change against float32",
    )
