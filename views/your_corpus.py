"""Your corpus: the passages of your own knowledge base a retriever cannot tell apart (``docs/audit.md``).

Upload a corpus (one passage per line, or a text column of a CSV, TSV, JSON or
JSONL file; optionally a queries file), audit it with the sidebar's models,
then move this page's threshold: the risk numbers, the curve and the twin
table follow at once, from the one audit kept per corpus content
(``ui.resources.audit_run``), with nothing encoded again.

State: each file is kept by the one upload helper (``ui/uploads.py``, under
``yc_corpus`` and ``yc_queries``: its name and bytes survive page switches) and
parsed once per new content; a file that cannot be read shows an error and
leaves the previous corpus and audit in place.
"""

from __future__ import annotations

import dataclasses
import hashlib

import streamlit as st

from core import constants
from core.audit import projection
from core.audit.findings import QUERY_COLUMNS, risk_words
from core.audit.kinds import KIND_DUPLICATE, KIND_OTHER, KIND_SEVERAL, KIND_TWIN
from core.audit.run import check_corpus
from core.files.errors import PairsFileError
from core.files.texts import TEXT_COLUMNS, parse_texts
from core.paths import PROJECT_ROOT
from ui import audit as audit_ui
from ui import dedup as dedup_ui
from ui import history, progress, resources, state, uploads, widgets
from ui import stores as stores_ui

FLOOR = 0.5  # pairs are collected from here up, so the slider can go this low without a second audit
SAMPLE = PROJECT_ROOT / "data" / "corpora" / "wordnet-adjectives.csv"
SAMPLE_ROWS = 300
UPLOAD_TYPES = ["txt", "csv", "tsv", "json", "jsonl"]
CORPUS_LABEL = "Upload a corpus (one passage per line, or a text column)"
QUERIES_LABEL = "Queries (optional: how often a top 5 holds a passage and its twin)"
SAMPLE_LABEL = "Use the shipped sample (300 WordNet adjective definitions)"
RUN_LABEL = "Audit corpus"
THRESHOLD_LABEL = "Threshold for this audit"
KINDS_SHOWN = {
    "confusable twins": KIND_TWIN,
    "near-duplicates": KIND_DUPLICATE,
    "several differences": KIND_SEVERAL,
    "other differences": KIND_OTHER,
}
KEY = {kind: f"yc_{kind}" for kind in ("corpus", "queries")}


def _upload(kind: str, label: str, help_text: str | None = None) -> None:
    """The kind's uploader; a new file is read again even when its bytes equal the last one's."""
    _held, new = uploads.uploader(label, f"{KEY[kind]}_uploader", KEY[kind], UPLOAD_TYPES, help=help_text)
    if new:
        st.session_state[f"{KEY[kind]}_seen"] = None


def _use_sample() -> None:
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    st.session_state[f"{KEY['corpus']}_bytes"] = b"".join(lines[: SAMPLE_ROWS + 1])
    st.session_state[f"{KEY['corpus']}_name"] = SAMPLE.name
    st.session_state[f"{KEY['corpus']}_seen"] = None


def _ingest(kind: str) -> None:
    """Parse the kind's upload when new; a file that does not parse leaves the previous texts in place."""
    ss = st.session_state
    held = uploads.kept(KEY[kind], default_name=f"{kind}.txt")
    if held is None or held.digest == ss.get(f"{KEY[kind]}_seen"):
        return
    ss[f"{KEY[kind]}_seen"] = held.digest
    name, data = held.name, held.data
    try:
        found = parse_texts(data, name, TEXT_COLUMNS[kind], what=kind)
        if kind == "corpus":
            check_corpus(found.texts)
    except (PairsFileError, ValueError) as exc:
        ss[f"{KEY[kind]}_error"] = (name, str(exc))
        return
    ss[f"{KEY[kind]}_texts"] = (name, found.texts, found.notes)
    ss[f"{KEY[kind]}_error"] = None


