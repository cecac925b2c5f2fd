"""The Retrieval page's pairs file: rows grouped by ``text_a`` into a retrieval suite (or a file in the suite's own
format), run and drawn as the suite is."""

from __future__ import annotations

import streamlit as st

from core import lexicon
from ui.retrieval import upload_box
from ui.retrieval.common import Source
from ui.retrieval.suite import suite_source

KIND = "pairs"


def inputs() -> Source | None:
    """The pairs file's uploader; its suite once a file parsed."""
    upload_box.suite_box(
        KIND,
        "Upload a pairs file (CSV, TSV or JSONL)",
        "text_a: the query or anchor; text_b: a passage; category: paraphrase (or positive) for the passage that should rank "
        f"first, a failure mode ({lexicon.modes_in_words(codes=True)}) for the others. "
        "A file in the retrieval suite's own format (data/README.md) is read as such.",
    )
    parsed = upload_box.parsed(KIND)
    if parsed is None:
        st.info("Upload a pairs file to start.")
        return None
    return suite_source((KIND, upload_box.digest(KIND)), parsed[0], parsed[1])
