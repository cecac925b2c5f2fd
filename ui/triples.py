"""A triples upload's column pickers (anchor, positive, negative columns guessed from the names), shared by Retrieval and Tune.

Reading is ``core.files.triples``; a file that does not read is one error on
the page and None, so the page keeps everything else it shows.
"""

from __future__ import annotations

import streamlit as st

from core import constants
from core.files.errors import PairsFileError
from core.files.triples import Triples, guess_triple_columns, parse_triples, triple_file_columns
from ui import widgets

HELP = (
    "One row per anchor: the anchor (anchor, query or premise), the passage that should rank first (positive, entailed, "
    "entailment) and one or more that should not (negative, contradicted, contradiction, hard_negative, or negative_1, "
    "negative_2, ...). Several negatives per anchor: one row each, or numbered columns."
)


def refused(name: str, exc: Exception) -> None:
    """One error for a file that could not be used."""
    st.error(f"Could not use {widgets.md_escape(name)}: {widgets.md_escape(str(exc).rstrip('.'))}.", icon="⛔")


def mapped_triples(name: str, data: bytes, key: str) -> Triples | None:
    """The file's columns mapped with three pickers (keyed ``{key}_anchor`` ...), parsed; None after one error.

    Args:
        name: the uploaded file's name.
        data: its bytes.
        key: a widget-key prefix unique to the page and the upload (e.g. its digest).
    """
    try:
        columns = triple_file_columns(data, name)
    except PairsFileError as exc:
        refused(name, exc)
        return None
    guess = guess_triple_columns(columns)
    c1, c2, c3 = st.columns(3)
    first_anchor = columns.index(str(guess["anchor"])) if guess["anchor"] else 0
    first_positive = columns.index(str(guess["positive"])) if guess["positive"] else min(1, len(columns) - 1)
    anchor = c1.selectbox("Anchor (query) column", columns, index=first_anchor, key=f"{key}_anchor")
    positive = c2.selectbox("Positive column", columns, index=first_positive, key=f"{key}_positive")
    negatives = c3.multiselect(
        "Negative column(s)",
        columns,
        default=list(guess["negative"] or []),
        key=f"{key}_negative",
        help="Several columns: the wide format (negative_1, negative_2, ...).",
    )
    try:
        triples = parse_triples(
            data, name, {constants.COL_ANCHOR: anchor, constants.COL_POSITIVE: positive, constants.COL_NEGATIVE: negatives}
        )
    except PairsFileError as exc:
        refused(name, exc)
        return None
    st.caption(f"{widgets.md_escape(name)}: {triples.n_rows} row(s), {len(triples.frame)} (anchor, positive, negative) triple(s)")
    for note in triples.notes:
        st.info(widgets.md_escape(note), icon="ℹ️")
    return triples