def _digest(passages: list[str], queries: list[str]) -> str:
    digest = hashlib.blake2b(digest_size=16)
    for text in (*passages, "\0queries\0", *queries):
        digest.update(text.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()


def _run(
    passages: list[str], queries: list[str], selection: state.Selection, threshold: float, corpus_source: tuple[str, bytes | None]
) -> None:
    """Audit once per content (kept for the slider) and record it in the history at the page's threshold, as the CLI does."""
    key = resources.audit_key(_digest(passages, queries), tuple(selection.models), selection.options, FLOOR)
    with st.status(f"Auditing {len(passages):,} passages × {len(selection.models)} models", expanded=True) as status:
        bar = st.progress(0.0)

        def progress(fraction: float, message: str) -> None:
            bar.progress(fraction, text=widgets.md_escape(message))  # messages name the model, which users type
            status.update(label=f"Auditing {len(passages):,} passages: {widgets.md_escape(message)}")

        try:
            result = resources.audit_run(key, passages, queries, progress)
        except ValueError as exc:
            status.update(label="Audit: nothing to show", state="error")
            st.session_state["yc_run_error"] = str(exc)
            return
        ok = bool(result.models)
        names = ", ".join(state.short(m) for m in result.models)
        status.update(
            # The pairs kept from FLOOR up are bookkeeping for the slider, not a finding: the count at the page's threshold is below.
            label=f"Audit done with {widgets.md_escape(names)}: {len(result.passages):,} passages in {widgets.wall_time(result.seconds)}"
            if ok
            else "Audit: no model produced results",
            state="complete" if ok else "error",
            expanded=False,
        )
    st.session_state["yc_run_error"] = None
    st.session_state[state.KEY_ERRORS]["your_corpus"] = result.errors
    if ok:
        st.session_state["yc_audit_key"] = key
        _, above, said = resources.audit_risk(key, threshold)
        # The pairs its reader sees at the page's threshold, as the CLI stores those at its own.
        history.record_audit(dataclasses.replace(result, pairs=above), said, threshold, selection, history.upload_source(*corpus_source))


# --------------------------------------------------------------------------- page

ss = st.session_state
st.title("🔎 Your corpus")
st.markdown(
    "Find the passages of **your own corpus** that a retriever cannot tell apart before your users do. Every passage is encoded once "
    "with the models selected in the sidebar; every pair above the threshold is a **confusable twin** when one failure-mode edit "
    "separates them (a *not*, 5 mg vs 500 mg, who acquired whom, before/after, all/none, a hedge), a **near-duplicate** when they say "
    "the same thing, else an **other difference**. No labels needed."
)
up_col, q_col = st.columns(2)
with up_col:
    _upload(
        "corpus",
        CORPUS_LABEL,
        f"Up to {constants.MAX_UPLOAD_MB} MB and {constants.MAX_UPLOAD_ROWS:,} passages; "
        "`cosine-probe audit --corpus FILE` reads larger ones.",
    )
    st.button(SAMPLE_LABEL, on_click=_use_sample, help="WordNet 3.0 (Princeton University), its licence in data/corpora/.")
with q_col:
    _upload("queries", QUERIES_LABEL)

for kind in ("corpus", "queries"):
    _ingest(kind)
    if ss.get(f"{KEY[kind]}_error"):
        bad, message = ss[f"{KEY[kind]}_error"]
        kept = f" The {kind} from {widgets.md_escape(ss[f'{KEY[kind]}_texts'][0])} is kept." if ss.get(f"{KEY[kind]}_texts") else ""
        st.error(f"Could not read {widgets.md_escape(bad)}: {widgets.md_escape(message.rstrip('.'))}.{kept}", icon="⛔")

corpus = ss.get(f"{KEY['corpus']}_texts")
queries = ss.get(f"{KEY['queries']}_texts")
selection = state.current()
# One threshold for the whole page: the audit's numbers, its cards and the store block all read this slider (it starts at the
# sidebar's, moved into the range the audit keeps pairs for).
threshold = st.slider(
    THRESHOLD_LABEL,
    min_value=FLOOR,
    max_value=0.99,
    value=widgets.saved("yc_threshold", min(0.99, max(FLOOR, float(selection.threshold)))),
    step=0.01,
    key="yc_threshold",
    on_change=widgets.persist,
    args=("yc_threshold",),
    help="Pairs scoring above it are close; it applies to everything on this page, the store block too. Moving it filters the one "
    f"audit (pairs are kept from {FLOOR:.2f} up): nothing is encoded again.",
)
stores_ui.connect_store("yc", "audit", dataclasses.replace(selection, threshold=threshold), queries[1] if queries else [])
if corpus is None:
    st.info("Upload a corpus, or use the shipped sample, to start.")
else:
    name, passages, notes = corpus
    query_texts = queries[1] if queries else []
    st.caption(
        f"Corpus: {widgets.md_escape(name)} · {len(passages):,} passages"
        + (f" · queries: {widgets.md_escape(queries[0])} · {len(query_texts):,}" if queries else "")
    )
    for note in (*notes, *(queries[2] if queries else ())):
        st.info(widgets.md_escape(note))
    if not selection.models:
        st.warning("Select at least one model in the sidebar.")
    else:
        clicked = st.button(RUN_LABEL, type="primary")
        # A long audit says how long before it starts (it took 90 s with no word of it): encoding the texts not cached.
        progress.expected_caption(selection.models, [*passages, *query_texts], selection.options, always=True)
        if clicked:
            held = uploads.kept(KEY["corpus"])
            _run(passages, query_texts, selection, threshold, (name, held.data if held and held.name == name else None))
if ss.get("yc_run_error"):
    st.error(f"{widgets.md_escape(ss['yc_run_error'].rstrip('.'))}.", icon="⛔")
state.show_errors("your_corpus")

key = ss.get("yc_audit_key")
result = resources.stored_audit(key) if key is not None else None
if key is not None and result is not None:
    summary, pairs, said = resources.audit_risk(key, threshold)
    st.header("Findings")
    widgets.finding([said.lead])
    widgets.table(said.words_table(), "your-corpus-findings")
    widgets.finding(list(said.notes))
    st.header("The risk in numbers")
    st.caption(
        "Per model and failure mode: confusable twin pairs above the threshold and the share of passages with at least one, "
        "with a 95% bootstrap interval (passages resampled). With queries: the share whose top 5 holds a passage and its twin, "
        "and the share whose first passage has its twin right there."
    )
    # On screen what the finding needs, in words (the fifteen columns of the summary ran off a 1280 px screen); the
    # download holds every one of them, typed.
    shown = summary if result.queries else summary.drop(columns=[c for c in QUERY_COLUMNS if c in summary.columns])
    screen = risk_words(shown.assign(**{constants.COL_MODEL: shown[constants.COL_MODEL].map(state.short)}), said.judged)
    widgets.table(screen, "your-corpus-risk", download=summary)
    curve = resources.audit_curve(key)
    widgets.chart(audit_ui.twin_curve_figure(curve, threshold), curve, "your corpus twin share curve")
    st.header("The map")
    twins_now = pairs[pairs["kind"] == KIND_TWIN]
    mapped = [m for m in result.models if m in result.coords]
    if mapped:
        model = st.selectbox("Model", mapped, format_func=state.short, key="yc_map_model") if len(mapped) > 1 else mapped[0]
        st.caption(
            f"Each point is a passage, placed by {projection.METHOD} of {widgets.md_escape(state.short(model))}'s vectors (a linear "
            "projection: "
            "umap-learn is not installed here). Lines join confusable twins above the threshold, coloured by mode; "
            "they come from the exact cosines, not from distances on the map."
        )
        audit_ui.corpus_map(
            result.coords[model],
            twins_now[twins_now[constants.COL_MODEL] == model],
            result.passages,
            result.ids,
            projection.METHOD,
            "chart-your-corpus-map",
            resources.audit_cards(key, threshold, KIND_TWIN),
            threshold,
        )
    st.header("Close pairs, worst first")
    kind_label = st.radio("Show", list(KINDS_SHOWN), horizontal=True, key="yc_kind")
    cards = resources.audit_cards(key, threshold, KINDS_SHOWN[kind_label])
    st.caption(
        f"{len(cards):,} {kind_label} above {threshold:.2f}, each once with every model's cosine (in bold where it is above the "
        "threshold); grouped by failure mode, the highest cosine first; both texts in full, the differing words marked."
    )
    limit = st.number_input("Pairs shown", min_value=1, max_value=500, value=20, step=10, key="yc_limit")
    audit_ui.pair_cards(cards, int(limit), threshold)
    chosen = pairs[pairs["kind"] == KINDS_SHOWN[kind_label]]
    widgets.downloads(chosen.drop(columns=["index_a", "index_b"]), f"your corpus {kind_label}")

# A dedup run checked against the corpus held above: needs no model, so it stands apart from the audit.
dedup_ui.dedup_section(uploads.kept(KEY["corpus"]))
