"""The Your corpus page's dedup guard: a dedup run's file uploaded beside the corpus, what the run deletes, keep.csv.

The arithmetic is :func:`core.audit.dedup.guard_dedup`'s (the CLI's ``audit --dedup`` runs the same); this module
only lays it out.  The guard needs no model, so it runs as soon as both files are there, with or without an audit.
A file that cannot be read shows one line and leaves the previous result in place.
"""

from __future__ import annotations

import io

import pandas as pd
import streamlit as st

from core import constants
from core.audit import dedup
from core.files.errors import PairsFileError
from core.paths import PROJECT_ROOT
from core.words import word_changes
from ui import uploads, widgets

PREFIX = "yc_dedup"
UPLOAD_LABEL = "A dedup run's decisions (id,cluster_id or id,duplicate_of; CSV or Parquet)"
EXAMPLE_LABEL = "Use the shipped example (a MinHash LSH run on the sample)"
KEEP_LABEL = "⬇ keep.csv · one passage per meaning"
EXAMPLE = PROJECT_ROOT / "data" / "corpora" / "wordnet-adjectives-dedup.csv"
_RESULT, _ERROR, _SEEN = f"{PREFIX}_result", f"{PREFIX}_error", f"{PREFIX}_seen"


def _use_example() -> None:
    st.session_state[f"{PREFIX}_bytes"] = EXAMPLE.read_bytes()
    st.session_state[f"{PREFIX}_name"] = EXAMPLE.name
    st.session_state[f"{PREFIX}_example"] = True


def _example_for(corpus: dedup.IdCorpus, data: bytes) -> bytes:
    """The shipped run's rows for the passages this corpus holds (the sample is the shipped corpus's first rows)."""
    frame = pd.read_csv(io.BytesIO(data), dtype=str)
    return frame[frame["id"].isin(set(corpus.ids))].to_csv(index=False).encode("utf-8")


def _guard(corpus: uploads.Upload, upload: uploads.Upload) -> None:
    """Read both files and guard the run when either changed; a refused file keeps the previous result."""
    ss = st.session_state
    name, data = corpus.name, corpus.data
    signature = (corpus.digest, upload.digest)
    if signature == ss.get(_SEEN):
        return
    ss[_SEEN] = signature
    try:
        id_corpus = dedup.parse_id_corpus(data, name, max_rows=constants.MAX_UPLOAD_ROWS, max_mb=constants.MAX_UPLOAD_MB)
        decisions = _example_for(id_corpus, upload.data) if ss.get(f"{PREFIX}_example") and upload.name == EXAMPLE.name else upload.data
        run = dedup.parse_dedup(decisions, upload.name, id_corpus.ids, max_rows=constants.MAX_UPLOAD_ROWS, max_mb=constants.MAX_UPLOAD_MB)
        with st.spinner(f"Splitting {len(run.clusters):,} clusters by meaning"):
            guard = dedup.guard_dedup(id_corpus, run)
    except (PairsFileError, ValueError) as exc:
        ss[_ERROR] = str(exc)
        return
    ss[_ERROR] = None
    ss[_RESULT] = (name, upload.name, run.shape, guard, [*id_corpus.notes, *guard.notes])


def _side_by_side(worst: pd.DataFrame) -> None:
    for row in worst.to_dict(orient="records"):
        marks_kept, marks_removed = word_changes(str(row[dedup.COL_KEPT_TEXT]), str(row[dedup.COL_REMOVED_TEXT]))
        what = f"{row[dedup.COL_KIND]} · {str(row[dedup.COL_MODE]).replace('_', ' ')}" if row[dedup.COL_MODE] else str(row[dedup.COL_KIND])
        with st.container(border=True):
            st.caption(
                f"cluster {widgets.md_escape(row[dedup.COL_CLUSTER])} · {widgets.md_escape(what)} · the run keeps "
                f"{widgets.md_escape(row[dedup.COL_KEPT_ID])} and deletes {widgets.md_escape(row[dedup.COL_REMOVED_ID])}"
            )
            left, right = st.columns(2)
            left.markdown(widgets.marked_text(marks_kept))
            right.markdown(widgets.marked_text(marks_removed))


def dedup_section(corpus: uploads.Upload | None) -> None:
    """The page's "Check a dedup run" section for the corpus the page holds, or None."""
    ss = st.session_state
    st.header("Check a dedup run")
    st.markdown(
        "A dedup tool (MinHash LSH, SemDeDup, embedding clusters) keeps one passage per cluster without asking what differs, "
        "so it can delete a passage's **opposite** along with its copies. Upload its decisions beside the corpus (the corpus "
        "needs an `id` column): each cluster is split into groups of one meaning (near-duplicates together, twins apart), "
        "and **keep.csv** keeps one passage per meaning. No model is needed."
    )
    upload, new = uploads.uploader(UPLOAD_LABEL, f"{PREFIX}_uploader", PREFIX, dedup.DEDUP_TYPES)
    if new:
        ss[f"{PREFIX}_example"] = False
    st.button(EXAMPLE_LABEL, on_click=_use_example, help=f"{EXAMPLE.name}: how it was made is in data/corpora/README.md.")
    if corpus is None or upload is None:
        st.info("Upload a corpus with an id column above and a dedup run's file here to check what the run deletes.")
        return
    _guard(corpus, upload)
    if ss.get(_ERROR):
        kept = " The previous check is kept." if ss.get(_RESULT) else ""
        st.error(f"{widgets.md_escape(ss[_ERROR].rstrip('.'))}.{kept}", icon="⛔")
    if not ss.get(_RESULT):
        return
    corpus_name, dedup_name, shape, guard, notes = ss[_RESULT]
    st.caption(f"Corpus {widgets.md_escape(corpus_name)} · dedup run {widgets.md_escape(dedup_name)} ({shape} file)")
    for note in notes:
        st.info(widgets.md_escape(note))
    widgets.finding(dedup.dedup_findings(guard))
    st.download_button(
        KEEP_LABEL,
        guard.keep_frame().to_csv(index=False).encode("utf-8"),
        file_name=dedup.KEEP_FILE,
        mime="text/csv",
        key=f"{PREFIX}_keep",
        on_click="ignore",
    )
    st.subheader("What the run deletes, against the passage it keeps")
    widgets.results_table(
        guard.summary,
        "dedup-removals-by-kind",
        lead=tuple(dedup.SUMMARY_COLUMNS),
        column_config={"share_of_removals": st.column_config.NumberColumn("share of removals", format="percent")},
    )
    worst = guard.worst()
    if not worst.empty:
        st.subheader("The worst clusters, side by side")
        _side_by_side(worst)
    widgets.downloads(guard.removals, "dedup removals")
